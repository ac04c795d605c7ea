// The knowledge-base store: the article status machine, the record shape (with the translations of a
// source), creating and changing an article (the body sanitized, the machine's moves, the
// translation rules and the `outdated` flag), the ranked list and search, and the trash entry, on
// the record helper (core/records.ts). Rules: docs/areas/knowledge-base.md.
import { and, arrayContains, asc, desc, eq, inArray, isNull, ne, or, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { AppError, validationError } from '../../core/errors.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  type ListParams,
  newRecordStamp,
  type PagedList,
  type RecordContext,
  type SortColumn,
  sortOrder,
} from '../../core/records.ts';
import { iso, paged } from '../../core/schemas.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import { prefixTsQuery, rankOf, type SearchTerms } from '../../core/text-search.ts';
import type { TrashType } from '../../core/trash.ts';
import { cleanBody } from './sanitize.ts';
import { type KbArticleRow, kbArticles } from './tables.ts';

/** The article workflow: write, review, publish, retire; an archived article comes back as a draft. */
export const articleMachine = defineStateMachine({
  resource: 'knowledge-base article',
  field: 'status',
  states: ['draft', 'in_review', 'published', 'archived'],
  initial: 'draft',
  moves: {
    draft: { in_review: null, published: null },
    in_review: { draft: null, published: null },
    published: { archived: null, draft: null },
    archived: { draft: null },
  },
});
export type ArticleStatus = (typeof articleMachine.states)[number];

// ---------------------------------------------------------------------------------------------
// Record shape

const translationSchema = z
  .object({
    id: z.string().describe('Id of the translation (an article)'),
    locale: z.string().describe('Its locale'),
    title: z.string().describe('Its title'),
    outdated: z.boolean().describe('True when this article changed after the translation was last written'),
  })
  .describe('A live translation of this article');

export const articleSchema = z
  .object({
    _id: z.string().describe('Article id (24 hex characters)'),
    title: z.string().describe('Title'),
    body_html: z.string().describe('Body as sanitized HTML (scripts, styles and event handlers removed)'),
    body_text: z.string().describe('Body as plain text (read-only)'),
    category: z.string().nullable().describe('Category, or null'),
    tags: z.array(z.string()).describe('Tags'),
    status: articleMachine.schema.describe('Status: draft, in_review, published or archived'),
    is_public: z.boolean().describe('True when the article may be shown to the public'),
    is_ai_context: z.boolean().describe('True when assistants and voice agents ground answers in it'),
    sort_order: z.number().int().describe('Position in lists, ascending'),
    locale: z.string().describe('Language tag (BCP 47), e.g. en or pt-BR'),
    translation_of: z.string().nullable().describe('Id of the source article this one translates, or null'),
    outdated: z
      .boolean()
      .describe("True for a translation whose source's title or body changed after it (read-only)"),
    translations: z.array(translationSchema).describe("This article's live translations (a source only)"),
    published_at: z.string().nullable().describe('When it was first published (ISO 8601), or null'),
    ...auditFields('article'),
  })
  .describe('A knowledge-base article');
export type ArticleRecord = z.output<typeof articleSchema>;
type Translation = z.output<typeof translationSchema>;

function serialize(row: KbArticleRow, translations: readonly Translation[]): ArticleRecord {
  return {
    _id: row.id,
    title: row.title,
    body_html: row.bodyHtml,
    body_text: row.bodyText,
    category: row.category,
    tags: row.tags,
    status: articleMachine.parse(row.status),
    is_public: row.isPublic,
    is_ai_context: row.isAiContext,
    sort_order: row.sortOrder,
    locale: row.locale,
    translation_of: row.translationOf,
    outdated: row.outdated,
    translations: [...translations],
    published_at: iso(row.publishedAt),
    ...auditValues(row),
  };
}

