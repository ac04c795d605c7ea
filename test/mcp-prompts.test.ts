// Locks in the MCP prompts on both protocol eras with the official clients: prompts/list with each
// prompt's arguments (and filtered by what the caller may read), prepare_call, draft_follow_up and
// weekly_pipeline_review grounded in the records they name (embedded as crm:// resources and JSON),
// and clear -32602 refusals for unknown ids, other organizations' ids and bad arguments.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RoleTable } from '../core/access.ts';
import type { CallContext } from '../core/invoke.ts';
import { definePrompt } from '../core/prompts.ts';
import { visiblePrompts } from '../mcp/prompts.ts';
import { readableResources } from '../mcp/resources.ts';
import { CATALOGUE } from '../tools/index.ts';
import { fileTest } from './fixtures/file-test.ts';
import { createContact, createLead, createOpportunity, createTask, logActivity } from './fixtures/records.ts';
import { bearer, ERAS, serveMcpForFile } from './mcp-clients.ts';

const promptsResult = z.object({
  prompts: z.array(
    z.object({
      name: z.string(),
      title: z.string().optional(),
      description: z.string().optional(),
      arguments: z.array(
        z.object({ name: z.string(), description: z.string().optional(), required: z.boolean().optional() }),
      ),
    }),
  ),
});
const content = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({
    type: z.literal('resource'),
    resource: z.object({ uri: z.string(), mimeType: z.string().optional(), text: z.string() }),
  }),
]);
const getResult = z.object({
  description: z.string().optional(),
  messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content })),
});
const protocolError = z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() });

async function rejection(promise: Promise<unknown>): Promise<z.output<typeof protocolError>> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return protocolError.parse(err);
}

/** Everything a prompt answered, as one text: its texts and embedded records. */
function allText(result: z.output<typeof getResult>): string {
  return result.messages
    .map(({ content: block }) =>
      block.type === 'text' ? block.text : `${block.resource.uri} ${block.resource.text}`,
    )
    .join('\n');
}

function daysFromNow(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

const test = fileTest({ plan: 'enterprise' })
  .extend('mcpUrl', { scope: 'file' }, serveMcpForFile)
  .extend('records', { scope: 'file' }, async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Initech Prompts' });
    const contact = await createContact(t, org, { lead_id: lead._id, name: 'Bill Lumbergh' });
    const member = await t.createUser(org.orgId, 'member');
    const soon = await createOpportunity(t, org, {
      lead_id: lead._id,
      value: 4200,
      pipeline_stage: 'Proposal sent',
      expected_close_date: daysFromNow(5),
      owner_id: org.ownerId,
    });
    const theirs = await createOpportunity(t, org, {
      lead_id: lead._id,
      value: 900,
      pipeline_stage: 'Discovery',
      expected_close_date: daysFromNow(10),
      owner_id: member.userId,
    });
    const later = await createOpportunity(t, org, {
      lead_id: lead._id,
      value: 77,
      pipeline_stage: 'Far off',
      expected_close_date: daysFromNow(200),
      owner_id: org.ownerId,
    });
    await logActivity(t, org, { lead_id: lead._id, note: 'Asked about TPS reports' });
    await createTask(t, org, { lead_id: lead._id, text: 'Send the cover sheet memo' });
    const key = (await t.createPat(org.orgId, org.ownerId, ['mcp:read'])).token;
    return { lead, contact, soon, theirs, later, key };
  })
  .extend('otherLead', { scope: 'file' }, async ({ t, other }) =>
    createLead(t, other, { name: 'Elsewhere Inc' }),
  );

