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

/** The words of one search, as the rank and match conditions take them. */
export interface SearchTerms {
  orgId: string;
  /** The prefix tsquery (`acm:* & jan:*`). */
  prefix: string;
  /** The same words as whole words (`acm & jan`). */
  exact: string;
  /** The query as typed, normalized and lower-cased, for an exact name match. */
  phrase: string;
}

/** What the global search passes to each record type's branch (core/area.ts SearchSource). */
export interface GlobalSearchTerms extends SearchTerms {
  /** Most results the search returns: a branch may stop at its own best this many. */
  limit: number;
  /**
   * Set when the query is one word whose typed form is the very lexeme PostgreSQL makes of it
   * (`phrase` = lexeme): a branch with a words table may then rank from it (rankedWordMatches).
   */
  word: SearchWord | null;
}

/** A one-word query's lexeme and the upper end of its prefix range (prefixUpperBound). */
export interface SearchWord {
  lexeme: string;
  upper: string | null;
}

/**
 * The relevance of one row: the prefix match's rank, plus the rank of whole-word matches (so "acme"
 * puts "Acme" above "Acmeville"), plus 1 when the whole name equals the query.
 */
export function rankOf(search: SQL, name: SQL, terms: SearchTerms): SQL {
  return sql`(ts_rank(${search}, to_tsquery('simple', ${terms.prefix})) + ts_rank(${search}, to_tsquery('simple', ${terms.exact})) + case when lower(${name}) = ${terms.phrase} then 1 else 0 end)`;
}

/**
 * `select id, rank` of every record holding a word that starts with the query's word, ranked exactly
 * as rankOf ranks the record's whole vector, from a words table (`org_id, term, <idColumn>,
 * positions, name_is_term`, its key INCLUDing the last two): one index-only range scan instead of a
 * heap read per match. ts_rank of a one-word query reads only the vector's entries the query matches,
 * which are these rows' reduced vectors put back together (the text form keeps positions and
 * weights); the +1 of an exact name is a row whose word is the phrase and is the whole name.
 */
export function rankedWordMatches(
  table: string,
  idColumn: string,
  terms: SearchTerms,
  word: SearchWord,
): SQL {
  const id = sql.identifier(idColumn);
  const below = word.upper === null ? sql`` : sql` and term < ${word.upper}`;
  return sql`select m.${id} as id,
    (ts_rank(m.v, to_tsquery('simple', ${terms.prefix})) + ts_rank(m.v, to_tsquery('simple', ${terms.exact})) + case when m.named then 1 else 0 end) as rank
    from (select ${id}, string_agg(positions::text, ' ')::tsvector as v, bool_or(name_is_term and term = ${terms.phrase}) as named
          from ${sql.identifier(table)}
          where org_id = ${terms.orgId} and term >= ${word.lexeme}${below}
          group by ${id}) m`;
}

/**
 * The lexemes of a tsquery's text form (`tsquery::text`) when the query is nothing but an AND of
 * word prefixes (`'acme':* & 'harbor':*`), which is what to_tsquery makes of prefixTsQuery's output
 * for ordinary words; null for any other shape (a word the parser split into a phrase, an empty
 * query), which callers then answer the general way.
 */
export function prefixLexemes(tsquery: string): string[] | null {
  // One operand: a quoted lexeme ('' and \x escape a quote and a backslash) with the prefix mark.
  const operand = /'((?:[^'\\]|''|\\.)+)':\*/y;
  const lexemes: string[] = [];
  let at = 0;
  while (at < tsquery.length || lexemes.length === 0) {
    if (lexemes.length > 0) {
      if (!tsquery.startsWith(' & ', at)) return null;
      at += 3;
    }
    operand.lastIndex = at;
    const match = operand.exec(tsquery);
    if (!match?.[1]) return null;
    lexemes.push(match[1].replace(/''|\\(.)/g, (_escaped, char: string | undefined) => char ?? "'"));
    at = operand.lastIndex;
  }
  return lexemes;
}

/**
 * The least string above every string that starts with `prefix`, in code point order (which is the
 * byte order of UTF-8, i.e. `COLLATE "C"`): the prefix with its last code point incremented. So
 * `term >= prefix and term < upper` is exactly "term starts with prefix". Null when no such string
 * exists (the prefix is all U+10FFFF), and the range has no upper end.
 */
export function prefixUpperBound(prefix: string): string | null {
  const points = [...prefix];
  while (points.length > 0) {
    const last = points.pop()?.codePointAt(0) ?? 0;
    // Surrogate code points are not characters; UTF-8 (and PostgreSQL text) never holds them.
    const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
    if (next <= 0x10ffff) return points.join('') + String.fromCodePoint(next);
  }
  return null;
}