/** The live translations of these source articles, by source id, in locale order. */
async function translationsOf(
  db: Executor,
  orgId: string,
  sourceIds: readonly string[],
): Promise<Map<string, Translation[]>> {
  const bySource = new Map<string, Translation[]>();
  if (sourceIds.length === 0) return bySource;
  const rows = await db
    .select({
      id: kbArticles.id,
      source: kbArticles.translationOf,
      locale: kbArticles.locale,
      title: kbArticles.title,
      outdated: kbArticles.outdated,
    })
    .from(kbArticles)
    .where(
      and(
        eq(kbArticles.orgId, orgId),
        inArray(kbArticles.translationOf, [...sourceIds]),
        isNull(kbArticles.deletedAt),
      ),
    )
    .orderBy(asc(kbArticles.locale), asc(kbArticles.id));
  for (const { source, ...translation } of rows) {
    if (source === null) continue;
    const list = bySource.get(source) ?? [];
    list.push(translation);
    bySource.set(source, list);
  }
  return bySource;
}

/** Rows as records, their translations read in one query. */
async function serializeArticles(
  db: Executor,
  orgId: string,
  rows: readonly KbArticleRow[],
): Promise<ArticleRecord[]> {
  const sources = rows.filter((row) => row.translationOf === null).map((row) => row.id);
  const translations = await translationsOf(db, orgId, sources);
  return rows.map((row) => serialize(row, translations.get(row.id) ?? []));
}

export async function serializeArticle(
  db: Executor,
  orgId: string,
  row: KbArticleRow,
): Promise<ArticleRecord> {
  const [record] = await serializeArticles(db, orgId, [row]);
  if (!record) throw new Error('serializeArticles returned no article');
  return record;
}

// ---------------------------------------------------------------------------------------------
// Data functions

/** The kb_articles table on the record helper: lookups, trash and restore. */
export const articleRecords = defineRecordTable<KbArticleRow>({
  label: 'Article',
  table: kbArticles,
  select: (db) => db.select().from(kbArticles).$dynamic(),
  update: (db, set, where) => db.update(kbArticles).set(set).where(where).returning(),
});

/** The sanitized body, or the 400 naming body_html when nothing readable is left. */
function sanitizedBody(dirty: string): { bodyHtml: string; bodyText: string } {
  const { html, text, empty } = cleanBody(dirty);
  if (empty) {
    throw validationError([
      {
        field: 'body_html',
        message: 'has no text or image left once scripts, styles and unsafe markup are removed',
        code: 'empty_body',
      },
    ]);
  }
  return { bodyHtml: html, bodyText: text };
}

const badSource = (message: string) =>
  validationError([{ field: 'translation_of', message, code: 'invalid_translation_of' }]);

const localeTaken = (locale: string) =>
  new AppError('conflict', {
    message: `The source article, or another translation of it, is in ${locale} already`,
    details: [
      { field: 'locale', message: `a translation in ${locale} exists already`, code: 'translation_exists' },
    ],
  });

/** A write that may meet the one-translation-per-locale index: its violation is the 409 too. */
async function withLocaleConflict<T>(locale: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw localeTaken(locale);
    throw err;
  }
}

/**
 * Checks that `sourceId` may be the source of the article `self` (its id, absent while creating)
 * in `locale`: a live article of the organization (anything else is the same 400, so another
 * organization's id tells nothing), not the article itself, not a translation itself, in another
 * locale, with no live translation in that locale yet (409); and `self` has no translations of its
 * own (translations are flat: one source, many translations).
 */
async function assertSource(
  db: Executor,
  orgId: string,
  sourceId: string,
  self: { id?: string; locale: string },
): Promise<void> {
  if (sourceId === self.id) throw badSource('cannot name the article itself');
  const [source] = await db
    .select()
    .from(kbArticles)
    .where(and(eq(kbArticles.id, sourceId), eq(kbArticles.orgId, orgId), isNull(kbArticles.deletedAt)))
    .limit(1)
    .for('key share');
  if (!source) throw badSource('must be the id of a live article of this organization');
  if (source.translationOf !== null) {
    throw badSource(`names a translation; name its source ${source.translationOf} instead`);
  }
  if (source.locale === self.locale) {
    throw validationError([
      {
        field: 'locale',
        message: `must differ from the source article's locale (${source.locale})`,
        code: 'same_locale',
      },
    ]);
  }
  if (self.id !== undefined) {
    const [own] = await db
      .select({ id: kbArticles.id })
      .from(kbArticles)
      .where(and(eq(kbArticles.orgId, orgId), eq(kbArticles.translationOf, self.id)))
      .limit(1);
    if (own) throw badSource('this article has translations of its own, so it cannot be a translation');
  }
  const taken = [
    eq(kbArticles.orgId, orgId),
    eq(kbArticles.translationOf, sourceId),
    eq(kbArticles.locale, self.locale),
    isNull(kbArticles.deletedAt),
  ];
  if (self.id !== undefined) taken.push(ne(kbArticles.id, self.id));
  const [other] = await db
    .select({ id: kbArticles.id })
    .from(kbArticles)
    .where(and(...taken))
    .limit(1);
  if (other) throw localeTaken(self.locale);
}

