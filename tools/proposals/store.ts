// Proposals' data functions: drafts with sections and optional priced lines (core/line-items.ts,
// exact minor units), sending (a fresh public token each time, only its SHA-256 kept), the public
// page's accept and decline (looked up by the token's hash, then written in the proposal's tenant
// transaction), and the daily expiry. Every status move goes through proposalStatusMachine, so a
// refused move is the 400 invalid_transition; editing or deleting a non-draft is refused the same
// way. A draft is deleted for good (docs/decisions.md "Proposals").
import { createHash, randomBytes } from 'node:crypto';
import { and, eq, getTableColumns, isNull } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { type ErrorDetail, validationError } from '../../core/errors.ts';
import type { Emit } from '../../core/events.ts';
import {
  documentTotalsShape,
  type LineItemInput,
  lineItemProblems,
  pricedLineSchema,
} from '../../core/line-items.ts';
import { safeSubject } from '../../core/mail.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  mergePatch,
  type RecordContext,
} from '../../core/records.ts';
import { iso } from '../../core/schemas.ts';
import { defineStateMachine, type StateMachine } from '../../core/state-machine.ts';
import { defineDraftRules } from '../documents/drafts.ts';
import { expireDocuments, expiringStates, isPastValidity } from '../documents/expiry.ts';
import { referenceProblems } from '../documents/references.ts';
import { documentRecipient } from '../documents/send.ts';
import { pricedRecordValues, totalColumns } from '../documents/shape.ts';
import { type ProposalRow, proposals, type StoredSection } from './tables.ts';

