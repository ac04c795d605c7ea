// The email area's data functions: the scheduled email's public shape, its status machine, who
// sees which rows, scheduling (the references checked against the caller), listing, reading and
// cancelling. Sending is the 'email.send' job (sender.ts); follow-ups are follow-ups.ts.
import { and, count, desc, eq, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Role } from '../../core/access.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { AppError, type ErrorDetail, validationError } from '../../core/errors.ts';
import { iso, offsetOf, type Page, paged } from '../../core/schemas.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import type { FileStore } from '../../core/storage.ts';
import type { ToolContext } from '../../core/tool.ts';
import { getOwnAccount } from '../connected-accounts/store.ts';
import { isContactOfLead } from '../contacts/store.ts';
import { uploadProblem } from '../files/store.ts';
import { isLiveLead } from '../leads/lookups.ts';
import type { EmailHooks } from './hooks.ts';
import { insertScheduledEmail, wakeScheduledEmail } from './schedule.ts';
import {
  type ScheduledEmailRow,
  type StoredEmailAttachment,
  type StoredFollowUp,
  scheduledEmails,
} from './tables.ts';

export const SCHEDULED_EMAIL_STATUSES = ['scheduled', 'sending', 'sent', 'failed', 'cancelled'] as const;
export type ScheduledEmailStatus = (typeof SCHEDULED_EMAIL_STATUSES)[number];
const FOLLOW_UP_STATUSES = ['pending', 'created', 'cancelled'] as const;

/** The earliest and latest a mail may be scheduled, counted from the request time (the specification's bounds). */
const MIN_SCHEDULE_AHEAD_MS = 60_000;
const MAX_SCHEDULE_AHEAD_MS = 30 * 86_400_000;

/**
 * The statuses a scheduled email moves through. Only `cancelled` is a move a caller makes (cancel
 * while `scheduled`); the sender's moves are declared so the docs show the whole life of a row.
 */
export const scheduledEmailMachine = defineStateMachine({
  resource: 'scheduled email',
  field: 'status',
  states: SCHEDULED_EMAIL_STATUSES,
  initial: 'scheduled',
  moves: {
    scheduled: { sending: null, cancelled: null },
    sending: { sent: 'email.sent', scheduled: null, failed: 'email.sent' },
  },
});

function toStatus(value: string): ScheduledEmailStatus {
  return scheduledEmailMachine.parse(value);
}

const attachmentSchema = z.object({
  filename: z.string().describe('File name shown to the recipient'),
  content_type: z.string().describe('Media type of the file'),
  storage_key: z.string().describe('Object-storage key the file is read from at send time'),
  size_bytes: z.number().int().describe('Size in bytes as given when scheduling'),
});

