// Locks in MCP resources on both protocol eras with the official clients: the record templates
// (crm://leads/{id}...), reading a record as the get tool's JSON, resources/list paged by cursor over
// the caller's own records, one resource-not-found error (-32602 with data.uri, on both eras) for
// unknown, malformed and other-organization ids, and that toolsets do not narrow resources.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineArea } from '../core/area.ts';
import { defineRecordResource, recordUriTemplate } from '../core/resources.ts';
import { RESOURCE_PAGE_SIZE, RESOURCE_PAGES_PER_TYPE } from '../mcp/resources.ts';
import { TOOLSETS_HEADER } from '../mcp/toolsets.ts';
import { RESOURCES, TOOL_BY_NAME } from '../tools/index.ts';
import { leadResource } from '../tools/leads/resources.ts';
import { fileTest } from './fixtures/file-test.ts';
import { createInvoice } from './fixtures/invoices.ts';
import { createContact, createLead, createOpportunity } from './fixtures/records.ts';
import { json } from './helpers.ts';
import { bearer, ERAS, postMcp, serveMcpForFile } from './mcp-clients.ts';

const templatesResult = z.object({
  resourceTemplates: z.array(
    z.object({
      uriTemplate: z.string(),
      name: z.string(),
      title: z.string().optional(),
      mimeType: z.string(),
    }),
  ),
});
const readResult = z.object({
  contents: z.array(z.object({ uri: z.string(), mimeType: z.string(), text: z.string() })),
});
const listResult = z.object({
  resources: z.array(z.object({ uri: z.string(), name: z.string(), mimeType: z.string() })),
  nextCursor: z.string().optional(),
});
const protocolError = z.looseObject({ code: z.number(), data: z.unknown().optional() });

/** The JSON-RPC error a client call rejected with. */
async function rejection(promise: Promise<unknown>): Promise<z.output<typeof protocolError>> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return protocolError.parse(err);
}

/** Leads in the paging organization: one full page and some. */
const PAGING_LEADS = RESOURCE_PAGE_SIZE + 7;

const test = fileTest({ plan: 'enterprise' })
  .extend('mcpUrl', { scope: 'file' }, serveMcpForFile)
  /** One record of each type in `org`, and a read-only MCP key of its owner. */
  .extend('records', { scope: 'file' }, async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Globex Resources' });
    const contact = await createContact(t, org, { lead_id: lead._id, name: 'Hank Scorpio' });
    const opportunity = await createOpportunity(t, org, { lead_id: lead._id, value: 1200 });
    const invoice = await createInvoice(t, org, { lead_id: lead._id });
    const key = (await t.createPat(org.orgId, org.ownerId, ['mcp:read'])).token;
    return { lead, contact, opportunity, invoice, key };
  })
  .extend('otherLead', { scope: 'file' }, async ({ t, other }) => createLead(t, other, { name: 'Not yours' }))
  /** An organization with PAGING_LEADS leads and nothing else, and its owner's MCP key. */
  .extend('paging', { scope: 'file' }, async ({ t }) => {
    const pagingOrg = await t.createOrg();
    const items = Array.from({ length: PAGING_LEADS }, (_, i) => ({ name: `Paged lead ${i}` }));
    const res = await t.request('POST', '/api/v1/leads/bulk', { token: pagingOrg.token, body: { items } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ created: PAGING_LEADS });
    return { key: (await t.createPat(pagingOrg.orgId, pagingOrg.ownerId, ['mcp:read'])).token };
  });

/** One JSON-RPC request over plain HTTP (2025 stateless), its result or error. */
async function rpc(url: URL, token: string, method: string, params: Record<string, unknown>) {
  const res = await postMcp(url, bearer(token), { jsonrpc: '2.0', id: 1, method, params });
  const text = await res.text();
  const data = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5))
        .at(-1)
    : text;
  return z
    .looseObject({ result: z.unknown().optional(), error: protocolError.optional() })
    .parse(JSON.parse(data ?? ''));
}

