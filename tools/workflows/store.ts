// Workflows' data functions: definitions (create, merge-update, soft delete that stops their
// enrollments, activate and pause through workflowStatusMachine) and enrollments (the checks before
// enrolling, the enrollment itself through enroll.ts's enrollLead, listing, reading with the step
// runs, unenrolling). The steps themselves run in steps-runner.ts. The public shapes are in
// shape.ts and re-exported here, so other areas (the email-send worker enrolling a lead after
// sending) import them from the store.
import { and, asc, count, eq } from 'drizzle-orm';
import { z } from 'zod';
import { roleHolds } from '../../core/access.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { AppError, notFound, validationError } from '../../core/errors.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  mergePatch,
  newRecordStamp,
  type RecordContext,
} from '../../core/records.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import type { ToolContext } from '../../core/tool.ts';
import { defaultAccountOf, getOwnAccount } from '../connected-accounts/store.ts';
import { liveContactsOfLead } from '../contacts/lookups.ts';
import { getLiveLead } from '../leads/store.ts';
import { alreadyEnrolled, dueAfter, enrollLead, lockLiveWorkflow, wakeEnrollment } from './enroll.ts';
import {
  ENROLLMENT_STATUSES,
  type EnrollmentRecord,
  enrollmentSchema,
  serializeEnrollment,
  serializeStepRun,
  stepRunSchema,
  triggeredPayload,
} from './shape.ts';
import { hasEmailStep, type StepInput, serializeStep, stepSchema, storeSteps } from './steps.ts';
import {
  type StoredWorkflowStep,
  type WorkflowEnrollmentRow,
  type WorkflowRow,
  workflowEnrollments,
  workflowStepRuns,
  workflows,
} from './tables.ts';

export type { EnrollmentRecord } from './shape.ts';

import { workflowsCatalogue } from './catalogue.ts';

