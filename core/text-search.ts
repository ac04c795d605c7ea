// Full-text search helpers every searchable record uses: free text becomes a bound prefix tsquery
// (letters and digits only, so no tsquery syntax from a caller gets through), and one relevance
// formula ranks rows of every type the same way in the global search.
import { type SQL, sql } from 'drizzle-orm';

/** Words beyond this many are ignored: a longer query narrows nothing a person would notice. */
const MAX_SEARCH_TERMS = 10;

/**
 * A prefix tsquery from free text: words are reduced to letters and digits (so no tsquery syntax
 * can get through) and each must match the start of a word. Null when nothing searchable remains.
 */
export function prefixTsQuery(search: string): string | null {
  const words =
    search
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return null;
  return words
    .slice(0, MAX_SEARCH_TERMS)
    .map((w) => `${w}:*`)
    .join(' & ');
}

/** What one global search passes to each record type's branch. */
export interface SearchTerms {
  orgId: string;
  /** The prefix tsquery (`acm:* & jan:*`). */
  prefix: string;
  /** The same words as whole words (`acm & jan`). */
  exact: string;
  /** The query as typed, normalized and lower-cased, for an exact name match. */
  phrase: string;
}

/**
 * The relevance of one row: the prefix match's rank, plus the rank of whole-word matches (so "acme"
 * puts "Acme" above "Acmeville"), plus 1 when the whole name equals the query.
 */
export function rankOf(search: SQL, name: SQL, terms: SearchTerms): SQL {
  return sql`(ts_rank(${search}, to_tsquery('simple', ${terms.prefix})) + ts_rank(${search}, to_tsquery('simple', ${terms.exact})) + case when lower(${name}) = ${terms.phrase} then 1 else 0 end)`;
}
