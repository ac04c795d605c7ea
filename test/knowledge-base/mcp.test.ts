// Locks in the knowledge base for assistants: search_knowledge_base over MCP (ranked hits with snippets, filters, input bounds), articles as MCP resources (the listing shows the published AI-context articles, any article reads by URI, another organization's does not), and the aiContextArticles lookup other areas ground answers in.
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { aiContextArticles } from '../../tools/knowledge-base/lookups.ts';
import { fileTest } from '../fixtures/file-test.ts';
import { type InputOf, readOutput, type TestContext, type TestOrg, TOOL } from '../fixtures/index.ts';
import { bearer, ERAS, envelopeOf, serveMcpForFile } from '../mcp-clients.ts';

const readResult = z.object({
  contents: z.array(z.object({ uri: z.string(), mimeType: z.string(), text: z.string() })),
});
const listResult = z.object({
  resources: z.array(z.object({ uri: z.string(), name: z.string(), mimeType: z.string() })),
  nextCursor: z.string().optional(),
});
const templatesResult = z.object({ resourceTemplates: z.array(z.object({ uriTemplate: z.string() })) });
const protocolError = z.looseObject({ code: z.number() });

async function create(t: TestContext, org: TestOrg, body: Partial<InputOf<'create_knowledge_base_article'>>) {
  const res = await t.request('POST', '/api/v1/knowledge-base', {
    token: org.token,
    body: { title: 'Untitled', body_html: '<p>Nothing yet.</p>', ...body },
  });
  return (await readOutput(res, TOOL.create_knowledge_base_article, 201)).article;
}

const test = fileTest()
  .extend('mcpUrl', { scope: 'file' }, serveMcpForFile)
  /** A small knowledge base in `org`, and MCP keys of its owner. */
  .extend('kb', { scope: 'file' }, async ({ t, org }) => {
    const refunds = await create(t, org, {
      title: 'Refund policy',
      body_html:
        '<h2>Refunds</h2><p>Customers may ask for a refund within 30 days of purchase. Write to <a href="mailto:billing@example.com">billing</a>.</p>',
      status: 'published',
      is_ai_context: true,
    });
    const shipping = await create(t, org, {
      title: 'Shipping times',
      body_html: '<p>Orders ship in two days; a refund of shipping costs is not possible.</p>',
      status: 'published',
      is_ai_context: true,
      sort_order: -1,
    });
    const draft = await create(t, org, {
      title: 'Refund exceptions (draft)',
      body_html: '<p>Internal notes.</p>',
      is_ai_context: true,
    });
    const notContext = await create(t, org, {
      title: 'Office party',
      body_html: '<p>Friday.</p>',
      status: 'published',
    });
    const german = await create(t, org, {
      title: 'Rückerstattung',
      body_html: '<p>Eine Erstattung (refund) ist innerhalb von 30 Tagen möglich.</p>',
      status: 'published',
      is_ai_context: true,
      locale: 'de-DE',
      translation_of: refunds._id,
    });
    const reader = (await t.createPat(org.orgId, org.ownerId, ['mcp:read'])).token;
    return { refunds, shipping, draft, notContext, german, reader };
  });