/** A source may not move to a locale one of its live translations is in. */
async function assertSourceLocale(
  db: Executor,
  orgId: string,
  sourceId: string,
  locale: string,
): Promise<void> {
  const [clash] = await db
    .select({ id: kbArticles.id })
    .from(kbArticles)
    .where(
      and(
        eq(kbArticles.orgId, orgId),
        eq(kbArticles.translationOf, sourceId),
        eq(kbArticles.locale, locale),
        isNull(kbArticles.deletedAt),
      ),
    )
    .limit(1);
  if (clash) {
    throw validationError([
      { field: 'locale', message: `a translation of this article is in ${locale}`, code: 'same_locale' },
    ]);
  }
}

export interface ArticleFields {
  title?: string | undefined;
  bodyHtml?: string | undefined;
  category?: string | null | undefined;
  tags?: readonly string[] | undefined;
  status?: ArticleStatus | undefined;
  isPublic?: boolean | undefined;
  isAiContext?: boolean | undefined;
  sortOrder?: number | undefined;
  locale?: string | undefined;
  translationOf?: string | null | undefined;
}

export interface NewArticle extends ArticleFields {
  title: string;
  bodyHtml: string;
}

/** The locale of an article created without one. */
const DEFAULT_LOCALE = 'en';

/** Creates an article (a draft unless `status` says otherwise, as a move from draft). No event: none is specified. */
export async function insertArticle(ctx: RecordContext, input: NewArticle): Promise<ArticleRecord> {
  const orgId = ctx.auth.orgId;
  const status = input.status ?? articleMachine.initial;
  articleMachine.assertMove(articleMachine.initial, status);
  const body = sanitizedBody(input.bodyHtml);
  const locale = input.locale ?? DEFAULT_LOCALE;
  const translationOf = input.translationOf ?? null;
  if (translationOf !== null) await assertSource(ctx.db, orgId, translationOf, { locale });
  const rows = await withLocaleConflict(locale, () =>
    ctx.db
      .insert(kbArticles)
      .values({
        ...newRecordStamp(ctx),
        title: input.title,
        ...body,
        category: input.category ?? null,
        tags: [...new Set(input.tags ?? [])],
        status,
        isPublic: input.isPublic ?? false,
        isAiContext: input.isAiContext ?? false,
        sortOrder: input.sortOrder ?? 0,
        locale,
        translationOf,
        publishedAt: status === 'published' ? ctx.now : null,
      })
      .returning(),
  );
  const [row] = rows;
  if (!row) throw new Error('insert returned no article');
  return serializeArticle(ctx.db, orgId, row);
}

/**
 * Changes the fields sent of a live article. A status change is a move of the machine; the first
 * move to published stamps published_at. A changed title or body marks the article's translations
 * outdated; a translation whose title or body is sent (or that gets another source) is current again.
 */