export const WORKFLOW_STATUSES = ['active', 'paused'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

/**
 * A workflow is created paused (or active when asked) and moves between the two; pausing holds its
 * enrollments where they are (a due step waits), activating lets them run on.
 */
export const workflowStatusMachine = defineStateMachine({
  resource: 'workflow',
  field: 'status',
  states: WORKFLOW_STATUSES,
  initial: 'paused',
  moves: { paused: { active: null }, active: { paused: null } },
});

function toWorkflowStatus(value: string): WorkflowStatus {
  return value === 'active' ? 'active' : 'paused';
}

// ---------------------------------------------------------------------------------------------
// Record shape

export const workflowSchema = z
  .object({
    _id: z.string().describe('Workflow id (24 hex characters)'),
    name: z.string().describe('Name of the workflow'),
    description: z.string().nullable().describe('What it is for, or null'),
    status: z.enum(WORKFLOW_STATUSES).describe('active (steps run) or paused (due steps wait)'),
    steps: z.array(stepSchema).describe('The steps, in order'),
    ...auditFields('workflow'),
  })
  .describe('A workflow (sequence) of email, task and sms steps');
export type WorkflowRecord = z.output<typeof workflowSchema>;

export const enrollmentCountsSchema = z
  .object({
    active: z.number().int().describe('Enrollments running now'),
    completed: z.number().int().describe('Enrollments that ran every step'),
    stopped: z
      .number()
      .int()
      .describe('Enrollments stopped (reply, unenrolled, workflow deleted, lead gone)'),
    failed: z.number().int().describe('Enrollments whose step failed for good'),
  })
  .describe('How many enrollments the workflow has, by status');

export const workflowDetailSchema = workflowSchema
  .extend({ enrollment_counts: enrollmentCountsSchema })
  .describe('A workflow with its enrollment counts');

export function serializeWorkflow(row: WorkflowRow): WorkflowRecord {
  return {
    _id: row.id,
    name: row.name,
    description: row.description,
    status: toWorkflowStatus(row.status),
    steps: row.steps.map(serializeStep),
    ...auditValues(row),
  };
}

/** The workflows table on the record helper: live lookups (404 "Workflow not found") and the list. */
export const workflowRecords = defineRecordTable<WorkflowRow>({
  label: 'Workflow',
  table: workflows,
  select: (db) => db.select().from(workflows).$dynamic(),
  update: (db, set, where) => db.update(workflows).set(set).where(where).returning(),
});

export async function enrollmentCounts(
  db: Executor,
  orgId: string,
  workflowId: string,
): Promise<z.output<typeof enrollmentCountsSchema>> {
  const rows = await db
    .select({ status: workflowEnrollments.status, n: count() })
    .from(workflowEnrollments)
    .where(and(eq(workflowEnrollments.orgId, orgId), eq(workflowEnrollments.workflowId, workflowId)))
    .groupBy(workflowEnrollments.status);
  const counts = { active: 0, completed: 0, stopped: 0, failed: 0 };
  for (const row of rows) {
    if (row.status in counts) counts[row.status as keyof typeof counts] = Number(row.n);
  }
  return counts;
}

// ---------------------------------------------------------------------------------------------
// Definitions

export interface NewWorkflow {
  name: string;
  description?: string | null | undefined;
  status?: WorkflowStatus | undefined;
  steps: StepInput[];
}
export type WorkflowInput = Partial<NewWorkflow>;

export async function insertWorkflow(ctx: RecordContext, input: NewWorkflow): Promise<WorkflowRecord> {
  const status = input.status ?? workflowStatusMachine.initial;
  workflowStatusMachine.assertMove(workflowStatusMachine.initial, status);
  const [row] = await ctx.db
    .insert(workflows)
    .values({
      ...newRecordStamp(ctx),
      ownerId: ctx.auth.userId,
      name: input.name,
      description: input.description ?? null,
      status,
      steps: storeSteps(input.steps),
    })
    .returning();
  if (!row) throw new Error('the workflow insert returned no row');
  return serializeWorkflow(row);
}

interface WorkflowState {
  name: string;
  description: string | null;
  status: WorkflowStatus;
  steps: StoredWorkflowStep[];
}

/**
 * The live workflow `id`, locked, for a change by the caller: their own (created_by), or anyone's
 * with workflows.manage_any (owners, admins, managers). A member changing another's workflow is a
 * 403: its email steps would then go out from the enrolling users' accounts with the member's text
 * (docs/security.md "Workflows").
 */
async function changeableWorkflow(ctx: RecordContext, id: string): Promise<WorkflowRow> {
  const row = await workflowRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  assertMayChange(ctx.auth, row);
  return row;
}

function assertMayChange(auth: AuthContext, row: WorkflowRow): void {
  if (
    row.createdBy === auth.userId ||
    roleHolds(auth.role, workflowsCatalogue.permissions['workflows.manage_any'])
  )
    return;
  throw new AppError('forbidden', {
    message:
      'Only its creator may change this workflow; changing a workflow someone else created requires the workflows.manage_any permission',
    extra: { required_permission: 'workflows.manage_any' },
  });
}

/**
 * Changes the fields sent. Steps may change while leads are enrolled: each enrollment runs the steps
 * it began with (its own copy), so new steps reach new enrollments only (docs/email.md "Workflows").
 * A status change is a move of the machine, as through activate/pause.
 */
export async function patchWorkflow(
  ctx: ToolContext,
  id: string,
  input: WorkflowInput,
): Promise<WorkflowRecord> {
  const before = await changeableWorkflow(ctx, id);
  const from = toWorkflowStatus(before.status);
  const next = mergePatch<WorkflowState>(
    { name: before.name, description: before.description, status: from, steps: before.steps },
    {
      name: input.name,
      description: input.description,
      status: input.status,
      steps: input.steps === undefined ? undefined : storeSteps(input.steps),
    },
  );
  workflowStatusMachine.assertMove(from, next.status);
  const row = await workflowRecords.write(ctx.db, ctx.auth.orgId, before.id, { ...next, updatedAt: ctx.now });
  if (from === 'paused' && next.status === 'active') await wakeHeldEnrollments(ctx, row.id);
  return serializeWorkflow(row);
}

/** activate_workflow / pause_workflow: the move, and on activation the wake-up of held enrollments. */
export async function moveWorkflow(
  ctx: ToolContext,
  id: string,
  to: WorkflowStatus,
): Promise<WorkflowRecord> {
  const before = await changeableWorkflow(ctx, id);
  const from = toWorkflowStatus(before.status);
  workflowStatusMachine.assertMove(from, to);
  if (from === to) return serializeWorkflow(before);
  const row = await workflowRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    status: to,
    updatedAt: ctx.now,
  });
  if (to === 'active') await wakeHeldEnrollments(ctx, row.id);
  return serializeWorkflow(row);
}

/**
 * After the commit, wakes every active enrollment of the workflow at its own next_run_at: the jobs
 * of steps that fell due while it was paused found it paused and did nothing.
 */
async function wakeHeldEnrollments(ctx: ToolContext, workflowId: string): Promise<void> {
  const held = await ctx.db
    .select()
    .from(workflowEnrollments)
    .where(
      and(
        eq(workflowEnrollments.orgId, ctx.auth.orgId),
        eq(workflowEnrollments.workflowId, workflowId),
        eq(workflowEnrollments.status, 'active'),
      ),
    );
  ctx.afterCommit(async () => {
    for (const enrollment of held) await wakeEnrollment(ctx.services, enrollment, ctx.now);
  });
}

/**
 * Deletes the workflow (soft: deleted_at, so its enrollments and step runs stay readable in the
 * records of what was sent) and stops its active enrollments with reason `workflow_deleted`.
 */
