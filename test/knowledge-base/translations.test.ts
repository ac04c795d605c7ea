// Locks in knowledge-base translations: a translation names a live source of the same organization in another locale (flat, one per locale: 409), another organization's or a trashed source is the same 400 that tells nothing, the outdated flag is set by the source's title or body and cleared by rewriting the translation, and deleting or restoring a source or a translation.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { purgeTrash } from '../../core/trash.ts';
import { articleTrashTypes } from '../../tools/knowledge-base/store.ts';
import { kbArticles } from '../../tools/knowledge-base/tables.ts';
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

const PATH = '/api/v1/knowledge-base';

async function create(
  t: TestContext,
  org: TestOrg,
  body: Partial<InputOf<'create_knowledge_base_article'>> = {},
) {
  const res = await t.request('POST', PATH, {
    token: org.token,
    body: { title: 'Getting started', body_html: '<p>Welcome aboard.</p>', ...body },
  });
  return (await readOutput(res, TOOL.create_knowledge_base_article, 201)).article;
}

async function get(t: TestContext, org: TestOrg, id: string) {
  const res = await t.request('GET', `${PATH}/${id}`, { token: org.token });
  return (await readOutput(res, TOOL.get_knowledge_base_article)).article;
}

async function update(t: TestContext, org: TestOrg, id: string, body: Record<string, unknown>) {
  const res = await t.request('PATCH', `${PATH}/${id}`, { token: org.token, body });
  return (await readOutput(res, TOOL.update_knowledge_base_article)).article;
}

function post(t: TestContext, org: TestOrg, body: Record<string, unknown>) {
  return t.request('POST', PATH, {
    token: org.token,
    body: { title: 'Übersetzung', body_html: '<p>Willkommen.</p>', ...body },
  });
}