export async function writeArticle(
  ctx: RecordContext,
  id: string,
  changes: ArticleFields,
): Promise<ArticleRecord> {
  const orgId = ctx.auth.orgId;
  const before = await articleRecords.getLive(ctx.db, orgId, id, true);
  const from = articleMachine.parse(before.status);
  const to = changes.status ?? from;
  articleMachine.assertMove(from, to);
  const body = changes.bodyHtml === undefined ? undefined : sanitizedBody(changes.bodyHtml);
  const locale = changes.locale ?? before.locale;
  const translationOf = changes.translationOf === undefined ? before.translationOf : changes.translationOf;
  const sourceChanged = translationOf !== before.translationOf;
  if (translationOf !== null && (sourceChanged || locale !== before.locale)) {
    await assertSource(ctx.db, orgId, translationOf, { id: before.id, locale });
  }
  if (translationOf === null && locale !== before.locale) {
    await assertSourceLocale(ctx.db, orgId, before.id, locale);
  }
  const title = changes.title ?? before.title;
  const contentChanged = title !== before.title || (body !== undefined && body.bodyHtml !== before.bodyHtml);
  const rewritten = changes.title !== undefined || changes.bodyHtml !== undefined;
  const set: Partial<KbArticleRow> = {
    title,
    ...(body ?? {}),
    ...(changes.category !== undefined ? { category: changes.category } : {}),
    ...(changes.tags !== undefined ? { tags: [...new Set(changes.tags)] } : {}),
    status: to,
    ...(changes.isPublic !== undefined ? { isPublic: changes.isPublic } : {}),
    ...(changes.isAiContext !== undefined ? { isAiContext: changes.isAiContext } : {}),
    ...(changes.sortOrder !== undefined ? { sortOrder: changes.sortOrder } : {}),
    locale,
    translationOf,
    outdated: translationOf === null || sourceChanged || rewritten ? false : before.outdated,
    publishedAt: before.publishedAt ?? (to === 'published' ? ctx.now : null),
    updatedAt: ctx.now,
  };
  const row = await withLocaleConflict(locale, () => articleRecords.write(ctx.db, orgId, before.id, set));
  if (contentChanged && before.translationOf === null) {
    await ctx.db
      .update(kbArticles)
      .set({ outdated: true })
      .where(and(eq(kbArticles.orgId, orgId), eq(kbArticles.translationOf, before.id)));
  }
  return serializeArticle(ctx.db, orgId, row);
}

/**
 * Restores a trashed article. A translation comes back only while no other live translation of its
 * source holds its locale (409) and its source's locale still differs from its own (409).
 */
