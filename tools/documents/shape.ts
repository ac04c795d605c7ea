// What the documents' rows share beyond their references: the totals kept in minor units for
// sorting and filtering, computed once from the lines (core/money.ts documentTotals); and what an
// invoice and an estimate share of their priced state: its fields in the record, its checks (the
// lines need the currency, a date not before issue_date, the references of the lead) and its merge.
import { z } from 'zod';
import { type ErrorDetail, validationError } from '../../core/errors.ts';
import {
  documentTotalsShape,
  type LineItemInput,
  lineItemProblems,
  pricedLineSchema,
  priceLines,
} from '../../core/line-items.ts';
import { documentTotals } from '../../core/money.ts';
import { mergePatch, type Patch, type RecordContext } from '../../core/records.ts';
import { referenceProblems } from './references.ts';

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

/** The shared fields of a create body: the lead, the currency and the lines are required. */
export interface NewPricedDocument extends PricedDocumentInput {
  lead_id: string;
  currency: string;
  line_items: LineItemInput[];
}

/** The shared state of a new document: absent optional fields are null. */
function newPricedState(input: NewPricedDocument): PricedDocumentState {
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
function pricedStateOf(row: PricedDocumentState): PricedDocumentState {
  const { leadId, contactId, opportunityId, currency, issueDate, notes, lineItems } = row;
  return { leadId, contactId, opportunityId, currency, issueDate, notes, lineItems };
}

/** The shared fields of a PATCH body in state form (undefined: not sent; null: cleared). */
function pricedPatchOf(input: PricedDocumentInput) {
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

/**
 * A PATCH of a priced document: the shared fields of `input` merged into those of `before`, and the
 * document's own field (`own`: its value before and as the body sends it) the same way.
 */
function mergePricedPatch<Own extends object>(
  before: PricedDocumentState,
  input: PricedDocumentInput,
  own: { before: Own; patch: Patch<Own> },
): PricedDocumentState & Own {
  return { ...mergePatch(pricedStateOf(before), pricedPatchOf(input)), ...mergePatch(own.before, own.patch) };
}

/** The total columns of a priced state. */
function pricedTotals(state: PricedDocumentState) {
  return totalColumns(state.lineItems, state.currency);
}

/**
 * The checks of a priced state (400 with every problem): the lines' amounts in the currency, the
 * document's own date (`dated`, e.g. due_date) not before issue_date, and the references of its
 * lead (`noun` names the document).
 */
async function checkPricedState(
  ctx: RecordContext,
  state: PricedDocumentState,
  noun: string,
  dated: { field: string; value: string | null },
): Promise<void> {
  const details: ErrorDetail[] = [...lineItemProblems(state.lineItems, state.currency)];
  if (state.issueDate !== null && dated.value !== null && dated.value < state.issueDate) {
    details.push({ field: dated.field, message: 'must not be before issue_date', code: 'invalid_date' });
  }
  details.push(...(await referenceProblems(ctx, state, noun)));
  if (details.length > 0) throw validationError(details);
}

/** The priced part of an invoice's or an estimate's record: the lines with their amounts and the totals. */
const pricedRecordShape = {
  line_items: z.array(pricedLineSchema).describe('The lines with their amounts'),
  ...documentTotalsShape,
};

/** The values of pricedRecordShape (the lines priced, the totals), from a row's lines and currency. */
export function pricedRecordValues(row: { lineItems: readonly LineItemInput[]; currency: string }) {
  return priceLines(row.lineItems, row.currency);
}

/**
 * What an invoice's and an estimate's store take of the kit, as one face: the record's priced
 * fields and their values, the state of a new document, the checks, the totals and the PATCH merge.
 */
export const pricedDocument = {
  recordShape: pricedRecordShape,
  recordValues: pricedRecordValues,
  newState: newPricedState,
  check: checkPricedState,
  totals: pricedTotals,
  merge: mergePricedPatch,
};
