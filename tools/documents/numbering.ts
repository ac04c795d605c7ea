// Gap-free document numbers (INV-000001, EST-000001): one counter row per organization and kind in
// document_counters. The upsert takes the counter row's lock until the transaction ends, so
// concurrent callers queue behind it, and a rollback gives the number back: no gap, no duplicate.

import { sql } from 'drizzle-orm';
import type { RecordContext } from '../../core/records.ts';
import { documentCounters } from './tables.ts';

/** The numbered kinds and the prefix of their numbers. */
export const NUMBER_PREFIXES = { invoice: 'INV', estimate: 'EST' } as const;
export type NumberedKind = keyof typeof NUMBER_PREFIXES;

/** The prefix and the number padded to six digits (more digits once past 999999). */
function formatDocumentNumber(kind: NumberedKind, n: number): string {
  return `${NUMBER_PREFIXES[kind]}-${String(n).padStart(6, '0')}`;
}

/** The organization's next number of `kind`, held under the counter row's lock until commit. */
export async function nextDocumentNumber(ctx: RecordContext, kind: NumberedKind): Promise<string> {
  const [row] = await ctx.db
    .insert(documentCounters)
    .values({ orgId: ctx.auth.orgId, kind, lastNumber: 1 })
    .onConflictDoUpdate({
      target: [documentCounters.orgId, documentCounters.kind],
      set: { lastNumber: sql`${documentCounters.lastNumber} + 1` },
    })
    .returning({ lastNumber: documentCounters.lastNumber });
  if (!row) throw new Error(`the ${kind} counter upsert returned no row`);
  return formatDocumentNumber(kind, row.lastNumber);
}
