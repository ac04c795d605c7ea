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

/** What an invoice and an estimate share of their editable state (each adds its own date). */
export interface PricedDocumentState {
  leadId: string;
  contactId: string | null;
  opportunityId: string | null;
  currency: string;
  issueDate: string | null;
  notes: string | null;
  lineItems: LineItemInput[];
}

/** The shared fields of a create or update body, as the tools parse them. */
export interface PricedDocumentInput {
  lead_id?: string | undefined;
  contact_id?: string | null | undefined;
  opportunity_id?: string | null | undefined;
  currency?: string | undefined;
  issue_date?: string | null | undefined;
  notes?: string | null | undefined;
  line_items?: LineItemInput[] | undefined;
}

/** The shared state of a new document: absent optional fields are null. */
export function newPricedState(
  input: PricedDocumentInput & { lead_id: string; currency: string; line_items: LineItemInput[] },
): PricedDocumentState {
  return {
    leadId: input.lead_id,
    contactId: input.contact_id ?? null,
    opportunityId: input.opportunity_id ?? null,
    currency: input.currency,
    issueDate: input.issue_date ?? null,
    notes: input.notes ?? null,
    lineItems: input.line_items,
  };
}

/** The shared state of a stored document, for a PATCH to merge into. */
export function pricedStateOf(row: PricedDocumentState): PricedDocumentState {
  const { leadId, contactId, opportunityId, currency, issueDate, notes, lineItems } = row;
  return { leadId, contactId, opportunityId, currency, issueDate, notes, lineItems };
}

/** The shared fields of a PATCH body in state form (undefined: not sent; null: cleared). */
export function pricedPatchOf(input: PricedDocumentInput) {
  return {
    leadId: input.lead_id,
    contactId: input.contact_id,
    opportunityId: input.opportunity_id,
    currency: input.currency,
    issueDate: input.issue_date,
    notes: input.notes,
    lineItems: input.line_items,
  };
}