describe('translations', () => {
  test('a translation in another locale is listed on its source', async ({ t, org }) => {
    const source = await create(t, org);
    const de = await create(t, org, { title: 'Erste Schritte', locale: 'de', translation_of: source._id });
    const fr = await create(t, org, { title: 'Premiers pas', locale: 'fr', translation_of: source._id });
    expect(de).toMatchObject({ translation_of: source._id, outdated: false, translations: [] });
    expect((await get(t, org, source._id)).translations).toEqual([
      { id: de._id, locale: 'de', title: 'Erste Schritte', outdated: false },
      { id: fr._id, locale: 'fr', title: 'Premiers pas', outdated: false },
    ]);
  });

  test('refuses the source locale, a second translation in one locale, and chains', async ({ t, org }) => {
    const source = await create(t, org);
    const sameLocale = await readError(await post(t, org, { translation_of: source._id }), 400);
    expect(detailFields(sameLocale)).toEqual(['locale']);

    const de = await create(t, org, { locale: 'de', translation_of: source._id });
    const twice = await readError(await post(t, org, { locale: 'de', translation_of: source._id }), 409);
    expect(twice.code).toBe('conflict');
    expect(detailFields(twice)).toEqual(['locale']);
    // Moving another translation onto a taken locale is the same conflict.
    const es = await create(t, org, { locale: 'es', translation_of: source._id });
    const moved = await t.request('PATCH', `${PATH}/${es._id}`, { token: org.token, body: { locale: 'de' } });
    expect((await readError(moved, 409)).code).toBe('conflict');

    const chain = await readError(await post(t, org, { locale: 'fr', translation_of: de._id }), 400);
    expect(detailFields(chain)).toEqual(['translation_of']);
    expect(chain.message ?? JSON.stringify(chain.details)).toContain(source._id);

    // A source cannot become a translation, nor name itself.
    const other = await create(t, org, { locale: 'it' });
    for (const [id, target] of [
      [source._id, other._id],
      [other._id, other._id],
    ] as const) {
      const res = await t.request('PATCH', `${PATH}/${id}`, {
        token: org.token,
        body: { translation_of: target },
      });
      expect(detailFields(await readError(res, 400))).toEqual(['translation_of']);
    }
    // Nor move to the locale one of its translations holds.
    const relocated = await t.request('PATCH', `${PATH}/${source._id}`, {
      token: org.token,
      body: { locale: 'de' },
    });
    expect(detailFields(await readError(relocated, 400))).toEqual(['locale']);
  });

  test('two translations into one locale at once: one is created, the other is 409', async ({ t, org }) => {
    const source = await create(t, org);
    const answers = await Promise.all(
      ['Eins', 'Zwei'].map((title) => post(t, org, { title, locale: 'de', translation_of: source._id })),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([201, 409]);
    expect((await get(t, org, source._id)).translations).toHaveLength(1);
  });

  test("answers the same 400 for another organization's, an unknown and a trashed source", async ({
    t,
    org,
    other,
  }) => {
    const foreign = await create(t, other, { title: 'Confidential foreign title' });
    const trashed = await create(t, org, { title: 'Gone' });
    expect((await t.request('DELETE', `${PATH}/${trashed._id}`, { token: org.token })).status).toBe(200);
    const answers: string[] = [];
    for (const id of [foreign._id, 'f'.repeat(24), trashed._id]) {
      const error = await readError(await post(t, org, { locale: 'de', translation_of: id }), 400);
      expect(detailFields(error)).toEqual(['translation_of']);
      expect(JSON.stringify(error)).not.toContain('Confidential');
      answers.push(JSON.stringify(error.details));
    }
    expect(new Set(answers).size).toBe(1);
  });

  test('flags a translation outdated when its source title or body changes, and clears it when rewritten', async ({
    t,
    org,
  }) => {
    const source = await create(t, org);
    const de = await create(t, org, { locale: 'de', translation_of: source._id });
    // Other fields of the source leave the translation current.
    await update(t, org, source._id, { tags: ['intro'], sort_order: 2, status: 'published' });
    expect((await get(t, org, de._id)).outdated).toBe(false);
    // Sending the same title changes nothing.
    await update(t, org, source._id, { title: source.title });
    expect((await get(t, org, de._id)).outdated).toBe(false);

    await update(t, org, source._id, { body_html: '<p>Welcome aboard, again.</p>' });
    expect((await get(t, org, de._id)).outdated).toBe(true);
    expect((await get(t, org, source._id)).translations).toEqual([
      expect.objectContaining({ id: de._id, outdated: true }),
    ]);
    // Publishing the translation does not make it current; rewriting it does.
    expect((await update(t, org, de._id, { status: 'published' })).outdated).toBe(true);
    expect((await update(t, org, de._id, { body_html: '<p>Willkommen, wieder.</p>' })).outdated).toBe(false);

    await update(t, org, source._id, { title: 'First steps' });
    expect((await get(t, org, de._id)).outdated).toBe(true);
    expect((await update(t, org, de._id, { title: 'Erste Schritte' })).outdated).toBe(false);
    // outdated is read-only.
    const res = await t.request('PATCH', `${PATH}/${de._id}`, { token: org.token, body: { outdated: true } });
    expect(res.status).toBe(400);
  });

  test('detaching a translation makes it a source of its own', async ({ t, org }) => {
    const source = await create(t, org);
    const de = await create(t, org, { locale: 'de', translation_of: source._id });
    await update(t, org, source._id, { title: 'Changed' });
    expect(await update(t, org, de._id, { translation_of: null })).toMatchObject({
      translation_of: null,
      outdated: false,
    });
    expect((await get(t, org, source._id)).translations).toEqual([]);
  });

  test('deleting a source keeps its translations; restoring brings the pair back', async ({ t, org }) => {
    const source = await create(t, org);
    const de = await create(t, org, { locale: 'de', translation_of: source._id });
    expect((await t.request('DELETE', `${PATH}/${source._id}`, { token: org.token })).status).toBe(200);
    expect(await get(t, org, de._id)).toMatchObject({ translation_of: source._id });
    // No new translation of a trashed source.
    const refused = await readError(await post(t, org, { locale: 'fr', translation_of: source._id }), 400);
    expect(detailFields(refused)).toEqual(['translation_of']);
    expect(
      (await t.request('POST', `/api/v1/trash/${source._id}/restore`, { token: org.token })).status,
    ).toBe(200);
    expect((await get(t, org, source._id)).translations.map((tr) => tr.id)).toEqual([de._id]);
  });

  test('a source purged from the trash for good leaves its translations on their own', async ({ t, org }) => {
    const source = await create(t, org);
    const de = await create(t, org, { locale: 'de', translation_of: source._id });
    expect((await t.request('DELETE', `${PATH}/${source._id}`, { token: org.token })).status).toBe(200);
    // Trashed long ago, so a purge with a year's retention takes it and nothing trashed by other tests.
    const longAgo = new Date(Date.now() - 2 * 365 * 86_400_000);
    const system = t.services.db.system;
    await system.update(kbArticles).set({ deletedAt: longAgo }).where(eq(kbArticles.id, source._id));
    const purged = await purgeTrash(system, articleTrashTypes, new Date(Date.now() - 365 * 86_400_000), 100);
    expect(purged).toEqual({ kb_article: 1 });
    expect(await get(t, org, de._id)).toMatchObject({ translation_of: null, outdated: false });
    const restore = await t.request('POST', `/api/v1/trash/${source._id}/restore`, { token: org.token });
    expect(restore.status).toBe(404);
  });

  test('a trashed translation frees its locale, and cannot come back while another holds it', async ({
    t,
    org,
  }) => {
    const source = await create(t, org);
    const first = await create(t, org, { locale: 'de', translation_of: source._id });
    expect((await t.request('DELETE', `${PATH}/${first._id}`, { token: org.token })).status).toBe(200);
    expect((await get(t, org, source._id)).translations).toEqual([]);
    const second = await create(t, org, { locale: 'de', translation_of: source._id });
    const restore = await t.request('POST', `/api/v1/trash/${first._id}/restore`, { token: org.token });
    expect((await readError(restore, 409)).code).toBe('conflict');
    expect((await t.request('DELETE', `${PATH}/${second._id}`, { token: org.token })).status).toBe(200);
    const again = await t.request('POST', `/api/v1/trash/${first._id}/restore`, { token: org.token });
    expect(again.status, await again.clone().text()).toBe(200);
    expect((await get(t, org, source._id)).translations.map((tr) => tr.id)).toEqual([first._id]);
  });
});