export const PROPOSAL_STATUSES = ['draft', 'sent', 'accepted', 'declined', 'expired'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/**
 * docs/billing.md "Proposals": draft -> sent -> accepted | declined; draft | sent -> expired (daily job).
 * Typed by hand: the proposal events' payloads (events.ts) are built from the record, whose status
 * comes from this machine, and the machine's moves name those events; inferring its type would be
 * a circle the compiler refuses.
 */
export const proposalStatusMachine: StateMachine<ProposalStatus> = defineStateMachine({
  resource: 'proposal',
  field: 'status',
  states: PROPOSAL_STATUSES,
  initial: 'draft',
  moves: {
    draft: { sent: 'proposal.sent', expired: null },
    sent: { accepted: 'proposal.accepted', declined: 'proposal.declined', expired: null },
  },
});

function toStatus(value: string): ProposalStatus {
  return proposalStatusMachine.parse(value);
}

// ---------------------------------------------------------------------------------------------
// Record shape

const sectionSchema = z
  .object({
    heading: z.string().describe('Section heading'),
    body_markdown: z.string().describe('Section body in Markdown (raw HTML is shown as text)'),
  })
  .describe('One section of the proposal');

export const proposalSchema = z
  .object({
    _id: z.string().describe('Proposal id (24 hex characters)'),
    lead_id: z.string().describe('Id of the lead it is addressed to'),
    opportunity_id: z
      .string()
      .nullable()
      .describe('Id of the deal it proposes (an opportunity of the lead), or null'),
    title: z.string().describe('Title shown on the public page and in the mail subject'),
    sections: z.array(sectionSchema).describe('The sections, in order'),
    currency: z.string().nullable().describe('ISO 4217 currency of the lines, or null when unpriced'),
    line_items: z
      .array(pricedLineSchema)
      .describe('The priced lines (empty when the proposal carries no prices)'),
    subtotal: documentTotalsShape.subtotal
      .nullable()
      .describe('Sum of the lines’ amounts; null without lines'),
    tax_total: documentTotalsShape.tax_total
      .nullable()
      .describe('Sum of the lines’ tax amounts; null without lines'),
    total: documentTotalsShape.total.nullable().describe('subtotal + tax_total; null without lines'),
    status: proposalStatusMachine.schema.describe('draft, sent, accepted, declined or expired'),
    valid_until: z.string().nullable().describe('Last day it may be accepted (YYYY-MM-DD), or null'),
    public_url: z
      .string()
      .nullable()
      .describe(
        'Link to the public page; only in the answer of send (the token is stored hashed and cannot be shown again), null otherwise',
      ),
    sent_at: z.string().nullable().describe('When it was last sent (ISO 8601), or null'),
    sent_to: z.string().nullable().describe('The address it was last sent to, or null'),
    accepted_at: z.string().nullable().describe('When it was accepted (ISO 8601), or null'),
    accepted_by: z
      .object({
        name: z.string().describe('Name the signer typed'),
        email: z.string().describe('E-mail the signer typed'),
      })
      .nullable()
      .describe('Who accepted it on the public page, or null'),
    signed: z.boolean().describe('True when the acceptance carried a typed signature (contract.signed)'),
    declined_at: z.string().nullable().describe('When it was declined (ISO 8601), or null'),
    decline_reason: z.string().nullable().describe('The reason given when declining, or null'),
    expired_at: z.string().nullable().describe('When the daily job expired it (ISO 8601), or null'),
    ...auditFields('proposal'),
  })
  .describe('A proposal to a lead');
export type ProposalRecord = z.output<typeof proposalSchema>;

const { search: _search, ...proposalColumns } = getTableColumns(proposals);
export type ProposalData = Omit<ProposalRow, 'search'>;

function totalsOut(row: ProposalData) {
  if (row.lineItems.length === 0 || row.currency === null) {
    return { line_items: [], subtotal: null, tax_total: null, total: null };
  }
  return pricedRecordValues({ lineItems: row.lineItems, currency: row.currency });
}

export function serializeProposal(row: ProposalData, publicUrl: string | null = null): ProposalRecord {
  return {
    _id: row.id,
    lead_id: row.leadId,
    opportunity_id: row.opportunityId,
    title: row.title,
    sections: row.sections.map((s) => ({ heading: s.heading, body_markdown: s.body_markdown })),
    currency: row.currency,
    ...totalsOut(row),
    status: toStatus(row.status),
    valid_until: row.validUntil,
    public_url: publicUrl,
    sent_at: iso(row.sentAt),
    sent_to: row.sentTo,
    accepted_at: iso(row.acceptedAt),
    accepted_by:
      row.acceptedByName !== null && row.acceptedByEmail !== null
        ? { name: row.acceptedByName, email: row.acceptedByEmail }
        : null,
    signed: row.signature !== null,
    declined_at: iso(row.declinedAt),
    decline_reason: row.declineReason,
    expired_at: iso(row.expiredAt),
    ...auditValues(row),
  };
}

/** The proposals table on the record helper: live lookups (404 "Proposal not found") and the list. */
export const proposalRecords = defineRecordTable<ProposalData>({
  label: 'Proposal',
  table: proposals,
  select: (db) => db.select(proposalColumns).from(proposals).$dynamic(),
  update: (db, set, where) => db.update(proposals).set(set).where(where).returning(proposalColumns),
});

// ---------------------------------------------------------------------------------------------
// Drafts

interface ProposalState {
  leadId: string;
  opportunityId: string | null;
  title: string;
  sections: StoredSection[];
  currency: string | null;
  lineItems: LineItemInput[];
  validUntil: string | null;
}

export interface NewProposal {
  lead_id: string;
  opportunity_id?: string | null | undefined;
  title: string;
  sections: StoredSection[];
  line_items?: LineItemInput[] | null | undefined;
  currency?: string | null | undefined;
  valid_until?: string | null | undefined;
}
export type ProposalInput = Partial<NewProposal>;

/** Lines need the currency; the opportunity must belong to the proposal's lead. */
async function checkState(ctx: RecordContext, state: ProposalState): Promise<void> {
  const details: ErrorDetail[] = [];
  if (state.lineItems.length > 0) {
    if (state.currency === null) {
      details.push({
        field: 'currency',
        message: 'is required when line_items are given',
        code: 'required',
      });
    } else {
      details.push(...lineItemProblems(state.lineItems, state.currency));
    }
  }
  details.push(...(await referenceProblems(ctx, state, 'proposal')));
  if (details.length > 0) throw validationError(details);
}

/** An unpriced proposal (no lines or no currency) has no totals. */
function totalsOf(lines: readonly LineItemInput[], currency: string | null) {
  if (lines.length === 0 || currency === null) {
    return { subtotalMinor: null, taxTotalMinor: null, totalMinor: null };
  }
  return totalColumns(lines, currency);
}

/** Only a draft may be created, edited or deleted, and is deleted for good (tools/documents/drafts.ts). */
const drafts = defineDraftRules({
  records: proposalRecords,
  machine: proposalStatusMachine,
  check: checkState,
  totals: (state: ProposalState) => totalsOf(state.lineItems, state.currency),
});

export async function insertProposal(ctx: RecordContext, input: NewProposal): Promise<ProposalRecord> {
  const values = await drafts.newDraft(ctx, {
    leadId: input.lead_id,
    opportunityId: input.opportunity_id ?? null,
    title: input.title,
    sections: input.sections,
    currency: input.currency ?? null,
    lineItems: input.line_items ?? [],
    validUntil: input.valid_until ?? null,
  });
  const [row] = await ctx.db.insert(proposals).values(values).returning(proposalColumns);
  if (!row) throw new Error('the proposal insert returned no row');
  return serializeProposal(row);
}

export async function patchProposal(
  ctx: RecordContext,
  id: string,
  input: ProposalInput,
): Promise<ProposalRecord> {
  const row = await drafts.patchDraft(ctx, id, {
    merge: (before) =>
      mergePatch<ProposalState>(
        {
          leadId: before.leadId,
          opportunityId: before.opportunityId,
          title: before.title,
          sections: before.sections,
          currency: before.currency,
          lineItems: before.lineItems,
          validUntil: before.validUntil,
        },
        {
          leadId: input.lead_id,
          opportunityId: input.opportunity_id,
          title: input.title,
          sections: input.sections,
          currency: input.currency,
          // null clears the lines (an unpriced proposal).
          lineItems: input.line_items === null ? [] : input.line_items,
          validUntil: input.valid_until,
        },
      ),
  });
  return serializeProposal(row);
}

/** Deletes a draft for good (it was never sent, so no link points at it); other states are refused. */
export const deleteDraft = drafts.deleteDraft;

// ---------------------------------------------------------------------------------------------
// Sending

/** A new public token: 32 random bytes, base64url (43 characters). */
function newPublicToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored of a token: its SHA-256 in hex. */
function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

function publicUrlOf(baseUrl: string, token: string): string {
  return `${baseUrl}/p/${token}`;
}

export interface SendPlan {
  row: ProposalData;
  to: string;
  subject: string;
}

/**
 * Checks that the proposal may be sent now (draft or sent, not past valid_until) and to whom:
 * `to`, else the first e-mail of the lead's contacts (400 naming `to` when there is none).
 * Writes nothing: the MCP preview stops here.
 */
export async function planSend(ctx: RecordContext, id: string, to: string | undefined): Promise<SendPlan> {
  const row = await proposalRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  proposalStatusMachine.assertMove(toStatus(row.status), 'sent');
  if (isPastValidity(row.validUntil, ctx.now)) {
    throw validationError([
      {
        field: 'valid_until',
        message: `is ${row.validUntil}, in the past: move it (or clear it) before sending`,
        code: 'expired',
      },
    ]);
  }
  // A proposal names no contact: the lead's oldest contact with an e-mail, unless `to` is given.
  const recipient = await documentRecipient(ctx.db, { ...row, contactId: undefined }, to, 'proposal');
  return { row, to: recipient, subject: safeSubject(`Proposal: ${row.title}`) };
}

export interface Sent {
  record: ProposalRecord;
  token: string;
  publicUrl: string;
  sendNumber: number;
  previousStatus: ProposalStatus;
}

/**
 * Marks it sent: a new token replaces the previous one (the old link stops working), sent_at and
 * sent_to are set, the send counted. The caller queues the mail, then emits with `announceSent`.
 */
export async function markSent(ctx: RecordContext, plan: SendPlan, baseUrl: string): Promise<Sent> {
  const token = newPublicToken();
  const from = toStatus(plan.row.status);
  proposalStatusMachine.assertMove(from, 'sent');
  const sendNumber = plan.row.sendCount + 1;
  const row = await proposalRecords.write(ctx.db, ctx.auth.orgId, plan.row.id, {
    status: 'sent',
    publicTokenHash: hashToken(token),
    sendCount: sendNumber,
    sentAt: ctx.now,
    sentTo: plan.to,
    updatedAt: ctx.now,
  });
  const publicUrl = publicUrlOf(baseUrl, token);
  return { record: serializeProposal(row, publicUrl), token, publicUrl, sendNumber, previousStatus: from };
}

/**
 * proposal.sent, on every send (`resend: true` after the first) with the queued mail's id. The event
 * never carries the link: webhook receivers are not meant to answer for the lead.
 */
export async function announceSent(ctx: RecordContext, sent: Sent, mailId: string | null): Promise<void> {
  await ctx.emit('proposal.sent', {
    ...sent.record,
    public_url: null,
    previous_status: sent.previousStatus,
    resend: sent.previousStatus === 'sent',
    mail_id: mailId,
  });
}

// ---------------------------------------------------------------------------------------------
// The public page

/**
 * The proposal a public token opens, read with system access (the token is the only credential, so
 * the organization is not known yet): null for a malformed or unknown token. The caller then works
 * in that organization's tenant transaction.
 */
export async function findByToken(system: Executor, token: string): Promise<ProposalData | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const [row] = await system
    .select(proposalColumns)
    .from(proposals)
    .where(and(eq(proposals.publicTokenHash, hashToken(token)), isNull(proposals.deletedAt)))
    .limit(1);
  return row ?? null;
}

