// Locks in knowledge-base articles over REST: create and read back (body sanitized), each bound a 400 naming its field, PUT/PATCH change only what is sent, the status machine, filters and ranked full-text search, trash and restore, roles, content scopes and another organization's 404.
import { describe, expect } from 'vitest';
import {
  detailFields,
  type InputOf,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
  test,
} from '../fixtures/index.ts';
import { problemsOf } from './html-checks.ts';
import { OWASP_XSS_VECTORS } from './owasp-xss-vectors.ts';

const PATH = '/api/v1/knowledge-base';

type NewArticle = InputOf<'create_knowledge_base_article'>;

async function create(t: TestContext, org: TestOrg, body: Partial<NewArticle> = {}) {
  const res = await t.request('POST', PATH, {
    token: org.token,
    body: { title: 'Resetting a password', body_html: '<p>Open the settings page.</p>', ...body },
  });
  return (await readOutput(res, TOOL.create_knowledge_base_article, 201)).article;
}

async function list(t: TestContext, org: TestOrg, query = '') {
  const res = await t.request('GET', `${PATH}?limit=100${query}`, { token: org.token });
  return readOutput(res, TOOL.list_knowledge_base_articles);
}

const idsOf = (page: { articles: { _id: string }[] }) => page.articles.map((a) => a._id);