test('resources/list pages by the kernel page size, then goes on to the next record type', async ({
  mcpUrl,
  paging,
}) => {
  const first = listResult.parse((await rpc(mcpUrl, paging.key, 'resources/list', {})).result);
  expect(first.resources).toHaveLength(RESOURCE_PAGE_SIZE);
  expect(first.nextCursor).toBeDefined();
  const second = listResult.parse(
    (await rpc(mcpUrl, paging.key, 'resources/list', { cursor: first.nextCursor })).result,
  );
  expect(second.resources).toHaveLength(PAGING_LEADS - RESOURCE_PAGE_SIZE);
  // The organization has no contacts, opportunities or invoices: what follows the leads is empty.
  const rest = listResult.parse(
    (await rpc(mcpUrl, paging.key, 'resources/list', { cursor: second.nextCursor })).result,
  );
  expect(rest).toEqual({ resources: [] });
});

test('resources/list shows the most recently changed records of each type, no more', async ({
  t,
  mcpUrl,
}) => {
  const crowded = await t.createOrg();
  const cap = RESOURCE_PAGE_SIZE * RESOURCE_PAGES_PER_TYPE;
  // Three bulk requests (at most 100 leads each), oldest first.
  for (const batch of [0, 1, 2]) {
    const items = Array.from({ length: 100 }, (_, i) => ({ name: `Batch ${batch} lead ${i}` }));
    const res = await t.request('POST', '/api/v1/leads/bulk', { token: crowded.token, body: { items } });
    expect(res.status).toBe(200);
  }
  const key = (await t.createPat(crowded.orgId, crowded.ownerId, ['mcp:read'])).token;
  const names: string[] = [];
  let cursor: string | undefined;
  for (let requests = 0; requests < 20; requests += 1) {
    const answer = await rpc(mcpUrl, key, 'resources/list', cursor ? { cursor } : {});
    expect(answer.error, `request ${requests + 1}`).toBeUndefined();
    const page = listResult.parse(answer.result);
    names.push(...page.resources.map((resource) => resource.name));
    cursor = page.nextCursor;
    if (cursor === undefined) break;
  }
  expect(cursor).toBeUndefined();
  expect(names).toHaveLength(cap);
  expect(names.filter((name) => name.startsWith('Batch 2 '))).toHaveLength(100);
  expect(names.some((name) => name.startsWith('Batch 0 '))).toBe(false);
});