export async function deleteWorkflow(ctx: RecordContext, id: string): Promise<number> {
  const before = await changeableWorkflow(ctx, id);
  await workflowRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    deletedAt: ctx.now,
    deletedBy: ctx.auth.userId,
    updatedAt: ctx.now,
  });
  const stopped = await stopEnrollments(
    ctx.db,
    and(
      eq(workflowEnrollments.orgId, ctx.auth.orgId),
      eq(workflowEnrollments.workflowId, before.id),
      eq(workflowEnrollments.status, 'active'),
    ),
    'workflow_deleted',
    ctx.now,
  );
  return stopped.length;
}

/** Stops the active enrollments `where` selects (status stopped with `reason`); returns them. */
export async function stopEnrollments(
  db: Executor,
  where: ReturnType<typeof and>,
  reason: string,
  now: Date,
): Promise<WorkflowEnrollmentRow[]> {
  return db
    .update(workflowEnrollments)
    .set({ status: 'stopped', stopReason: reason, stoppedAt: now, nextRunAt: null, updatedAt: now })
    .where(and(where, eq(workflowEnrollments.status, 'active')))
    .returning();
}

// ---------------------------------------------------------------------------------------------
// Enrollments

export interface EnrollRequest {
  lead_id: string;
  contact_id?: string | undefined;
  connected_account_id?: string | undefined;
}

export interface EnrollmentPlan {
  workflow: WorkflowRow;
  leadId: string;
  leadName: string;
  contact: { id: string; name: string; email: string | null } | null;
  account: { id: string; email: string } | null;
  /** When each step would run if nothing holds it (pauses, retries). */
  schedule: { step_index: number; type: StoredWorkflowStep['type']; due_at: string }[];
}

const field = (name: string, message: string, code: string) =>
  validationError([{ field: name, message, code }]);

/** The first address of a contact's e-mails, lower-cased, or null. */
function firstEmail(emails: readonly { email: string }[]): string | null {
  const first = emails.find((e) => e.email.length > 0);
  return first ? first.email.toLowerCase() : null;
}

/** The contact for the enrollment: the one given (a live contact of the lead) or the lead's oldest with an e-mail. */
async function pickContact(
  db: Executor,
  orgId: string,
  leadId: string,
  contactId: string | undefined,
  needsEmail: boolean,
): Promise<EnrollmentPlan['contact']> {
  if (contactId !== undefined) {
    const [row] = await liveContactsOfLead(db, orgId, leadId, contactId);
    if (!row) throw field('contact_id', 'must be the id of a live contact of the lead', 'invalid_contact');
    const email = firstEmail(row.emails);
    if (needsEmail && email === null) {
      throw field('contact_id', 'has no e-mail address, and the workflow sends e-mail', 'no_email');
    }
    return { id: row.id, name: row.name, email };
  }
  const rows = await liveContactsOfLead(db, orgId, leadId);
  const withEmail = rows.find((row) => firstEmail(row.emails) !== null);
  if (withEmail) return { id: withEmail.id, name: withEmail.name, email: firstEmail(withEmail.emails) };
  if (needsEmail) {
    throw field(
      'contact_id',
      'is required: none of the lead’s contacts has an e-mail address, and the workflow sends e-mail',
      'required',
    );
  }
  const first = rows[0];
  return first ? { id: first.id, name: first.name, email: null } : null;
}

/**
 * The account email steps go out through: the one given (it must be the enrolling user's own:
 * getOwnAccount) or their default one (defaultAccountOf: the most recently verified, else the
 * newest), and none when the workflow sends no e-mail and none was given.
 */
async function pickAccount(
  db: Executor,
  orgId: string,
  userId: string,
  accountId: string | undefined,
  needsAccount: boolean,
): Promise<EnrollmentPlan['account']> {
  if (accountId !== undefined) {
    const row = await getOwnAccount(db, orgId, userId, accountId);
    if (!row) {
      throw field(
        'connected_account_id',
        'must be the id of one of your own connected accounts',
        'invalid_connected_account',
      );
    }
    return { id: row.id, email: row.email };
  }
  if (!needsAccount) return null;
  const row = await defaultAccountOf(db, orgId, userId);
  if (!row) {
    throw field(
      'connected_account_id',
      'is required: the workflow sends e-mail and you have no connected account (add one under /connected-accounts)',
      'required',
    );
  }
  return { id: row.id, email: row.email };
}

/** The times the steps would run from `from` on, each after the previous one's delay. */
function stepSchedule(steps: readonly StoredWorkflowStep[], from: Date): EnrollmentPlan['schedule'] {
  let at = from;
  return steps.map((step, index) => {
    at = dueAfter(at, step.delay);
    return { step_index: index, type: step.type, due_at: at.toISOString() };
  });
}

