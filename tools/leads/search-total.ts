// The exact total of a lead search, counted on lead_search_terms instead of the leads.
//
// A search matches through the GIN index on `leads.search`, but counting its matches that way reads
// one leads heap page per match (PostgreSQL checks each row's visibility there, and a GIN index has
// no index-only scans): ~17,700 pages for a common word over a million leads. The same words, kept
// one row per (word, lead) in a btree (tools/leads/tables.ts, migration 0032), count as one
// index-only range scan. The answer is the same number: the rows are the lexemes of each live lead's
// vector, and a one-word prefix query matches a vector exactly when its prefix starts one of them.
import { and, count, eq, gte, lt, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { rowsOf } from '../../core/db/sql.ts';
import { prefixLexemes, prefixUpperBound } from '../../core/text-search.ts';
import { leadSearchTerms } from './tables.ts';

const parsedQuery = z.object({ query: z.string() });

/**
 * How many live leads of the organization match the prefix tsquery `prefix` (prefixTsQuery's
 * output), or null when the query is not a single word prefix (the caller then counts the general
 * way). Several words are left to the GIN index: intersecting their ranges here would read every
 * entry of each, and one common word ("lead" starts a word of nearly every lead) makes that far
 * slower than the bitmap AND of the GIN scan, whose heap reads are only the few leads matching all.
 */
export async function countLeadSearchMatches(
  db: Executor,
  orgId: string,
  prefix: string,
): Promise<number | null> {
  // The lexeme as PostgreSQL's parser makes it, from the very query the list's condition runs.
  const [row] = rowsOf(await db.execute(sql`select to_tsquery('simple', ${prefix})::text as query`));
  const lexemes = prefixLexemes(parsedQuery.parse(row).query);
  const lexeme = lexemes?.length === 1 ? lexemes[0] : undefined;
  if (lexeme === undefined) return null;
  const t = leadSearchTerms;
  const upper = prefixUpperBound(lexeme);
  const inRange = and(
    eq(t.orgId, orgId),
    gte(t.term, lexeme),
    upper === null ? undefined : lt(t.term, upper),
  );
  // A lead may hold several words with the prefix (harbor, harbors): grouped, it counts once. The
  // grouping (a hash of every lead id in the range) only runs when the range holds more than one word.
  const leadIds = db.select({ leadId: t.leadId }).from(t).where(inRange).groupBy(t.leadId).as('matching');
  const distinctLeads = db.select({ n: count() }).from(leadIds);
  const [counted] = await db
    .select({
      n: sql`case when min(${t.term}) = max(${t.term}) then count(*) else (${distinctLeads}) end`.mapWith(
        Number,
      ),
    })
    .from(t)
    .where(inRange);
  return counted?.n ?? 0;
}