describe.each(ERAS)('$label', (era) => {
  test('search_knowledge_base answers ranked hits with snippets', async ({ mcpUrl, kb, org }) => {
    const client = await era.connect(mcpUrl, { ...bearer(org.token), 'x-mcp-toolsets': 'knowledge_base' });
    try {
      const result = await client.callTool('search_knowledge_base', { query: 'refund' });
      expect(result.isError).toBeFalsy();
      const out = TOOL.search_knowledge_base.output.parse(result.structuredContent);
      // Title matches first, then the body-only match.
      expect(out.results.map((hit) => hit.id).slice(0, 2)).toEqual([kb.refunds._id, kb.draft._id]);
      expect(out.results.map((hit) => hit.id)).toContain(kb.shipping._id);
      expect(out.results.map((hit) => hit.id)).not.toContain(kb.notContext._id);
      const [top, second] = out.results;
      expect(top?.rank).toBeGreaterThan(second?.rank ?? Number.POSITIVE_INFINITY);
      expect(top?.snippet).toContain('refund within 30 days');
      expect(top?.snippet).not.toMatch(/[<>]/);
      expect(out.count).toBe(out.results.length);

      const published = TOOL.search_knowledge_base.output.parse(
        (
          await client.callTool('search_knowledge_base', {
            query: 'refund',
            status: 'published',
            locale: 'en',
          })
        ).structuredContent,
      );
      expect(published.results.map((hit) => hit.id)).toEqual([kb.refunds._id, kb.shipping._id]);
      const one = TOOL.search_knowledge_base.output.parse(
        (await client.callTool('search_knowledge_base', { query: 'refund', limit: 1 })).structuredContent,
      );
      expect(one.results).toHaveLength(1);

      for (const args of [{}, { query: '' }, { query: 'x'.repeat(201) }, { query: 'refund', limit: 51 }]) {
        const refused = await client.callTool('search_knowledge_base', args);
        expect(refused.isError, JSON.stringify(args)).toBe(true);
        expect(envelopeOf(refused).code).toBe('validation_failed');
      }
    } finally {
      await client.close();
    }
  });

  test('lists the published AI-context articles as resources and reads any article by URI', async ({
    mcpUrl,
    kb,
  }) => {
    const client = await era.connect(mcpUrl, bearer(kb.reader));
    try {
      const { resourceTemplates } = templatesResult.parse(await client.listResourceTemplates());
      expect(resourceTemplates.map((template) => template.uriTemplate)).toContain(
        'crm://knowledge-base/{id}',
      );
      const { resources } = listResult.parse(await client.listResources());
      const articles = resources.filter((resource) => resource.uri.startsWith('crm://knowledge-base/'));
      expect(new Set(articles.map((resource) => resource.uri))).toEqual(
        new Set([kb.refunds._id, kb.shipping._id, kb.german._id].map((id) => `crm://knowledge-base/${id}`)),
      );
      expect(articles.map((resource) => resource.name)).toContain('Refund policy');

      // Any article reads by its URI, drafts too: the body as sanitized HTML and as plain text.
      for (const article of [kb.refunds, kb.draft]) {
        const uri = `crm://knowledge-base/${article._id}`;
        const { contents } = readResult.parse(await client.readResource(uri));
        expect(contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
        const body = TOOL.get_knowledge_base_article.output.parse(JSON.parse(contents[0]?.text ?? ''));
        expect(body.article).toMatchObject({ _id: article._id, body_html: article.body_html });
        expect(body.article.body_text).toBe(article.body_text);
      }
    } finally {
      await client.close();
    }
  });

  test("answers resource-not-found for another organization's article", async ({ t, mcpUrl, kb, other }) => {
    const foreign = await create(t, other, {
      title: 'Foreign secret',
      status: 'published',
      is_ai_context: true,
    });
    const client = await era.connect(mcpUrl, bearer(kb.reader));
    try {
      const error = await client.readResource(`crm://knowledge-base/${foreign._id}`).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(protocolError.parse(error).code).toBe(-32602);
      expect(JSON.stringify(error)).not.toContain('Foreign secret');
      const { resources } = listResult.parse(await client.listResources());
      expect(resources.map((resource) => resource.name)).not.toContain('Foreign secret');
    } finally {
      await client.close();
    }
  });
});

test('aiContextArticles gives other areas the published AI-context articles as plain text', async ({
  t,
  org,
  other,
  kb,
}) => {
  const db = t.services.db.system;
  const all = await aiContextArticles(db, org.orgId, { limit: 10 });
  expect(all.map((a) => a.id)).toEqual([kb.shipping._id, kb.german._id, kb.refunds._id]);
  expect(all.find((a) => a.id === kb.refunds._id)).toEqual({
    id: kb.refunds._id,
    title: 'Refund policy',
    locale: 'en',
    text: 'Refunds\nCustomers may ask for a refund within 30 days of purchase. Write to billing.',
  });
  expect((await aiContextArticles(db, org.orgId, { locale: 'de' })).map((a) => a.id)).toEqual([
    kb.german._id,
  ]);
  expect((await aiContextArticles(db, org.orgId, { locale: 'en-US' })).map((a) => a.id)).toEqual([
    kb.shipping._id,
    kb.refunds._id,
  ]);
  expect(await aiContextArticles(db, org.orgId, { locale: '%' })).toEqual([]);
  expect(await aiContextArticles(db, org.orgId, { limit: 1 })).toHaveLength(1);
  // Another organization's are its own (the resource tests put some there).
  const theirs = await aiContextArticles(db, other.orgId);
  expect(theirs.map((a) => a.id)).not.toContain(kb.refunds._id);
  expect(theirs.every((a) => a.title === 'Foreign secret')).toBe(true);
  expect(await aiContextArticles(db, (await t.createOrg()).orgId)).toEqual([]);
});
