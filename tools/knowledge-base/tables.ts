// The knowledge-base area's table: the organization's articles (sanitized HTML, its plain text, the
// status machine, translations of one source article, and a weighted full-text vector).
import { sql } from 'drizzle-orm';
import { type AnyPgColumn, boolean, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, ts, tsvector, updatedAt } from '../../core/db/schema.ts';

export const kbArticles = pgTable(
  'kb_articles',
  {
    id: id(),
    orgId: orgId(),
    title: text('title').notNull(),
    /** The sanitized HTML (tools/knowledge-base/sanitize.ts); never what the caller sent as such. */
    bodyHtml: text('body_html').notNull(),
    /** body_html as plain text: the search vector, snippets and AI context read it. */
    bodyText: text('body_text').notNull(),
    category: text('category'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    status: text('status').notNull().default('draft'),
    isPublic: boolean('is_public').notNull().default(false),
    isAiContext: boolean('is_ai_context').notNull().default(false),
    sortOrder: integer('sort_order').notNull().default(0),
    locale: text('locale').notNull().default('en'),
    /**
     * The source article this one translates, or null. Flat: a source is never itself a translation.
     * A source deleted for good (the trash purge) leaves its translations standing on their own.
     */
    translationOf: text('translation_of').references((): AnyPgColumn => kbArticles.id, {
      onDelete: 'set null',
    }),
    /** A translation whose source's title or body changed after the translation was last written. */
    outdated: boolean('outdated').notNull().default(false),
    /** When the article was first published; kept through later moves. */
    publishedAt: ts('published_at'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /** The title weighs above the body in the ranking (A over B). */
    search: tsvector('search').generatedAlwaysAs(
      sql`setweight(to_tsvector('simple', coalesce(title, '')), 'A') || setweight(to_tsvector('simple', coalesce(body_text, '')), 'B')`,
    ),
  },
  (t) => [
    index('kb_articles_live_order_idx')
      .on(t.orgId, t.sortOrder, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('kb_articles_search_idx').using('gin', t.search),
    index('kb_articles_tags_idx').using('gin', t.tags),
    // One live translation per source and locale (the store checks first; this backs it up).
    uniqueIndex('kb_articles_translation_locale_uq')
      .on(t.translationOf, t.locale)
      .where(sql`${t.deletedAt} is null and ${t.translationOf} is not null`),
    index('kb_articles_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

export type KbArticleRow = typeof kbArticles.$inferSelect;