describe('creating and reading', () => {
  test('creates a draft with the defaults and reads it back', async ({ t, org }) => {
    const created = await create(t, org, {
      title: '  Billing FAQ  ',
      body_html: '<h2>Invoices</h2><p onclick="steal()">Paid <b>monthly</b>.</p><script>steal()</script>',
    });
    expect(created).toMatchObject({
      title: 'Billing FAQ',
      body_html: '<h2>Invoices</h2><p>Paid <b>monthly</b>.</p>',
      body_text: 'Invoices\nPaid monthly.',
      category: null,
      tags: [],
      status: 'draft',
      is_public: false,
      is_ai_context: false,
      sort_order: 0,
      locale: 'en',
      translation_of: null,
      outdated: false,
      translations: [],
      published_at: null,
      created_by: org.ownerId,
    });
    expect(created._id).toMatch(/^[0-9a-f]{24}$/);
    const res = await t.request('GET', `${PATH}/${created._id}`, { token: org.token });
    expect((await readOutput(res, TOOL.get_knowledge_base_article)).article).toEqual(created);
  });

  test('keeps every field sent, the locale in its usual case and each tag once', async ({ t, org }) => {
    const created = await create(t, org, {
      category: 'Billing',
      tags: ['faq', 'billing', 'faq'],
      status: 'in_review',
      is_public: true,
      is_ai_context: true,
      sort_order: -3,
      locale: 'pt-br',
    });
    expect(created).toMatchObject({
      category: 'Billing',
      tags: ['faq', 'billing'],
      status: 'in_review',
      is_public: true,
      is_ai_context: true,
      sort_order: -3,
      locale: 'pt-BR',
    });
  });

  test('needs a title and a body', async ({ t, org }) => {
    for (const [body, field] of [
      [{ body_html: '<p>x</p>' }, 'title'],
      [{ title: 'x' }, 'body_html'],
    ] as const) {
      const res = await t.request('POST', PATH, { token: org.token, body });
      expect(detailFields(await readError(res, 400))).toEqual([field]);
    }
  });

  test('refuses each value out of bounds with a 400 naming its field', async ({ t, org }) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ title: '' }, 'title'],
      [{ title: '   ' }, 'title'],
      [{ title: 'x'.repeat(501) }, 'title'],
      [{ body_html: '' }, 'body_html'],
      [{ body_html: 7 }, 'body_html'],
      [{ category: 'c'.repeat(201) }, 'category'],
      [{ category: 5 }, 'category'],
      [{ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'tags'],
      [{ tags: [''] }, 'tags.0'],
      [{ tags: ['ok', 'x'.repeat(101)] }, 'tags.1'],
      [{ tags: 'faq' }, 'tags'],
      [{ status: 'live' }, 'status'],
      [{ is_public: 'yes' }, 'is_public'],
      [{ is_ai_context: 1 }, 'is_ai_context'],
      [{ sort_order: 1.5 }, 'sort_order'],
      [{ sort_order: 2 ** 31 }, 'sort_order'],
      [{ locale: 'en-US-abcdefgh-ab' }, 'locale'],
      [{ locale: 'english' }, 'locale'],
      [{ locale: 'en_US' }, 'locale'],
      [{ locale: '' }, 'locale'],
      [{ translation_of: 'not-an-id' }, 'translation_of'],
      [{ unknown_field: true }, '(root)'],
    ];
    for (const [change, field] of cases) {
      const body = { title: 'Valid', body_html: '<p>Valid</p>', ...change };
      const res = await t.request('POST', PATH, { token: org.token, body });
      expect(detailFields(await readError(res, 400)), JSON.stringify(change)).toEqual([field]);
    }
    // The bounds themselves are accepted.
    const edge = await create(t, org, {
      title: 'x'.repeat(500),
      category: 'c'.repeat(200),
      tags: Array.from({ length: 50 }, (_, i) => `t${i}`.padEnd(100, 'x')),
      sort_order: 2 ** 31 - 1,
      locale: 'zh-Hant-TW',
    });
    expect(edge).toMatchObject({ sort_order: 2 ** 31 - 1, locale: 'zh-Hant-TW' });
    expect(edge.tags).toHaveLength(50);
  });

  test('stores and answers only the sanitized body, over create and update', async ({ t, org }) => {
    // A NUL never gets this far: the input guard refuses it with a 400 naming the field.
    const vectors = OWASP_XSS_VECTORS.filter((vector) => !vector.includes('\u0000'));
    const created = await create(t, org, { body_html: `<p>Intro</p>${vectors.join('\n')}` });
    const update = await t.request('PUT', `${PATH}/${created._id}`, {
      token: org.token,
      body: { body_html: `${vectors.slice().reverse().join('')}<p>Outro</p>` },
    });
    const updated = (await readOutput(update, TOOL.update_knowledge_base_article)).article;
    const read = await t.request('GET', `${PATH}/${created._id}`, { token: org.token });
    const stored = (await readOutput(read, TOOL.get_knowledge_base_article)).article;
    for (const html of [created.body_html, updated.body_html, stored.body_html])
      expect(problemsOf(html)).toEqual([]);
    expect(created.body_html.startsWith('<p>Intro</p>')).toBe(true);
    expect(stored).toEqual(updated);
    expect(stored.body_text).not.toMatch(/alert\(1\)<\/script/);
  });

  test('refuses a body with nothing left once sanitized, naming body_html', async ({ t, org }) => {
    for (const body_html of ['<script>alert(1)</script>', '<p></p>', '<img src="javascript:alert(1)">']) {
      const res = await t.request('POST', PATH, { token: org.token, body: { title: 'Empty', body_html } });
      const error = await readError(res, 400);
      expect(detailFields(error), body_html).toEqual(['body_html']);
      expect(error.details?.[0]?.code).toBe('empty_body');
    }
  });
});