export const scheduledEmailSchema = z
  .object({
    _id: z.string().describe('Id of the scheduled email (also the job_id of the scheduling answer)'),
    user_id: z.string().describe('The sender: the user whose connected account sends it'),
    connected_account_id: z
      .string()
      .nullable()
      .describe('The connected account it goes out through; null once removed'),
    lead_id: z.string().describe('The lead it is about; the outgoing email activity is recorded there'),
    contact_id: z.string().nullable().describe('The contact of that lead it is addressed to, or null'),
    to: z.string().describe('Recipient address'),
    cc: z.array(z.string()).describe('Copy recipients'),
    bcc: z.array(z.string()).describe('Blind copy recipients'),
    subject: z.string().describe('Subject line'),
    body_html: z.string().describe('HTML body'),
    body_text: z.string().nullable().describe('Plain-text body, or null'),
    template_id: z
      .string()
      .nullable()
      .describe('The template id given when scheduling, kept for reference; not rendered'),
    attachments: z.array(attachmentSchema).describe('Attachments, read from storage when the mail is sent'),
    scheduled_at: z.string().describe('When it is to be sent (ISO 8601)'),
    status: z.enum(SCHEDULED_EMAIL_STATUSES).describe('scheduled, sending, sent, failed or cancelled'),
    attempts: z.number().int().describe('Send attempts made so far (at most 3)'),
    last_error: z
      .string()
      .nullable()
      .describe('Why the last attempt failed (the reason of a failed email), or null'),
    message_id: z.string().nullable().describe('The Message-ID header it went out with, once sent'),
    sent_at: z.string().nullable().describe('When the SMTP server accepted it (ISO 8601), or null'),
    cancelled_at: z.string().nullable().describe('When it was cancelled (ISO 8601), or null'),
    activity_id: z.string().nullable().describe('The outgoing email activity recorded on the lead once sent'),
    follow_up: z
      .object({
        amount: z.number().int().describe('How many units to wait for a reply'),
        unit: z.enum(['days', 'hours']).describe('days or hours'),
      })
      .nullable()
      .describe('The follow-up delay: a task for the sender when no reply came within it; null for none'),
    follow_up_due_at: z
      .string()
      .nullable()
      .describe('sent_at + follow_up: when the follow-up task is created'),
    follow_up_status: z
      .enum(FOLLOW_UP_STATUSES)
      .nullable()
      .describe(
        'pending (waiting for a reply), created (the task exists), cancelled (a reply came); null before sending',
      ),
    follow_up_task_id: z.string().nullable().describe('The follow-up task, once created'),
    enroll_in_workflow_id: z
      .string()
      .nullable()
      .describe('The workflow the lead is enrolled in once sent, or null'),
    enrollment_id: z.string().nullable().describe('The enrollment made after sending, or null'),
    created_at: z.string().describe('When it was scheduled (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('A scheduled email and its outcome');
export type ScheduledEmailRecord = z.output<typeof scheduledEmailSchema>;

function followUpStatus(value: string | null): (typeof FOLLOW_UP_STATUSES)[number] | null {
  return FOLLOW_UP_STATUSES.find((s) => s === value) ?? null;
}

export function serializeScheduledEmail(row: ScheduledEmailRow): ScheduledEmailRecord {
  return {
    _id: row.id,
    user_id: row.userId,
    connected_account_id: row.connectedAccountId,
    lead_id: row.leadId,
    contact_id: row.contactId,
    to: row.toAddress,
    cc: row.cc,
    bcc: row.bcc,
    subject: row.subject,
    body_html: row.bodyHtml,
    body_text: row.bodyText,
    template_id: row.templateId,
    attachments: row.attachments.map((a) => ({
      filename: a.filename,
      content_type: a.content_type,
      storage_key: a.storage_key,
      size_bytes: a.size_bytes,
    })),
    scheduled_at: row.scheduledAt.toISOString(),
    status: toStatus(row.status),
    attempts: row.attempts,
    last_error: row.lastError,
    message_id: row.messageId,
    sent_at: iso(row.sentAt),
    cancelled_at: iso(row.cancelledAt),
    activity_id: row.activityId,
    follow_up: row.followUp ? { amount: row.followUp.amount, unit: row.followUp.unit } : null,
    follow_up_due_at: iso(row.followUpDueAt),
    follow_up_status: followUpStatus(row.followUpStatus),
    follow_up_task_id: row.followUpTaskId,
    enroll_in_workflow_id: row.enrollInWorkflowId,
    enrollment_id: row.enrollmentId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Who sees what

/** Roles that see (and may cancel) every scheduled email of the organization; others see their own. */
const SEES_ALL: ReadonlySet<Role> = new Set(['owner', 'admin', 'manager']);

/** The rows `auth` may see: all of the organization's for owners, admins and managers, else their own. */
function visibleTo(auth: AuthContext): SQL[] {
  const conditions: SQL[] = [eq(scheduledEmails.orgId, auth.orgId)];
  if (!SEES_ALL.has(auth.role)) conditions.push(eq(scheduledEmails.userId, auth.userId));
  return conditions;
}

/** The scheduled email `id` as `auth` may see it (404 otherwise), optionally locked. */
export async function getVisibleEmail(
  db: Executor,
  auth: AuthContext,
  id: string,
  lock = false,
): Promise<ScheduledEmailRow> {
  const query = db
    .select()
    .from(scheduledEmails)
    .where(and(eq(scheduledEmails.id, id), ...visibleTo(auth)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw new AppError('not_found', { message: 'Scheduled email not found' });
  return row;
}

export interface ScheduledEmailFilters extends Page {
  status?: ScheduledEmailStatus | undefined;
  lead_id?: string | undefined;
}

/** One page of the visible scheduled emails, newest first. */
export async function listScheduledEmails(db: Executor, auth: AuthContext, filters: ScheduledEmailFilters) {
  const conditions = visibleTo(auth);
  if (filters.status) conditions.push(eq(scheduledEmails.status, filters.status));
  if (filters.lead_id) conditions.push(eq(scheduledEmails.leadId, filters.lead_id));
  const where = and(...conditions);
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(scheduledEmails)
      .where(where)
      .orderBy(desc(scheduledEmails.createdAt), desc(scheduledEmails.id))
      .limit(filters.limit)
      .offset(offsetOf(filters)),
    db.select({ n: count() }).from(scheduledEmails).where(where),
  ]);
  return paged('scheduled_emails', rows.map(serializeScheduledEmail), totals[0]?.n ?? 0, filters);
}

/** Cancels a `scheduled` email: its job finds nothing to do. Other statuses: 400 invalid_transition. */
export async function cancelScheduledEmail(ctx: ToolContext, id: string): Promise<ScheduledEmailRecord> {
  const before = await getVisibleEmail(ctx.db, ctx.auth, id, true);
  scheduledEmailMachine.assertMove(toStatus(before.status), 'cancelled');
  if (before.status === 'cancelled') return serializeScheduledEmail(before);
  const [row] = await ctx.db
    .update(scheduledEmails)
    .set({ status: 'cancelled', cancelledAt: ctx.now, nextAttemptAt: null, updatedAt: ctx.now })
    .where(and(eq(scheduledEmails.id, before.id), eq(scheduledEmails.orgId, ctx.auth.orgId)))
    .returning();
  if (!row) throw new Error('scheduled email vanished under its lock');
  return serializeScheduledEmail(row);
}

// ---------------------------------------------------------------------------------------------
// Scheduling

export interface ScheduleEmailInput {
  to: string;
  cc?: string[] | undefined;
  bcc?: string[] | undefined;
  subject: string;
  body_html: string;
  body_text?: string | undefined;
  connected_account_id: string;
  lead_id: string;
  contact_id?: string | undefined;
  template_id?: string | undefined;
  attachments?: readonly StoredEmailAttachment[] | undefined;
  scheduled_at: string;
  follow_up?: StoredFollowUp | undefined;
  enroll_in_workflow_id?: string | undefined;
}

const detail = (field: string, message: string, code = 'invalid_reference'): ErrorDetail => ({
  field,
  message,
  code,
});

/**
 * The problems of a schedule's attachments, each naming `attachments.N.storage_key`: a key must be
 * an attachment upload of the caller's organization (tools/files) whose object exists with the
 * declared size. The store is shared by every organization, so a key of another's would otherwise
 * mail their file. It reads the store (a network call on S3), so the tool runs it outside its
 * transaction; the sender checks again at send time (sender.ts).
 */
export async function attachmentProblems(
  store: FileStore,
  orgId: string,
  attachments: readonly StoredEmailAttachment[],
): Promise<ErrorDetail[]> {
  const found = await Promise.all(
    attachments.map((a) => uploadProblem(store, orgId, 'attachment', a.storage_key, a.size_bytes)),
  );
  return found.flatMap((problem, i) =>
    problem === null ? [] : [detail(`attachments.${i}.storage_key`, problem)],
  );
}

/** The first enroll target (tools/workflows: a live workflow) the hooks find for `id`; null when none. */
async function findEnrollTarget(
  hooks: EmailHooks,
  db: Executor,
  orgId: string,
  id: string,
): Promise<CheckedSchedule['workflow']> {
  for (const find of hooks.enrollTargets()) {
    const target = await find(db, orgId, id);
    if (target) return target;
  }
  return null;
}

/** What a schedule would write, its references checked: every problem is a 400 naming its field. */
export interface CheckedSchedule {
  scheduledAt: Date;
  account: { id: string; email: string; displayName: string | null };
  workflow: { id: string; name: string; status: string } | null;
}

/**
 * Checks the time window against the request time and every reference against the caller: the
 * account must be the caller's own, the lead live, the contact one of that lead, the workflow a
 * live one of the organization (paused is accepted: it must be active when the mail is sent).
 */
export async function checkSchedule(
  hooks: EmailHooks,
  ctx: ToolContext,
  input: ScheduleEmailInput,
  attachmentProblems: readonly ErrorDetail[],
): Promise<CheckedSchedule> {
  const { db, auth, now } = ctx;
  const problems: ErrorDetail[] = [...attachmentProblems];
  const scheduledAt = new Date(input.scheduled_at);
  const ahead = scheduledAt.getTime() - now.getTime();
  if (!(ahead >= MIN_SCHEDULE_AHEAD_MS && ahead <= MAX_SCHEDULE_AHEAD_MS)) {
    problems.push(
      detail('scheduled_at', 'must be between 1 minute and 30 days after the request time', 'out_of_range'),
    );
  }
  const account = await getOwnAccount(db, auth.orgId, auth.userId, input.connected_account_id);
  if (!account)
    problems.push(detail('connected_account_id', 'must be the id of one of your connected accounts'));
  else if (account.status !== 'verified')
    problems.push(
      detail(
        'connected_account_id',
        `must be a verified account: this one is ${account.status}; verify it first (POST /api/v1/connected-accounts/{id}/verify)`,
        'unverified_account',
      ),
    );
  const leadLive = await isLiveLead(db, auth.orgId, input.lead_id);
  if (!leadLive) problems.push(detail('lead_id', 'must be the id of a live lead of this organization'));
  if (
    leadLive &&
    input.contact_id &&
    !(await isContactOfLead(db, auth.orgId, input.contact_id, input.lead_id))
  ) {
    problems.push(detail('contact_id', 'must be the id of a live contact of this lead'));
  }
  let workflow: CheckedSchedule['workflow'] = null;
  if (input.enroll_in_workflow_id) {
    workflow = await findEnrollTarget(hooks, db, auth.orgId, input.enroll_in_workflow_id);
    if (!workflow)
      problems.push(detail('enroll_in_workflow_id', 'must be the id of a workflow of this organization'));
  }
  if (problems.length > 0 || !account) throw validationError(problems);
  return {
    scheduledAt,
    account: { id: account.id, email: account.email, displayName: account.displayName },
    workflow,
  };
}

/** Schedules the email (the row and, after the commit, its delayed job) and answers `{message, job_id, scheduled_at}`. */
export async function scheduleEmail(
  hooks: EmailHooks,
  ctx: ToolContext,
  input: ScheduleEmailInput,
  attachmentProblems: readonly ErrorDetail[],
): Promise<{ message: string; job_id: string; scheduled_at: string }> {
  const checked = await checkSchedule(hooks, ctx, input, attachmentProblems);
  const row = await insertScheduledEmail(
    ctx.db,
    ctx.auth.orgId,
    {
      userId: ctx.auth.userId,
      connectedAccountId: checked.account.id,
      leadId: input.lead_id,
      contactId: input.contact_id ?? null,
      to: input.to,
      cc: input.cc ?? [],
      bcc: input.bcc ?? [],
      subject: input.subject,
      bodyHtml: input.body_html,
      bodyText: input.body_text ?? null,
      templateId: input.template_id ?? null,
      attachments: [...(input.attachments ?? [])],
      scheduledAt: checked.scheduledAt,
      followUp: input.follow_up ?? null,
      enrollInWorkflowId: input.enroll_in_workflow_id ?? null,
    },
    ctx.now,
  );
  const { services, now } = ctx;
  ctx.afterCommit(() => wakeScheduledEmail(services, row, now));
  return { message: 'Email scheduled', job_id: row.id, scheduled_at: row.scheduledAt.toISOString() };
}

/** The workflow enrollment whose step wrote the organization's scheduled email `id`; null when none. */
export async function enrollmentOfEmail(db: Executor, orgId: string, id: string): Promise<string | null> {
  const [row] = await db
    .select({ enrollmentId: scheduledEmails.workflowEnrollmentId })
    .from(scheduledEmails)
    .where(and(eq(scheduledEmails.orgId, orgId), eq(scheduledEmails.id, id)))
    .limit(1);
  return row?.enrollmentId ?? null;
}