/**
 * Every check before enrolling, writing nothing (the MCP preview stops here): the workflow live (404)
 * and active (409), locked against a concurrent pause or delete; the lead live (400 naming lead_id);
 * the contact; the connected account when the workflow sends e-mail.
 */
export async function planEnrollment(
  ctx: RecordContext,
  workflowId: string,
  input: EnrollRequest,
): Promise<EnrollmentPlan> {
  const orgId = ctx.auth.orgId;
  const workflow = await lockLiveWorkflow(ctx.db, orgId, workflowId);
  if (!workflow) throw notFound('Workflow');
  if (workflow.status !== 'active') {
    throw new AppError('conflict', {
      message: 'The workflow is paused: activate it (POST /workflows/{id}/activate) before enrolling leads',
    });
  }
  const lead = await getLiveLead(ctx.db, orgId, input.lead_id).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'not_found') {
      throw field('lead_id', 'must be the id of a live lead of this organization', 'invalid_lead');
    }
    throw err;
  });
  const sendsEmail = hasEmailStep(workflow.steps);
  const contact = await pickContact(ctx.db, orgId, lead.id, input.contact_id, sendsEmail);
  const account = await pickAccount(ctx.db, orgId, ctx.auth.userId, input.connected_account_id, sendsEmail);
  return {
    workflow,
    leadId: lead.id,
    leadName: lead.name,
    contact,
    account,
    schedule: stepSchedule(workflow.steps, ctx.now),
  };
}

/**
 * Enrolls the planned lead (workflow.triggered) and wakes its first step after the commit. A lead
 * already active in the workflow is a 409 `already_enrolled` naming that enrollment.
 */
export async function enrollPlanned(ctx: ToolContext, plan: EnrollmentPlan): Promise<EnrollmentRecord> {
  const { enrollment, created } = await enrollLead(
    { db: ctx.db, orgId: ctx.auth.orgId, emit: ctx.emit, now: ctx.now },
    {
      workflow: plan.workflow,
      leadId: plan.leadId,
      contactId: plan.contact?.id ?? null,
      enrolledBy: ctx.auth.userId,
      connectedAccountId: plan.account?.id ?? null,
    },
    (row) => triggeredPayload(row, plan.workflow),
  );
  if (!created) throw alreadyEnrolled(enrollment);
  ctx.afterCommit(() => wakeEnrollment(ctx.services, enrollment, ctx.now));
  return serializeEnrollment(enrollment);
}

/** The enrollment of the workflow (live or deleted: its history stays readable), or a 404. */
async function getEnrollmentRow(
  db: Executor,
  orgId: string,
  workflowId: string,
  enrollmentId: string,
  lock = false,
): Promise<WorkflowEnrollmentRow> {
  const query = db
    .select()
    .from(workflowEnrollments)
    .where(
      and(
        eq(workflowEnrollments.id, enrollmentId),
        eq(workflowEnrollments.orgId, orgId),
        eq(workflowEnrollments.workflowId, workflowId),
      ),
    )
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Enrollment');
  return row;
}

export const enrollmentDetailSchema = enrollmentSchema
  .extend({ step_runs: z.array(stepRunSchema).describe('The steps it ran, in order') })
  .describe('An enrollment with the steps it ran');

export async function readEnrollment(
  db: Executor,
  orgId: string,
  workflowId: string,
  enrollmentId: string,
): Promise<z.output<typeof enrollmentDetailSchema>> {
  await workflowRecords.getLive(db, orgId, workflowId);
  const row = await getEnrollmentRow(db, orgId, workflowId, enrollmentId);
  const runs = await db
    .select()
    .from(workflowStepRuns)
    .where(and(eq(workflowStepRuns.orgId, orgId), eq(workflowStepRuns.enrollmentId, row.id)))
    .orderBy(asc(workflowStepRuns.stepIndex));
  return { ...serializeEnrollment(row), step_runs: runs.map(serializeStepRun) };
}

/** Stops an active enrollment (reason `unenrolled`); one already over is a 409 saying how it ended. */
export async function unenroll(
  ctx: RecordContext,
  workflowId: string,
  enrollmentId: string,
): Promise<EnrollmentRecord> {
  await workflowRecords.getLive(ctx.db, ctx.auth.orgId, workflowId);
  const row = await getEnrollmentRow(ctx.db, ctx.auth.orgId, workflowId, enrollmentId, true);
  if (row.status !== 'active') {
    throw new AppError('conflict', {
      message: `The enrollment is already ${row.status}${row.stopReason ? ` (${row.stopReason})` : ''}`,
    });
  }
  const [stopped] = await stopEnrollments(ctx.db, eq(workflowEnrollments.id, row.id), 'unenrolled', ctx.now);
  if (!stopped) throw new Error('the active enrollment was not stopped');
  return serializeEnrollment(stopped);
}

export const ENROLLMENT_FILTER = z.enum(ENROLLMENT_STATUSES);