describe('updating', () => {
  test('PUT and PATCH change only the fields sent', async ({ t, org }) => {
    const created = await create(t, org, {
      category: 'Setup',
      tags: ['a'],
      is_public: true,
      sort_order: 4,
      locale: 'de',
    });
    let before = created;
    for (const [method, change] of [
      ['PUT', { title: 'Renamed by PUT' }],
      ['PATCH', { tags: ['b', 'c'] }],
      ['PUT', { category: null, is_ai_context: true }],
      ['PATCH', { body_html: '<p>New <em>body</em></p>' }],
    ] as const) {
      const res = await t.request(method, `${PATH}/${created._id}`, { token: org.token, body: change });
      const after = (await readOutput(res, TOOL.update_knowledge_base_article)).article;
      const { updated_at: _a, ...rest } = after;
      const { updated_at: _b, ...expected } = before;
      const sent: Record<string, unknown> = { ...change };
      if ('body_html' in change) sent.body_text = 'New body';
      expect(rest, `${method} ${JSON.stringify(change)}`).toEqual({ ...expected, ...sent });
      before = after;
    }
    expect(before).toMatchObject({ title: 'Renamed by PUT', tags: ['b', 'c'], category: null, locale: 'de' });
  });

  test('refuses a bad value on update with a 400 naming its field and changes nothing', async ({
    t,
    org,
  }) => {
    const created = await create(t, org);
    for (const [change, field] of [
      [{ title: '' }, 'title'],
      [{ body_html: '<script>x</script>' }, 'body_html'],
      [{ locale: 'xx_YY' }, 'locale'],
      [{ sort_order: 'first' }, 'sort_order'],
    ] as const) {
      const res = await t.request('PUT', `${PATH}/${created._id}`, { token: org.token, body: change });
      expect(detailFields(await readError(res, 400))).toEqual([field]);
    }
    const res = await t.request('GET', `${PATH}/${created._id}`, { token: org.token });
    expect((await readOutput(res, TOOL.get_knowledge_base_article)).article).toEqual(created);
  });
});

describe('the status machine', () => {
  async function move(t: TestContext, org: TestOrg, id: string, status: string) {
    return t.request('PATCH', `${PATH}/${id}`, { token: org.token, body: { status } });
  }

  test('walks review, publishing and archiving, stamping the first publication', async ({ t, org }) => {
    const article = await create(t, org);
    const path: string[] = ['in_review', 'draft', 'published', 'archived', 'draft', 'in_review', 'published'];
    let publishedAt: string | null = null;
    for (const status of path) {
      const after = (
        await readOutput(await move(t, org, article._id, status), TOOL.update_knowledge_base_article)
      ).article;
      expect(after.status).toBe(status);
      if (status === 'published' && publishedAt === null) publishedAt = after.published_at;
      expect(after.published_at).toBe(publishedAt);
    }
    expect(publishedAt).not.toBeNull();
  });

  test('refuses a move it does not declare with invalid_transition naming status', async ({ t, org }) => {
    const article = await create(t, org);
    for (const [from, to] of [
      ['draft', 'archived'],
      ['in_review', 'archived'],
      ['archived', 'published'],
      ['archived', 'in_review'],
      ['published', 'in_review'],
    ] as const) {
      if (from !== 'draft') {
        const steps: Record<string, string[]> = {
          in_review: ['in_review'],
          published: ['published'],
          archived: ['published', 'archived'],
        };
        await move(t, org, article._id, 'draft');
        for (const step of steps[from] ?? [])
          expect((await move(t, org, article._id, step)).status).toBe(200);
      }
      const error = await readError(await move(t, org, article._id, to), 400);
      expect(error.code, `${from} -> ${to}`).toBe('invalid_transition');
      expect(detailFields(error)).toEqual(['status']);
    }
  });

  test('creates in draft, in review or published, never archived', async ({ t, org }) => {
    expect((await create(t, org, { status: 'published' })).published_at).not.toBeNull();
    const res = await t.request('POST', PATH, {
      token: org.token,
      body: { title: 'Old', body_html: '<p>Old</p>', status: 'archived' },
    });
    expect((await readError(res, 400)).code).toBe('invalid_transition');
  });
});