describe.each(ERAS)('$label', (era) => {
  test('lists one template per record type, JSON, whatever the toolsets', async ({ mcpUrl, records }) => {
    // `core` alone leaves out the billing toolset's invoice tools; resources are not narrowed by toolsets.
    const client = await era.connect(mcpUrl, { ...bearer(records.key), [TOOLSETS_HEADER]: 'core' });
    try {
      const { resourceTemplates } = templatesResult.parse(await client.listResourceTemplates());
      // One per record type the areas declare, in area order; the first ones for the record.
      expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(
        RESOURCES.map((resource) => recordUriTemplate(resource.collection)),
      );
      expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(
        expect.arrayContaining([
          'crm://leads/{id}',
          'crm://contacts/{id}',
          'crm://opportunities/{id}',
          'crm://invoices/{id}',
        ]),
      );
      expect(new Set(resourceTemplates.map((template) => template.mimeType))).toEqual(
        new Set(['application/json']),
      );
    } finally {
      await client.close();
    }
  });

  test('reads each record type as its get tool answers it', async ({ mcpUrl, records }) => {
    const client = await era.connect(mcpUrl, bearer(records.key));
    try {
      const cases = [
        ['leads', records.lead._id, 'lead', 'Globex Resources'],
        ['contacts', records.contact._id, 'contact', 'Hank Scorpio'],
        ['opportunities', records.opportunity._id, 'opportunity', undefined],
        ['invoices', records.invoice._id, 'invoice', undefined],
      ] as const;
      for (const [collection, id, key, name] of cases) {
        const uri = `crm://${collection}/${id}`;
        const { contents } = readResult.parse(await client.readResource(uri));
        expect(contents).toHaveLength(1);
        expect(contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
        const body = z
          .record(z.string(), z.looseObject({ _id: z.string() }))
          .parse(JSON.parse(contents[0]?.text ?? ''));
        expect(body[key]?._id).toBe(id);
        if (name) expect(body[key]?.name).toBe(name);
      }
    } finally {
      await client.close();
    }
  });

  test("answers resource-not-found for another organization's, unknown and malformed ids alike", async ({
    mcpUrl,
    records,
    otherLead,
  }) => {
    const client = await era.connect(mcpUrl, bearer(records.key));
    try {
      for (const uri of [
        `crm://leads/${otherLead._id}`,
        `crm://leads/${'f'.repeat(24)}`,
        'crm://leads/not-an-id',
        `crm://unicorns/${records.lead._id}`,
      ]) {
        const error = await rejection(client.readResource(uri));
        expect(error.code, uri).toBe(-32602);
        expect(error.data, uri).toMatchObject({ uri });
        expect(JSON.stringify(error), uri).not.toContain('Not yours');
      }
    } finally {
      await client.close();
    }
  });

  test("pages through the caller's own records by cursor, most recently changed first", async ({
    mcpUrl,
    paging,
  }) => {
    const client = await era.connect(mcpUrl, bearer(paging.key));
    try {
      // The 2.x client follows the cursors itself when given none; the 1.x client returns one page.
      const first = listResult.parse(await client.listResources());
      const uris = first.resources.map((resource) => resource.uri);
      let cursor = first.nextCursor;
      for (let pages = 0; cursor !== undefined && pages < 10; pages += 1) {
        const page = listResult.parse(await client.listResources(cursor));
        uris.push(...page.resources.map((resource) => resource.uri));
        cursor = page.nextCursor;
      }
      expect(cursor).toBeUndefined();
      expect(uris).toHaveLength(PAGING_LEADS);
      expect(new Set(uris).size).toBe(PAGING_LEADS);
      expect(uris.every((uri) => /^crm:\/\/leads\/[0-9a-f]{24}$/.test(uri))).toBe(true);
      expect(first.resources[0]?.name).toMatch(/^Paged lead \d+$/);
      expect(first.resources[0]?.mimeType).toBe('application/json');
    } finally {
      await client.close();
    }
  });

  test('refuses a cursor it did not give with -32602', async ({ mcpUrl, records }) => {
    const client = await era.connect(mcpUrl, bearer(records.key));
    try {
      expect((await rejection(client.listResources('bm90IGEgY3Vyc29y'))).code).toBe(-32602);
    } finally {
      await client.close();
    }
  });
});

it("refuses a resource built on a write tool, on a list tool that cannot page or take its list filter, or on another area's tools", () => {
  expect(() => defineRecordResource({ ...leadResource, get: TOOL_BY_NAME.create_lead })).toThrow(
    /not a read tool/,
  );
  expect(() => defineRecordResource({ ...leadResource, list: TOOL_BY_NAME.get_lead })).toThrow(
    /takes no `page`/,
  );
  expect(() => defineRecordResource({ ...leadResource, collection: 'Leads!' })).toThrow(/kebab-case/);
  expect(() => defineRecordResource({ ...leadResource, listFilter: { no_such_filter: true } })).toThrow(
    /refuses the list filter/,
  );
  expect(() =>
    defineArea({
      name: 'borrower',
      tools: [],
      routes: [],
      tags: {},
      permissions: [],
      events: [],
      toolsets: [],
      resources: [leadResource],
    }),
  ).toThrow(/reads get_lead, not one of its tools/);
});