async function restoreArticle(ctx: RecordContext, id: string): Promise<ArticleRecord> {
  const orgId = ctx.auth.orgId;
  let locale = '';
  const check = async (before: KbArticleRow): Promise<void> => {
    locale = before.locale;
    if (before.translationOf === null) return;
    const [clash] = await ctx.db
      .select({ id: kbArticles.id })
      .from(kbArticles)
      .where(
        and(
          eq(kbArticles.orgId, orgId),
          isNull(kbArticles.deletedAt),
          eq(kbArticles.locale, before.locale),
          or(eq(kbArticles.id, before.translationOf), eq(kbArticles.translationOf, before.translationOf)),
        ),
      )
      .limit(1);
    if (clash) throw localeTaken(before.locale);
  };
  try {
    const { row } = await articleRecords.restore(ctx, id, check);
    return serializeArticle(ctx.db, orgId, row);
  } catch (err) {
    // The index backs the check against a translation created meanwhile.
    if (isUniqueViolation(err)) throw localeTaken(locale);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Lists and search

export interface ArticleFilters {
  status?: ArticleStatus | undefined;
  locale?: string | undefined;
  category?: string | undefined;
  tag?: string | undefined;
  isAiContext?: boolean | undefined;
  isPublic?: boolean | undefined;
}

const SORT_COLUMNS: Record<
  'sort_order' | 'title' | 'published_at' | 'created_at' | 'updated_at',
  SortColumn
> = {
  sort_order: kbArticles.sortOrder,
  title: sql`lower(${kbArticles.title})`,
  published_at: { column: kbArticles.publishedAt, nullsLast: true },
  created_at: kbArticles.createdAt,
  updated_at: kbArticles.updatedAt,
};
export const ARTICLE_SORT_FIELDS = [
  'sort_order',
  'title',
  'published_at',
  'created_at',
  'updated_at',
] as const;

function filterConditions(orgId: string, filters: ArticleFilters): SQL[] {
  const conditions = articleRecords.liveConditions(orgId);
  if (filters.status) conditions.push(eq(kbArticles.status, filters.status));
  if (filters.locale) conditions.push(eq(kbArticles.locale, filters.locale));
  if (filters.category) conditions.push(eq(kbArticles.category, filters.category));
  if (filters.tag) conditions.push(arrayContains(kbArticles.tags, [filters.tag]));
  if (filters.isAiContext !== undefined) conditions.push(eq(kbArticles.isAiContext, filters.isAiContext));
  if (filters.isPublic !== undefined) conditions.push(eq(kbArticles.isPublic, filters.isPublic));
  return conditions;
}

/** The full-text terms of a search (prefix words, whole words, the phrase); null when nothing is searchable. */
function termsOf(orgId: string, search: string): SearchTerms | null {
  const prefix = prefixTsQuery(search);
  if (prefix === null) return null;
  return {
    orgId,
    prefix,
    exact: prefix.replaceAll(':*', ''),
    phrase: search.normalize('NFKC').toLowerCase().trim(),
  };
}

const matches = (t: SearchTerms) => sql`${kbArticles.search} @@ to_tsquery('simple', ${t.prefix})`;
/** Title words weigh A and body words B in the vector, so a title match ranks above a body match. */
const rankFor = (t: SearchTerms) => rankOf(sql`${kbArticles.search}`, sql`${kbArticles.title}`, t);

/**
 * The organization's live articles matching the filters: with `search`, full-text matches by
 * relevance (title above body); otherwise by sort_order, then newest first; `sort` overrides both.
 */
export async function listArticlePage(
  db: Executor,
  orgId: string,
  filters: ArticleFilters,
  params: ListParams,
): Promise<PagedList<'articles', ArticleRecord>> {
  const conditions = filterConditions(orgId, filters);
  let ranked: SQL[] = [];
  if (params.search !== undefined) {
    const terms = termsOf(orgId, params.search);
    if (terms === null) return paged('articles', [], 0, params);
    conditions.push(matches(terms));
    ranked = [desc(rankFor(terms))];
  }
  const where = and(...conditions);
  const order = sortOrder(params.sort, SORT_COLUMNS, kbArticles.id, [
    ...ranked,
    asc(kbArticles.sortOrder),
    desc(kbArticles.createdAt),
    desc(kbArticles.id),
  ]);
  const { rows, total } = await articleRecords.listPage(db, { where, order, page: params });
  return paged('articles', await serializeArticles(db, orgId, rows), total, params);
}

export interface SearchHit {
  id: string;
  title: string;
  locale: string;
  status: ArticleStatus;
  snippet: string;
  rank: number;
}

const hitRow = z.object({
  id: z.string(),
  title: z.string(),
  locale: z.string(),
  status: z.string(),
  snippet: z.string().nullable(),
  rank: z.coerce.number(),
});

/** Words of the body around the match, plain text (no markers). */
const HEADLINE_OPTIONS = 'MaxWords=35, MinWords=15, ShortWord=2, MaxFragments=2, FragmentDelimiter=" ... "';

/** The best-ranked live articles for `query`, with a snippet of the body around the words found. */
export async function searchArticles(
  db: Executor,
  orgId: string,
  query: string,
  filters: Pick<ArticleFilters, 'locale' | 'status'>,
  limit: number,
): Promise<SearchHit[]> {
  const terms = termsOf(orgId, query);
  if (terms === null) return [];
  const conditions = filterConditions(orgId, filters);
  conditions.push(matches(terms));
  const rank = rankFor(terms);
  const rows = await db
    .select({
      id: kbArticles.id,
      title: kbArticles.title,
      locale: kbArticles.locale,
      status: kbArticles.status,
      snippet: sql<
        string | null
      >`ts_headline('simple', ${kbArticles.bodyText}, to_tsquery('simple', ${terms.prefix}), ${`StartSel="", StopSel="", ${HEADLINE_OPTIONS}`})`,
      rank: sql<number>`${rank}`,
    })
    .from(kbArticles)
    .where(and(...conditions))
    .orderBy(desc(rank), asc(kbArticles.sortOrder), desc(kbArticles.createdAt), desc(kbArticles.id))
    .limit(limit);
  return rows.map((raw) => {
    const row = hitRow.parse(raw);
    return {
      id: row.id,
      title: row.title,
      locale: row.locale,
      status: articleMachine.parse(row.status),
      snippet: (row.snippet ?? '').replace(/\s+/g, ' ').trim(),
      rank: Math.round(row.rank * 1e6) / 1e6,
    };
  });
}

/** The article entry of the trash registry; its title is its name there. */
export const articleTrashTypes: readonly TrashType[] = [
  articleRecords.trashType({
    type: 'kb_article',
    recordKey: 'article',
    resource: 'content',
    schema: articleSchema,
    name: kbArticles.title,
    restore: restoreArticle,
  }),
];