/** True when the proposal can no longer be answered: expired by the job, or past valid_until already. */
export function isExpired(row: ProposalData, now: Date): boolean {
  if (row.status === 'expired') return true;
  return row.status === 'sent' && isPastValidity(row.validUntil, now);
}

export interface PublicActionContext {
  db: Executor;
  orgId: string;
  now: Date;
  emit: Emit;
}

export interface Acceptance {
  name: string;
  email: string;
  signature?: string | undefined;
}

/**
 * The proposal, locked, checked for the move to `to` by the machine. An answer is given once:
 * answering an accepted or declined proposal the same way again is refused too (the machine would
 * let a same-state "move" pass), and a sent proposal past valid_until can no longer be answered
 * even before the daily job marks it expired.
 */
async function lockForAnswer(
  ctx: PublicActionContext,
  id: string,
  to: 'accepted' | 'declined',
): Promise<ProposalData> {
  const row = await proposalRecords.getLive(ctx.db, ctx.orgId, id, true);
  const from = toStatus(row.status);
  const refuse = proposalStatusMachine.refuse;
  if (from === to) refuse(`the proposal was already ${from}; it takes no further answer`);
  proposalStatusMachine.assertMove(from, to);
  if (isExpired(row, ctx.now))
    refuse(`the proposal expired after ${row.validUntil}; it can no longer be ${to}`);
  return row;
}

