// Small helpers for hand-written SQL that both drivers (pg and PGlite) share.
import { z } from 'zod';

/** The rows of a raw `execute()` result; both drivers return them under `rows`. */
export function rowsOf(result: unknown): unknown[] {
  if (typeof result === 'object' && result !== null && 'rows' in result && Array.isArray(result.rows)) {
    return result.rows;
  }
  throw new Error('unexpected query result shape');
}

const countRow = z.object({ n: z.coerce.number().int() });

/** The `n` of a `select count(*) ... as n` statement's one row (0 when it returned none). */
export function countOf(result: unknown): number {
  return countRow.parse(rowsOf(result)[0] ?? { n: 0 }).n;
}

/** Escapes LIKE/ILIKE wildcards so user text matches literally (`%` and `_` are not patterns). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
