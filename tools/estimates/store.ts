// Estimates' data functions: documents with priced lines (core/line-items.ts, exact money in minor
// units) numbered EST-000001 at creation under a per-organization counter row lock (gap-free),
// sending, accepting, declining, the daily expiry and the conversion into a draft invoice (through
// the invoices area's own insertInvoice). Every status move goes through estimateStatusMachine, so a
// refused move is the 400 invalid_transition; editing or deleting a non-draft is refused the same way.
import { getTableColumns } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { AppError } from '../../core/errors.ts';
import { auditFields, auditValues, defineRecordTable, type RecordContext } from '../../core/records.ts';
import { iso } from '../../core/schemas.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import { defineDraftRules } from '../documents/drafts.ts';
import { expireDocuments, expiringStates } from '../documents/expiry.ts';
import { nextDocumentNumber } from '../documents/numbering.ts';
import { keptReferences } from '../documents/references.ts';
import { type NewPricedDocument, type PricedDocumentState, pricedDocument } from '../documents/shape.ts';
import { type InvoiceRecord, insertInvoice } from '../invoices/store.ts';
import { type EstimateRow, estimates } from './tables.ts';

export const ESTIMATE_STATUSES = ['draft', 'sent', 'accepted', 'declined', 'expired'] as const;
export type EstimateStatus = (typeof ESTIMATE_STATUSES)[number];

/**
 * docs/billing.md "Estimates": draft -> sent -> accepted | declined; draft and sent expire (the
 * daily job). The specification's event catalogue has no estimate events, so no move emits one.
 */
export const estimateStatusMachine = defineStateMachine({
  resource: 'estimate',
  field: 'status',
  states: ESTIMATE_STATUSES,
  initial: 'draft',
  moves: {
    draft: { sent: null, expired: null },
    sent: { accepted: null, declined: null, expired: null },
  },
});

/** The states the expiry job moves from: those the machine lets move to expired. */
const EXPIRING_STATUSES = expiringStates(estimateStatusMachine, 'expired');

// ---------------------------------------------------------------------------------------------
// Record shape

export const estimateSchema = z
  .object({
    _id: z.string().describe('Estimate id (24 hex characters)'),
    lead_id: z.string().describe('Id of the lead the estimate is for'),
    contact_id: z
      .string()
      .nullable()
      .describe('Id of the contact addressed (a contact of the lead), or null'),
    opportunity_id: z
      .string()
      .nullable()
      .describe('Id of the deal estimated (an opportunity of the lead), or null'),
    number: z.string().describe('EST-000001..., given at creation, gap-free per organization'),
    status: estimateStatusMachine.schema.describe('draft, sent, accepted, declined or expired'),
    currency: z.string().describe('ISO 4217 currency code of every amount'),
    issue_date: z.string().nullable().describe('Issue date (YYYY-MM-DD), or null'),
    valid_until: z.string().nullable().describe('Last day the estimate is valid (YYYY-MM-DD), or null'),
    notes: z.string().nullable().describe('Free-text notes, or null'),
    ...pricedDocument.recordShape,
    sent_at: z.string().nullable().describe('When it was last sent (ISO 8601), or null'),
    accepted_at: z.string().nullable().describe('When it was accepted (ISO 8601), or null'),
    declined_at: z.string().nullable().describe('When it was declined (ISO 8601), or null'),
    decline_reason: z.string().nullable().describe('Why it was declined, or null'),
    expired_at: z.string().nullable().describe('When the expiry job expired it (ISO 8601), or null'),
    invoice_id: z
      .string()
      .nullable()
      .describe('Id of the draft invoice made from it by convert-to-invoice, or null'),
    ...auditFields('estimate'),
  })
  .describe('An estimate (quote) to a lead');
export type EstimateRecord = z.output<typeof estimateSchema>;

const { search: _search, ...estimateColumns } = getTableColumns(estimates);
export type EstimateData = Omit<EstimateRow, 'search'>;

function toStatus(value: string): EstimateStatus {
  return estimateStatusMachine.parse(value);
}

export function serializeEstimate(row: EstimateData): EstimateRecord {
  return {
    _id: row.id,
    lead_id: row.leadId,
    contact_id: row.contactId,
    opportunity_id: row.opportunityId,
    number: row.number,
    status: toStatus(row.status),
    currency: row.currency,
    issue_date: row.issueDate,
    valid_until: row.validUntil,
    notes: row.notes,
    ...pricedDocument.recordValues(row),
    sent_at: iso(row.sentAt),
    accepted_at: iso(row.acceptedAt),
    declined_at: iso(row.declinedAt),
    decline_reason: row.declineReason,
    expired_at: iso(row.expiredAt),
    invoice_id: row.invoiceId,
    ...auditValues(row),
  };
}

/** The estimates table on the record helper: live lookups (404 "Estimate not found") and the list. */
export const estimateRecords = defineRecordTable<EstimateData>({
  label: 'Estimate',
  table: estimates,
  select: (db) => db.select(estimateColumns).from(estimates).$dynamic(),
  update: (db, set, where) => db.update(estimates).set(set).where(where).returning(estimateColumns),
});

// ---------------------------------------------------------------------------------------------
// Drafts

interface EstimateState extends PricedDocumentState {
  validUntil: string | null;
}

export interface NewEstimate extends NewPricedDocument {
  valid_until?: string | null | undefined;
}
export type EstimateInput = Partial<NewEstimate>;

/** The lines' amounts need the currency; the references must belong to the estimate's lead. */
function checkState(ctx: RecordContext, state: EstimateState): Promise<void> {
  return pricedDocument.check(ctx, state, 'estimate', { field: 'valid_until', value: state.validUntil });
}