/** sent -> accepted: proposal.accepted, plus contract.signed when a signature was typed. */
export async function acceptProposal(
  ctx: PublicActionContext,
  id: string,
  input: Acceptance,
): Promise<ProposalRecord> {
  const before = await lockForAnswer(ctx, id, 'accepted');
  const from = toStatus(before.status);
  const event = proposalStatusMachine.eventOf(from, 'accepted');
  const row = await proposalRecords.write(ctx.db, ctx.orgId, before.id, {
    status: 'accepted',
    acceptedAt: ctx.now,
    acceptedByName: input.name,
    acceptedByEmail: input.email,
    signature: input.signature ?? null,
    updatedAt: ctx.now,
  });
  const record = serializeProposal(row);
  if (event !== null) await ctx.emit(event, { ...record, previous_status: from });
  if (input.signature !== undefined) {
    await ctx.emit('contract.signed', {
      proposal_id: record._id,
      lead_id: record.lead_id,
      opportunity_id: record.opportunity_id,
      title: record.title,
      signer: { name: input.name, email: input.email },
      signature: input.signature,
      signed_at: ctx.now.toISOString(),
      total: record.total,
      currency: record.currency,
    });
  }
  return record;
}

/** sent -> declined: proposal.declined with the reason. */
export async function declineProposal(
  ctx: PublicActionContext,
  id: string,
  reason: string | undefined,
): Promise<ProposalRecord> {
  const before = await lockForAnswer(ctx, id, 'declined');
  const from = toStatus(before.status);
  const event = proposalStatusMachine.eventOf(from, 'declined');
  const row = await proposalRecords.write(ctx.db, ctx.orgId, before.id, {
    status: 'declined',
    declinedAt: ctx.now,
    declineReason: reason ?? null,
    updatedAt: ctx.now,
  });
  const record = serializeProposal(row);
  if (event !== null) await ctx.emit(event, { ...record, previous_status: from });
  return record;
}

// ---------------------------------------------------------------------------------------------
// Expiry

/** Withdraws a draft or sent proposal now (-> expired): its link stops working. Expired again is a no-op. */
export async function expireNow(ctx: RecordContext, id: string): Promise<ProposalRecord> {
  const before = await proposalRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const from = toStatus(before.status);
  proposalStatusMachine.assertMove(from, 'expired');
  if (from === 'expired') return serializeProposal(before);
  const row = await proposalRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    status: 'expired',
    expiredAt: ctx.now,
    updatedAt: ctx.now,
  });
  return serializeProposal(row);
}

/**
 * Moves every draft or sent proposal whose valid_until is before `day` to expired (system access,
 * every organization, or only `orgId`). The machine allows draft|sent -> expired, which emits no
 * event of its own (the catalogue has none). Returns how many expired.
 */
export async function expireProposals(system: Executor, now: Date, orgId?: string): Promise<number> {
  const states = expiringStates(proposalStatusMachine, 'expired');
  return (await expireDocuments(system, proposals, states, now, orgId)).length;
}
