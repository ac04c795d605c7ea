// What the documents' rows share beyond their references: the totals kept in minor units for
// sorting and filtering, computed once from the lines (core/money.ts documentTotals).
import type { LineItemInput } from '../../core/line-items.ts';
import { documentTotals } from '../../core/money.ts';

/** The three total columns of a document's row, in the currency's minor units. */
export function totalColumns(
  lines: readonly LineItemInput[],
  currency: string,
): { subtotalMinor: bigint; taxTotalMinor: bigint; totalMinor: bigint } {
  const totals = documentTotals(lines, currency);
  return { subtotalMinor: totals.subtotal, taxTotalMinor: totals.taxTotal, totalMinor: totals.total };
}