/** Only a draft may be created, edited or deleted, and is deleted for good (tools/documents/drafts.ts). */
const drafts = defineDraftRules({
  records: estimateRecords,
  machine: estimateStatusMachine,
  check: checkState,
  totals: (state: EstimateState) => pricedDocument.totals(state),
});

/** Creates a draft with the next number; every check runs before the counter moves. */
export async function insertEstimate(ctx: RecordContext, input: NewEstimate): Promise<EstimateRecord> {
  const values = await drafts.newDraft(ctx, {
    ...pricedDocument.newState(input),
    validUntil: input.valid_until ?? null,
  });
  // Gap-free: concurrent creates queue behind the counter row (tools/documents/numbering.ts).
  const number = await nextDocumentNumber(ctx, 'estimate');
  const [row] = await ctx.db
    .insert(estimates)
    .values({ ...values, number })
    .returning(estimateColumns);
  if (!row) throw new Error('the estimate insert returned no row');
  return serializeEstimate(row);
}

export async function patchEstimate(
  ctx: RecordContext,
  id: string,
  input: EstimateInput,
): Promise<EstimateRecord> {
  const row = await drafts.patchDraft(ctx, id, {
    merge: (before) =>
      pricedDocument.merge(before, input, {
        before: { validUntil: before.validUntil },
        patch: { validUntil: input.valid_until },
      }),
  });
  return serializeEstimate(row);
}

/**
 * Deletes a draft for good, like an invoice draft; its number is not given again (the counter
 * never goes back), so the organization's sequence shows where a draft was withdrawn.
 */
export const deleteDraft = drafts.deleteDraft;

// ---------------------------------------------------------------------------------------------
// Moves

/** The estimate, locked, once it may move to `to` (the 400 invalid_transition otherwise). */
export async function lockForMove(ctx: RecordContext, id: string, to: EstimateStatus): Promise<EstimateData> {
  const before = await estimateRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  estimateStatusMachine.assertMove(toStatus(before.status), to);
  return before;
}

/**
 * draft -> sent, or a resend of a sent estimate: sent_at is now, the send count goes up (the
 * mail's idempotency key), issue_date becomes today when empty.
 */
export async function markSent(ctx: RecordContext, before: EstimateData): Promise<EstimateData> {
  estimateStatusMachine.assertMove(toStatus(before.status), 'sent');
  return estimateRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    status: 'sent',
    sentAt: ctx.now,
    sendCount: before.sendCount + 1,
    issueDate: before.issueDate ?? ctx.now.toISOString().slice(0, 10),
    updatedAt: ctx.now,
  });
}

/** sent -> accepted; accepting an accepted estimate again returns it unchanged. */
export async function acceptEstimate(ctx: RecordContext, id: string): Promise<EstimateRecord> {
  const before = await lockForMove(ctx, id, 'accepted');
  if (before.status === 'accepted') return serializeEstimate(before);
  const row = await estimateRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    status: 'accepted',
    acceptedAt: ctx.now,
    updatedAt: ctx.now,
  });
  return serializeEstimate(row);
}

/** sent -> declined with an optional reason; declining again returns it unchanged. */
export async function declineEstimate(
  ctx: RecordContext,
  id: string,
  reason: string | undefined,
): Promise<EstimateRecord> {
  const before = await lockForMove(ctx, id, 'declined');
  if (before.status === 'declined') return serializeEstimate(before);
  const row = await estimateRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    status: 'declined',
    declinedAt: ctx.now,
    declineReason: reason ?? null,
    updatedAt: ctx.now,
  });
  return serializeEstimate(row);
}

/**
 * An accepted estimate becomes a draft invoice with the same lead, contact, deal, currency, lines
 * and notes, created by the invoices area (invoice.created). Once only: while the estimate holds
 * its invoice_id a second call is a 400 naming invoice_id (the link clears if that draft is deleted,
 * and the estimate may then be converted again).
 */
export async function convertToInvoice(ctx: RecordContext, id: string): Promise<InvoiceRecord> {
  const before = await estimateRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const status = toStatus(before.status);
  if (status !== 'accepted') {
    estimateStatusMachine.refuse(
      `only an accepted estimate is converted to an invoice; this one is ${status}`,
    );
  }
  if (before.invoiceId !== null) {
    const message = `already converted to invoice ${before.invoiceId}`;
    throw new AppError('invalid_operation', {
      message,
      details: [{ field: 'invoice_id', message, code: 'already_converted' }],
    });
  }
  // A contact or deal trashed since the estimate was made is left off the invoice rather than
  // refusing the conversion; a trashed lead is the 404 of insertInvoice.
  const { contactId, opportunityId } = await keptReferences(ctx, before);
  const invoice = await insertInvoice(
    ctx,
    {
      lead_id: before.leadId,
      contact_id: contactId,
      opportunity_id: opportunityId,
      currency: before.currency,
      line_items: before.lineItems,
      notes: before.notes,
    },
    // It names no project, so no invoice-project hook is asked.
    [],
  );
  await estimateRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    invoiceId: invoice._id,
    updatedAt: ctx.now,
  });
  return invoice;
}

/**
 * The daily expiry: every draft or sent estimate whose valid_until is before `today` (UTC) becomes
 * expired. Runs without a tenant (every organization, or one); a rerun finds nothing left to move.
 * Returns the ids it expired.
 */
export async function expireEstimates(db: Executor, now: Date, orgId?: string): Promise<string[]> {
  return expireDocuments(db, estimates, EXPIRING_STATUSES, now, orgId);
}