describe('lists and search', () => {
  test('filters by status, locale, category, tag, AI context and public flag', async ({ t }) => {
    const org = await t.createOrg();
    const a = await create(t, org, {
      title: 'A',
      status: 'published',
      category: 'Billing',
      tags: ['faq'],
      is_ai_context: true,
    });
    const b = await create(t, org, { title: 'B', locale: 'de', category: 'Setup', is_public: true });
    const c = await create(t, org, { title: 'C', tags: ['faq', 'setup'], is_public: true });
    const cases: [string, string[]][] = [
      ['&status=published', [a._id]],
      ['&status=draft', [c._id, b._id]],
      ['&locale=de', [b._id]],
      ['&locale=DE', [b._id]],
      ['&category=Billing', [a._id]],
      ['&tag=faq', [c._id, a._id]],
      ['&tag=setup', [c._id]],
      ['&is_ai_context=true', [a._id]],
      ['&is_ai_context=false', [c._id, b._id]],
      ['&is_public=true', [c._id, b._id]],
      ['&is_public=true&tag=faq', [c._id]],
    ];
    for (const [query, ids] of cases) expect(idsOf(await list(t, org, query)), query).toEqual(ids);
    const bad = await t.request('GET', `${PATH}?status=live`, { token: org.token });
    expect(detailFields(await readError(bad, 400))).toEqual(['status']);
  });

  test('orders by sort_order, then newest first; sort overrides', async ({ t }) => {
    const org = await t.createOrg();
    const first = await create(t, org, { title: 'Zeta', sort_order: 1 });
    const second = await create(t, org, { title: 'Alpha', sort_order: 1 });
    const top = await create(t, org, { title: 'Mid', sort_order: -5 });
    expect(idsOf(await list(t, org))).toEqual([top._id, second._id, first._id]);
    expect(idsOf(await list(t, org, '&sort=title'))).toEqual([second._id, top._id, first._id]);
    expect(idsOf(await list(t, org, '&sort=-sort_order'))).toEqual([second._id, first._id, top._id]);
  });

  test('searches titles and bodies by word prefix, a title match ranked above a body match', async ({
    t,
  }) => {
    const org = await t.createOrg();
    const inBody = await create(t, org, {
      title: 'Account settings',
      body_html: '<p>To change a password open your profile.</p>',
      sort_order: -10,
    });
    const inTitle = await create(t, org, {
      title: 'Password reset',
      body_html: '<p>Use the link we mail you.</p>',
    });
    await create(t, org, { title: 'Invoices', body_html: '<p>Monthly billing.</p>' });
    expect(idsOf(await list(t, org, '&search=password'))).toEqual([inTitle._id, inBody._id]);
    expect(idsOf(await list(t, org, '&search=passw'))).toEqual([inTitle._id, inBody._id]);
    expect(idsOf(await list(t, org, '&search=profile'))).toEqual([inBody._id]);
    expect(idsOf(await list(t, org, '&search=password%20mail'))).toEqual([inTitle._id]);
    expect((await list(t, org, '&search=%21%21')).total).toBe(0);
    // Without search the sort_order leads again.
    expect(idsOf(await list(t, org))[0]).toBe(inBody._id);
  });

  test('finds words of the sanitized body only, never of removed markup', async ({ t }) => {
    const org = await t.createOrg();
    await create(t, org, { title: 'Plain', body_html: '<p>Hello</p><script>var secretword = 1</script>' });
    expect((await list(t, org, '&search=secretword')).total).toBe(0);
    expect((await list(t, org, '&search=hello')).total).toBe(1);
  });
});

