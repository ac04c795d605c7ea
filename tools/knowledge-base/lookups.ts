// What other areas ask of the knowledge base without reading its table (docs/architecture.md
// "Boundaries"): the AI-context articles an assistant or a voice agent grounds its answers in.
import { and, asc, desc, eq, isNull, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { kbArticles } from './tables.ts';

export interface AiContextArticle {
  id: string;
  title: string;
  locale: string;
  /** The body as plain text (the sanitized HTML stripped of its tags). */
  text: string;
}

/** The most articles one call answers. */
const MAX_AI_CONTEXT_ARTICLES = 100;

/**
 * The organization's live, published articles marked `is_ai_context`, by sort_order then newest.
 * With `locale` (a BCP 47 tag such as `pt-BR`), only articles of that language (`pt`, `pt-BR`,
 * `pt-PT`...), the exact locale first. `limit` is clamped to 1-100 (default 20).
 */
export async function aiContextArticles(
  db: Executor,
  orgId: string,
  options: { locale?: string | undefined; limit?: number | undefined } = {},
): Promise<AiContextArticle[]> {
  const limit = Math.min(Math.max(Math.trunc(options.limit ?? 20), 1), MAX_AI_CONTEXT_ARTICLES);
  const conditions: SQL[] = [
    eq(kbArticles.orgId, orgId),
    isNull(kbArticles.deletedAt),
    eq(kbArticles.status, 'published'),
    eq(kbArticles.isAiContext, true),
  ];
  const order: SQL[] = [];
  if (options.locale) {
    const locale = options.locale.toLowerCase();
    const language = locale.split('-')[0] ?? locale;
    conditions.push(
      sql`(lower(${kbArticles.locale}) = ${language} or lower(${kbArticles.locale}) like ${`${escapeLike(language)}-%`})`,
    );
    order.push(sql`(lower(${kbArticles.locale}) = ${locale}) desc`);
  }
  order.push(asc(kbArticles.sortOrder), desc(kbArticles.createdAt), desc(kbArticles.id));
  return db
    .select({
      id: kbArticles.id,
      title: kbArticles.title,
      locale: kbArticles.locale,
      text: kbArticles.bodyText,
    })
    .from(kbArticles)
    .where(and(...conditions))
    .orderBy(...order)
    .limit(limit);
}