describe.each(ERAS)('$label', (era) => {
  test('lists the prompts with their arguments', async ({ mcpUrl, records }) => {
    const client = await era.connect(mcpUrl, bearer(records.key));
    try {
      const { prompts } = promptsResult.parse(await client.listPrompts());
      const byName = new Map(prompts.map((prompt) => [prompt.name, prompt]));
      expect([...byName.keys()].sort()).toEqual([
        'draft_follow_up',
        'prepare_call',
        'weekly_pipeline_review',
      ]);
      expect(byName.get('prepare_call')?.arguments).toEqual([
        expect.objectContaining({ name: 'lead_id', required: true }),
      ]);
      expect(byName.get('draft_follow_up')?.arguments.map((arg) => [arg.name, arg.required])).toEqual([
        ['lead_id', false],
        ['contact_id', false],
        ['goal', false],
        ['tone', false],
      ]);
      expect(
        prompts.every((prompt) => prompt.arguments.every((arg) => (arg.description ?? '').length > 0)),
      ).toBe(true);
    } finally {
      await client.close();
    }
  });

  test('prepare_call embeds the lead, its contacts, open deals, activities and open tasks', async ({
    mcpUrl,
    records,
  }) => {
    const client = await era.connect(mcpUrl, bearer(records.key));
    try {
      const result = getResult.parse(await client.getPrompt('prepare_call', { lead_id: records.lead._id }));
      const leadBlock = result.messages.find(
        (message) =>
          message.content.type === 'resource' &&
          message.content.resource.uri === `crm://leads/${records.lead._id}`,
      );
      expect(leadBlock?.content).toMatchObject({ resource: { mimeType: 'application/json' } });
      const text = allText(result);
      for (const fact of [
        'Initech Prompts',
        'Bill Lumbergh',
        'Proposal sent',
        'Asked about TPS reports',
        'Send the cover sheet memo',
      ]) {
        expect(text).toContain(fact);
      }
      expect(result.description).toContain('Initech Prompts');
    } finally {
      await client.close();
    }
  });

  test('draft_follow_up to a contact reads the contact and its lead', async ({ mcpUrl, records }) => {
    const client = await era.connect(mcpUrl, bearer(records.key));
    try {
      const result = getResult.parse(
        await client.getPrompt('draft_follow_up', {
          contact_id: records.contact._id,
          goal: 'book a demo',
          tone: 'formal',
        }),
      );
      const uris = result.messages.flatMap(({ content: block }) =>
        block.type === 'resource' ? [block.resource.uri] : [],
      );
      expect(uris).toEqual([`crm://contacts/${records.contact._id}`, `crm://leads/${records.lead._id}`]);
      const text = allText(result);
      expect(text).toContain('Bill Lumbergh');
      expect(text).toContain('book a demo');
      expect(text).toContain('formal');
    } finally {
      await client.close();
    }
  });

  test('weekly_pipeline_review shows the active deals closing within the horizon, mine or all', async ({
    mcpUrl,
    records,
  }) => {
    const client = await era.connect(mcpUrl, bearer(records.key));
    try {
      const all = allText(
        getResult.parse(await client.getPrompt('weekly_pipeline_review', { horizon_days: '30' })),
      );
      expect(all).toContain(records.soon._id);
      expect(all).toContain(records.theirs._id);
      expect(all).not.toContain(records.later._id);
      const mine = allText(
        getResult.parse(
          await client.getPrompt('weekly_pipeline_review', { horizon_days: '30', scope: 'mine' }),
        ),
      );
      expect(mine).toContain(records.soon._id);
      expect(mine).not.toContain(records.theirs._id);
    } finally {
      await client.close();
    }
  });

  test("refuses another organization's lead, an unknown id and bad arguments with -32602", async ({
    mcpUrl,
    records,
    otherLead,
  }) => {
    const client = await era.connect(mcpUrl, bearer(records.key));
    try {
      for (const id of [otherLead._id, 'a'.repeat(24)]) {
        const error = await rejection(client.getPrompt('prepare_call', { lead_id: id }));
        expect(error.code).toBe(-32602);
        expect(error.message).toMatch(/not found/i);
        expect(JSON.stringify(error)).not.toContain('Elsewhere Inc');
      }
      const malformed = await rejection(client.getPrompt('prepare_call', { lead_id: 'nope' }));
      expect(malformed.code).toBe(-32602);
      expect(malformed.data).toMatchObject({
        code: 'validation_failed',
        details: [expect.objectContaining({ field: 'lead_id' })],
      });
      const both = await rejection(
        client.getPrompt('draft_follow_up', { lead_id: records.lead._id, contact_id: records.contact._id }),
      );
      expect(both.code).toBe(-32602);
      expect(JSON.stringify(both.data)).toContain('either lead_id or contact_id');
      const badEnum = await rejection(client.getPrompt('weekly_pipeline_review', { horizon_days: '5' }));
      expect(badEnum.code).toBe(-32602);
      expect((await rejection(client.getPrompt('no_such_prompt', {}))).code).toBe(-32602);
    } finally {
      await client.close();
    }
  });
});

it('lists a prompt, and a resource, only to a caller who may use every read tool it needs', () => {
  // The catalogue's role table with one permission taken from viewers: they no longer read deals.
  const { roles } = CATALOGUE.access;
  const access: RoleTable = {
    permissions: CATALOGUE.access.permissions,
    roles: { ...roles, viewer: new Set([...roles.viewer].filter((p) => p !== 'opportunities.view')) },
  };
  const viewer: CallContext = {
    auth: {
      tokenKind: 'pat',
      orgId: '0'.repeat(24),
      userId: '1'.repeat(24),
      role: 'viewer',
      plan: 'enterprise',
      disabledFeatures: [],
      scopes: ['mcp:read'],
      credentialId: '2'.repeat(24),
    },
    surface: 'mcp',
    requestId: 'test',
    access,
    plans: CATALOGUE.plans,
  };
  expect(visiblePrompts(viewer).map((prompt) => prompt.name)).toEqual(['draft_follow_up']);
  // Deals' resources leave the list; the others a viewer reads stay (an area added later adds its own).
  const readable = readableResources(viewer).map((resource) => resource.collection);
  expect(readable).toEqual(expect.arrayContaining(['leads', 'contacts', 'invoices']));
  expect(readable).not.toContain('opportunities');
  expect(readableResources({ ...viewer, access: CATALOGUE.access }).map((r) => r.collection)).toContain(
    'opportunities',
  );
  const owner = { ...viewer, auth: { ...viewer.auth, role: 'owner' as const } };
  expect(visiblePrompts(owner)).toHaveLength(3);
});

it('refuses a prompt whose arguments are undescribed, not strings, or not its own', () => {
  const base = {
    name: 'some_prompt',
    title: 'Some prompt',
    description: 'A prompt for the test',
    reads: [],
    build: async () => ({ description: 'x', messages: [] }),
  };
  expect(() => definePrompt({ ...base, arguments: z.strictObject({ lead_id: z.string() }) })).toThrow(
    /no description/,
  );
  expect(() =>
    definePrompt({ ...base, arguments: z.strictObject({ count: z.number().describe('How many') }) }),
  ).toThrow(/must be a string or an enum/);
  expect(() =>
    definePrompt({
      ...base,
      arguments: z.strictObject({ lead_id: z.string().describe('The lead') }),
      recordArguments: { contact_id: 'contacts' },
    }),
  ).toThrow(/no argument contact_id/);
  expect(() => definePrompt({ ...base, name: 'Bad-Name', arguments: z.strictObject({}) })).toThrow(
    /snake_case/,
  );
});