describe('the trash', () => {
  test('moves a deleted article to the trash and restores it', async ({ t, org }) => {
    const article = await create(t, org, { title: 'Trashed guide' });
    const del = await t.request('DELETE', `${PATH}/${article._id}`, { token: org.token });
    expect((await readOutput(del, TOOL.delete_knowledge_base_article)).message).toMatch(/trash/);
    expect((await t.request('GET', `${PATH}/${article._id}`, { token: org.token })).status).toBe(404);
    expect(idsOf(await list(t, org))).not.toContain(article._id);
    const trash = await t.request('GET', '/api/v1/trash?limit=100', { token: org.token });
    const items = (await readOutput(trash, TOOL.list_trash)).items;
    expect(items.find((item) => item._id === article._id)).toMatchObject({
      type: 'kb_article',
      name: 'Trashed guide',
    });
    const restored = await t.request('POST', `/api/v1/trash/${article._id}/restore`, { token: org.token });
    expect(restored.status).toBe(200);
    const back = await t.request('GET', `${PATH}/${article._id}`, { token: org.token });
    expect((await readOutput(back, TOOL.get_knowledge_base_article)).article.title).toBe('Trashed guide');
  });
});

describe('access', () => {
  test('a viewer reads but cannot write; a member writes but cannot delete; a manager deletes', async ({
    t,
    org,
  }) => {
    const article = await create(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    const member = await t.createUser(org.orgId, 'member');
    const manager = await t.createUser(org.orgId, 'manager');
    expect((await t.request('GET', `${PATH}/${article._id}`, { token: viewer.token })).status).toBe(200);
    expect((await t.request('GET', PATH, { token: viewer.token })).status).toBe(200);
    const refused = await t.request('POST', PATH, {
      token: viewer.token,
      body: { title: 'No', body_html: '<p>No</p>' },
    });
    expect(await readError(refused, 403)).toMatchObject({ required_permission: 'kb.create' });
    expect(
      (await t.request('PATCH', `${PATH}/${article._id}`, { token: viewer.token, body: { title: 'No' } }))
        .status,
    ).toBe(403);
    expect(
      (await t.request('PATCH', `${PATH}/${article._id}`, { token: member.token, body: { title: 'Yes' } }))
        .status,
    ).toBe(200);
    expect((await t.request('DELETE', `${PATH}/${article._id}`, { token: member.token })).status).toBe(403);
    expect((await t.request('DELETE', `${PATH}/${article._id}`, { token: manager.token })).status).toBe(200);
  });

  test('a token with read:content lists and reads, write:content writes, and neither is a default', async ({
    t,
    org,
  }) => {
    const article = await create(t, org);
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:content']);
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:content', 'write:content']);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    expect((await t.request('GET', PATH, { token: reader.token })).status).toBe(200);
    expect((await t.request('GET', `${PATH}/${article._id}`, { token: reader.token })).status).toBe(200);
    expect((await t.request('GET', `${PATH}/search?query=password`, { token: reader.token })).status).toBe(
      200,
    );
    const body = { title: 'By token', body_html: '<p>x</p>' };
    expect((await readError(await t.request('POST', PATH, { token: reader.token, body }), 403)).code).toBe(
      'scope_missing',
    );
    expect((await t.request('POST', PATH, { token: writer.token, body })).status).toBe(201);
    expect((await readError(await t.request('GET', PATH, { token: leadsOnly.token }), 403)).code).toBe(
      'scope_missing',
    );
    const key = await t.request('POST', '/api/v1/settings/api-keys', {
      token: org.token,
      body: { label: 'Defaults' },
    });
    expect((await readOutput(key, TOOL.create_api_key, 201)).key.scopes).not.toContain('read:content');
  });

  test("answers 404 for another organization's article and leaves it alone", async ({ t, org, other }) => {
    const article = await create(t, org, { title: 'Private guide' });
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { title: 'Hijacked' }],
      ['PUT', { title: 'Hijacked' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await t.request(method, `${PATH}/${article._id}`, { token: other.token, body });
      expect((await readError(res, 404)).error, method).toBe('Not found');
    }
    expect(idsOf(await list(t, other))).not.toContain(article._id);
    expect((await list(t, other, '&search=private')).total).toBe(0);
    const res = await t.request('GET', `${PATH}/${article._id}`, { token: org.token });
    expect((await readOutput(res, TOOL.get_knowledge_base_article)).article.title).toBe('Private guide');
  });
});
