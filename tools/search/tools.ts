// Global search: one ranked list over the record types the areas declare (`searchSources`: leads,
// contacts, opportunities), so a caller who has only a name or a word ("acme", "jane") finds the record without guessing its type first. One UNION ALL
// query over the tables' generated tsvector columns; the query text only ever reaches PostgreSQL as
// a bound prefix tsquery built by prefixTsQuery, so no tsquery syntax from the caller gets through.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Surface } from '../../core/access.ts';
import { type RoleTable, roleHas, tokenAllows } from '../../core/access.ts';
import type { SearchSource } from '../../core/area.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { rowsOf } from '../../core/db/sql.ts';
import { NO_NUL } from '../../core/text-rules.ts';
import {
  type GlobalSearchTerms,
  prefixLexemes,
  prefixTsQuery,
  prefixUpperBound,
  type SearchWord,
} from '../../core/text-search.ts';
import { defineTool } from '../../core/tool.ts';

const SNIPPET_LENGTH = 160;
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;

/** `a, b or c`: the type names as the descriptions list them. */
function spelled(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

const parsedQueries = z.object({ prefix: z.string(), exact: z.string() });

/**
 * The word a words table can rank by, or null: when the query is one word prefix whose whole-word
 * form is the same word, and the query as typed (`phrase`) is exactly that lexeme, the ranks and
 * the exact-name bonus can be read from the words tables (rankedWordMatches). Anything else (several
 * words, punctuation around the word, a word the parser splits) ranks from the vectors.
 */
async function searchWordOf(
  db: Executor,
  prefix: string,
  exact: string,
  phrase: string,
): Promise<SearchWord | null> {
  if (prefix.includes('&')) return null;
  const [row] = rowsOf(
    await db.execute(
      sql`select to_tsquery('simple', ${prefix})::text as prefix, to_tsquery('simple', ${exact})::text as exact`,
    ),
  );
  const parsed = parsedQueries.parse(row);
  const lexemes = prefixLexemes(parsed.prefix);
  const lexeme = lexemes?.length === 1 ? lexemes[0] : undefined;
  if (lexeme === undefined || lexeme !== phrase || `${parsed.exact}:*` !== parsed.prefix) return null;
  return { lexeme, upper: prefixUpperBound(lexeme) };
}

/** search_crm over the given record types (tools/index.ts collects them from the areas). */
export function searchCrmTool(sources: readonly SearchSource[], access: () => RoleTable) {
  const [first, ...rest] = sources.map((source) => source.type);
  if (first === undefined) throw new Error('search_crm needs at least one searchable record type');
  const SEARCH_TYPES = [first, ...rest] as const;
  type SearchType = (typeof SEARCH_TYPES)[number];
  const bySearchType = new Map(sources.map((source) => [source.type, source]));
  const typeEnum = z.enum(SEARCH_TYPES).describe(`A record type: ${spelled(SEARCH_TYPES)}`);
  const typeList = z.array(typeEnum).min(1).max(SEARCH_TYPES.length).describe('Record types to search');

  const searchInput = z.strictObject({
    q: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .refine(NO_NUL, 'must not contain NUL characters')
      .describe(
        'Words of a name, title, email, phone, description or note; each matches as a prefix ("acm" finds "Acme"), all must match',
      ),
    types: z
      .union([
        typeList,
        // REST query strings carry one value: `types=lead,contact`.
        z
          .string()
          .transform((s) =>
            s
              .split(',')
              .map((part) => part.trim())
              .filter(Boolean),
          )
          .pipe(typeList)
          .describe('Comma-separated record types, e.g. "lead,contact"'),
      ])
      .optional()
      .describe(`Only these record types (${SEARCH_TYPES.join(', ')}); all the caller may read when omitted`),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .default(DEFAULT_LIMIT)
      .describe(`Most results to return, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}); best matches first`),
  });

  const resultSchema = z.object({
    type: typeEnum,
    _id: z.string().describe("The record's id; fetch it with get_lead, get_contact or get_opportunity"),
    name: z
      .string()
      .describe(
        'Display name: the lead or contact name; for an opportunity its note, or "<currency> <value> opportunity on <lead name>"',
      ),
    lead_id: z.string().nullable().describe('The lead a contact or opportunity belongs to; null for leads'),
    lead_name: z.string().describe("The lead's name (for a lead, its own name)"),
    snippet: z
      .string()
      .describe(
        `A short text about the record (at most ${SNIPPET_LENGTH} characters), to tell matches apart`,
      ),
    rank: z.number().describe('Relevance, higher is better; results are sorted by it'),
  });

  const searchOutput = z.object({
    results: z.array(resultSchema).describe('Matches across the types searched, most relevant first'),
    count: z.number().int().describe('How many results were returned (at most `limit`)'),
  });

  const resultRow = z.object({
    type: typeEnum,
    id: z.string(),
    name: z.string(),
    lead_id: z.string().nullable(),
    lead_name: z.string(),
    snippet: z.string().nullable(),
    rank: z.coerce.number(),
  });

  /** The record types this caller may see: its token's scopes (tokens only) and its role's permissions. */
  function searchableTypes(
    auth: Pick<AuthContext, 'role' | 'scopes'>,
    surface: Surface,
    wanted: readonly SearchType[] = SEARCH_TYPES,
  ): SearchType[] {
    return SEARCH_TYPES.filter((type) => {
      const rule = bySearchType.get(type);
      if (!rule) return false;
      return (
        wanted.includes(type) &&
        roleHas(access(), auth.role, rule.permission) &&
        tokenAllows(auth.scopes, surface, 'read', rule.resource)
      );
    });
  }

  function snippetOf(text: string | null): string {
    if (!text) return '';
    return text.length > SNIPPET_LENGTH ? `${text.slice(0, SNIPPET_LENGTH - 1)}…` : text;
  }

  const searchCrm = defineTool({
    name: 'search_crm',
    title: 'Search leads, contacts and opportunities',
    description:
      'Searches the whole CRM by words when you do not know a record\'s type or id: one ranked list of leads, contacts and opportunities ("Jane from Acme").',
    input: searchInput,
    output: searchOutput,
    access: { kind: 'read', resource: 'leads', permission: 'leads.view' },
    toolset: 'core',
    async handler(input, { db, auth, surface }) {
      const types = searchableTypes(auth, surface, input.types ?? SEARCH_TYPES);
      const prefix = prefixTsQuery(input.q);
      // A query with no letters or digits, or a caller who may see none of the types, matches nothing.
      if (prefix === null || types.length === 0) return { results: [], count: 0 };
      const exact = prefix.replaceAll(':*', '');
      const phrase = input.q.normalize('NFKC').toLowerCase();
      const terms: GlobalSearchTerms = {
        orgId: auth.orgId,
        prefix,
        exact,
        phrase,
        limit: input.limit,
        word: await searchWordOf(db, prefix, exact, phrase),
      };
      const union = sql.join(
        types.flatMap((type) => {
          const branch = bySearchType.get(type)?.branch(terms);
          return branch ? [sql`(${branch})`] : [];
        }),
        sql` union all `,
      );
      // The union's estimated cost passes PostgreSQL's jit_above_cost on a large organization, and
      // compiling it costs more than running it (1M leads, "harbor": 755 ms of JIT in a 1,037 ms
      // statement). Off for the rest of this transaction, which ends with this statement.
      // A one-word search ranks from the words tables: a small plan, for which starting parallel
      // workers costs more than the whole statement (~100 ms on a loaded machine, for no match).
      await db.execute(
        terms.word === null
          ? sql`select set_config('jit', 'off', true)`
          : sql`select set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)`,
      );
      const result = await db.execute(
        sql`select * from (${union}) found order by rank desc, id desc limit ${input.limit}`,
      );
      const results = rowsOf(result).map((raw) => {
        const row = resultRow.parse(raw);
        return {
          type: row.type,
          _id: row.id,
          name: row.name,
          lead_id: row.lead_id,
          lead_name: row.lead_name,
          snippet: snippetOf(row.snippet),
          rank: Math.round(row.rank * 10_000) / 10_000,
        };
      });
      return { results, count: results.length };
    },
  });

  return searchCrm;
}
