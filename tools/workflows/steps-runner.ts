// The 'workflow.step' job: runs the current step of one enrollment (tools/workflows) exactly once,
// on the leased-row kit (core/leased-rows.ts: claim, fence, retry, sweep).
//
// 1. Claim: one UPDATE takes the enrollment if it is active, its step is due (next_run_at <= now)
//    and its workflow live and active, adding 1 to `attempts` and moving next_run_at to a lease. Of
//    two jobs for one enrollment only one claims it; a job for an enrollment that is over, not yet
//    due, claimed by another, or whose workflow is paused does nothing (a paused workflow's due
//    steps wait: activation and the sweeper wake them again).
// 2. Run, in one tenant transaction acting as the enrolling user (core/system-actor.ts), and only
//    while the claim holds (same step, same attempt): the step-run row first (unique per enrollment
//    and step, so a step never runs twice even if two claims raced), then the step, taken from the
//    enrollment's own copy of the steps (the ones it began with; an edit of the workflow since
//    changes nothing here): an email is a scheduled email due now from the enrolling user's own
//    account, checked first (tools/email/sender-check.ts; the email area's sender job sends it and checks
//    again), a task is a task for the user on the lead (task.created), an sms is a message queued
//    by the messages area (tools/messages/send.ts queueAutomatedSms) to the enrolled contact's first
//    E.164 phone from the organization's first SMS-capable number, sent after the commit, or the
//    step is recorded `skipped` with the reason when telephony is not configured or there is no
//    such number. Then the enrollment advances to the next step at its delay, or completes.
// 3. A failure is retried (3 attempts in all, 1 then 5 minutes apart), then the enrollment is
//    `failed` with the reason. A failure no retry can mend (the user was deactivated or demoted,
//    the contact has no address, the account is gone or unverified) fails it at once; a lead in
//    the trash stops it.
import { and, eq, exists, isNull, sql } from 'drizzle-orm';
import { roleHolds } from '../../core/access.ts';
import type { Executor } from '../../core/db/client.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { type DefinedJob, type Sweep, singleAttemptJob } from '../../core/jobs.ts';
import {
  claimOf,
  claimRow,
  dueBefore,
  endAbandoned,
  failureReason,
  leasedTable,
  retryLater,
  SWEEP_BATCH,
  stillClaimed,
  sweepCutoff,
  wakeDue,
  writeIfClaimed,
} from '../../core/leased-rows.ts';
import type { Services } from '../../core/services.ts';
import { actorAuth, actorContext } from '../../core/system-actor.ts';
import { liveContactAddresses } from '../contacts/lookups.ts';
import { insertScheduledEmail, wakeScheduledEmail } from '../email/schedule.ts';
import { checkSender } from '../email/sender-check.ts';
import { isLiveLead } from '../leads/lookups.ts';
import { messagesCatalogue } from '../messages/catalogue.ts';
import { type QueuedMessage, queueAutomatedSms, sendQueued } from '../messages/send.ts';
import { tasksCatalogue } from '../tasks/catalogue.ts';
import { insertTask } from '../tasks/store.ts';
import { dueAfter, stepJobId, wakeEnrollment, workflowStepPayload } from './enroll.ts';
import {
  type StepDelay,
  type StoredWorkflowStep,
  type WorkflowEnrollmentRow,
  workflowEnrollments,
  workflowStepRuns,
  workflows,
} from './tables.ts';

export type StepOutcome = 'advanced' | 'completed' | 'stopped' | 'failed' | 'retry' | 'skipped';

/** A failure a retry cannot mend: the enrollment fails at once with this reason. */
class PermanentStepError extends Error {
  override name = 'PermanentStepError';
}

/** The enrollment is stopped rather than failed (its lead went to the trash). */
class StopEnrollment extends Error {
  override name = 'StopEnrollment';
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * The runner's lease (core/leased-rows.ts SENDER_LEASE: 3 attempts at one step, 1 then 5 minutes
 * apart, a 5-minute claim): an enrollment stays `active` while a step is claimed.
 */
const LEASED = leasedTable(workflowEnrollments, { due: 'nextRunAt', waiting: 'active', claimed: 'active' });

/** A step's claim holds only at the same step too (the fence's addition to the kit's). */
const sameStep = (claimed: WorkflowEnrollmentRow) => eq(workflowEnrollments.currentStep, claimed.currentStep);

/** The fence of a claimed step: still active, the same attempt, and the same step. */
const held = (claimed: WorkflowEnrollmentRow) =>
  and(stillClaimed(LEASED.columns, claimOf(LEASED, claimed)), sameStep(claimed));

/** The enrollment's workflow is live and active: only then do its steps run. */
const workflowRunning = (db: Executor) =>
  exists(
    db
      .select({ one: sql`1` })
      .from(workflows)
      .where(
        and(
          eq(workflows.id, workflowEnrollments.workflowId),
          eq(workflows.status, 'active'),
          isNull(workflows.deletedAt),
        ),
      ),
  );

/**
 * Enrollments whose last claim expired after their final attempt: nobody knows how far the step got
 * (its transaction did not commit, or it would have advanced), and no attempt is left.
 */
function failAbandoned(services: Services, now: Date, id?: string): Promise<number> {
  return endAbandoned(
    services.db.system,
    LEASED,
    { id, now },
    {
      status: 'failed',
      stopReason: 'the step runner stopped during the last attempt',
      stoppedAt: now,
      updatedAt: now,
    },
  );
}

/** Claims the enrollment's due step for one attempt; null when it is not due or not runnable. */
function claim(services: Services, id: string, now: Date): Promise<WorkflowEnrollmentRow | null> {
  const db = services.db.system;
  const options = { id, now, also: workflowRunning(db) };
  return claimRow(db, LEASED, options, { updatedAt: now });
}

/** The fence: the enrollment as claimed (same step, same attempt, still active), locked; null when taken over. */
async function lockClaimed(
  tx: Executor,
  claimed: WorkflowEnrollmentRow,
): Promise<WorkflowEnrollmentRow | null> {
  const [row] = await tx.select().from(workflowEnrollments).where(held(claimed)).for('update').limit(1);
  return row ?? null;
}

/** What a step did: the step-run status and result, and an email or a message to send after the commit. */
interface StepResult {
  status: 'done' | 'skipped';
  result: Record<string, unknown>;
  email?: { id: string; scheduledAt: Date };
  message?: QueuedMessage;
}

/** The contact's first phone written in E.164 (a leading + and 7-15 digits, separators ignored). */
async function contactPhone(tx: Executor, orgId: string, contactId: string | null): Promise<string> {
  if (contactId === null) throw new PermanentStepError('the enrolled contact no longer exists');
  const contact = await liveContactAddresses(tx, orgId, contactId);
  if (!contact) throw new PermanentStepError('the enrolled contact is no longer live');
  for (const { phone } of contact.phones) {
    const e164 = `+${phone.replace(/\D/g, '')}`;
    if (phone.trim().startsWith('+') && /^\+[1-9]\d{6,14}$/.test(e164)) return e164;
  }
  throw new PermanentStepError('the enrolled contact has no phone number in international (+) form');
}

/** An sms step: a message from the enrolling user, queued by the messages area, or skipped with the reason. */
async function smsStep(
  services: Services,
  tx: Executor,
  enrollment: WorkflowEnrollmentRow,
  step: StoredWorkflowStep,
  now: Date,
): Promise<StepResult> {
  const auth = await actorAuth(tx, enrollment.orgId, enrollment.enrolledBy);
  if (!auth)
    throw new PermanentStepError('the enrolling user is no longer an active user of the organization');
  let to = '';
  const recipient = async () => {
    if (!roleHolds(auth.role, messagesCatalogue.permissions['messages.send'])) {
      throw new PermanentStepError(
        `the enrolling user's role (${auth.role}) no longer allows sending messages`,
      );
    }
    to = await contactPhone(tx, enrollment.orgId, enrollment.contactId);
    return to;
  };
  let done: Awaited<ReturnType<typeof queueAutomatedSms>>;
  try {
    done = await queueAutomatedSms(actorContext(tx, auth, now), services, {
      leadId: enrollment.leadId,
      body: text(step, 'body'),
      recipient,
    });
  } catch (err) {
    // A refusal of the send's checks (the number, the lead) will not mend by itself.
    if (err instanceof AppError && err.status < 500) throw new PermanentStepError(failureReason(err));
    throw err;
  }
  if ('skipped' in done) return { status: 'skipped', result: { reason: done.skipped } };
  return { status: 'done', result: { message_id: done.queued.id, to }, message: done.queued };
}

async function contactAddress(tx: Executor, orgId: string, contactId: string | null): Promise<string> {
  if (contactId === null) throw new PermanentStepError('the enrolled contact no longer exists');
  const contact = await liveContactAddresses(tx, orgId, contactId);
  if (!contact) throw new PermanentStepError('the enrolled contact is no longer live');
  const email = contact.emails.find((e) => e.email.length > 0)?.email;
  if (!email) throw new PermanentStepError('the enrolled contact has no e-mail address');
  return email;
}

const text = (step: StoredWorkflowStep, key: string): string => {
  const value = step[key];
  return typeof value === 'string' ? value : '';
};

function delayOf(value: unknown): StepDelay | null {
  if (typeof value !== 'object' || value === null) return null;
  const { amount, unit } = value as { amount?: unknown; unit?: unknown };
  if (typeof amount !== 'number' || (unit !== 'minutes' && unit !== 'hours' && unit !== 'days')) return null;
  return { amount, unit };
}

/** Runs one step for the enrollment in the tenant transaction `tx`, acting as the enrolling user. */
async function runStep(
  services: Services,
  tx: Executor,
  enrollment: WorkflowEnrollmentRow,
  step: StoredWorkflowStep,
  now: Date,
): Promise<StepResult> {
  if (step.type === 'sms') return smsStep(services, tx, enrollment, step, now);
  if (step.type === 'task') {
    const auth = await actorAuth(tx, enrollment.orgId, enrollment.enrolledBy);
    if (!auth)
      throw new PermanentStepError('the enrolling user is no longer an active user of the organization');
    if (!roleHolds(auth.role, tasksCatalogue.permissions['tasks.create'])) {
      throw new PermanentStepError(
        `the enrolling user's role (${auth.role}) no longer allows creating tasks`,
      );
    }
    const dueIn = delayOf(step.due_in);
    const task = await insertTask(actorContext(tx, auth, now), {
      text: text(step, 'text'),
      leadId: enrollment.leadId,
      dueAt: dueIn ? dueAfter(now, dueIn) : null,
    });
    return { status: 'done', result: { task_id: task._id } };
  }
  // An email goes out from the enrolling user's own account, only while they may still send through
  // it (the sender of scheduled email checks again right before the SMTP session).
  const sender = await checkSender(
    tx,
    enrollment.orgId,
    enrollment.enrolledBy,
    enrollment.connectedAccountId,
  );
  if (!sender.ok) throw new PermanentStepError(sender.reason);
  const connectedAccountId = sender.account.id;
  const to = await contactAddress(tx, enrollment.orgId, enrollment.contactId);
  const bodyText = text(step, 'body_text');
  const email = await insertScheduledEmail(
    tx,
    enrollment.orgId,
    {
      userId: enrollment.enrolledBy,
      connectedAccountId,
      leadId: enrollment.leadId,
      contactId: enrollment.contactId,
      to,
      subject: text(step, 'subject'),
      bodyHtml: text(step, 'body_html'),
      bodyText: bodyText === '' ? null : bodyText,
      scheduledAt: now,
      workflowEnrollmentId: enrollment.id,
      workflowStep: enrollment.currentStep,
    },
    now,
  );
  return {
    status: 'done',
    result: { scheduled_email_id: email.id, to },
    email: { id: email.id, scheduledAt: email.scheduledAt },
  };
}

interface Ran {
  outcome: StepOutcome;
  /** The enrollment after the step, to wake its next step. */
  enrollment?: WorkflowEnrollmentRow;
  email?: { id: string; scheduledAt: Date };
  message?: QueuedMessage;
}

/** The claimed step in one tenant transaction: fence, step-run row, the step, the advance. */
async function runClaimed(services: Services, claimed: WorkflowEnrollmentRow, now: Date): Promise<Ran> {
  return services.db.withTenant(claimed.orgId, async (tx) => {
    const enrollment = await lockClaimed(tx, claimed);
    if (!enrollment) return { outcome: 'skipped' };
    const [workflow] = await tx
      .select()
      .from(workflows)
      .where(and(eq(workflows.id, enrollment.workflowId), isNull(workflows.deletedAt)))
      // A pause or delete (FOR UPDATE) waits for this step, and a step waits for them.
      .for('share')
      .limit(1);
    if (!workflow) throw new StopEnrollment('workflow_deleted');
    if (workflow.status !== 'active') {
      // Paused between the claim and now: hand the claim back, due at once, for the activation.
      await tx
        .update(workflowEnrollments)
        .set({ attempts: enrollment.attempts - 1, nextRunAt: now, updatedAt: now })
        .where(eq(workflowEnrollments.id, enrollment.id));
      return { outcome: 'skipped' };
    }
    if (!(await isLiveLead(tx, enrollment.orgId, enrollment.leadId)))
      throw new StopEnrollment('lead_deleted');
    // The steps the enrollment began with, never the workflow's current ones (docs/email.md "Workflows").
    const steps = enrollment.steps;
    const step = steps[enrollment.currentStep];
    if (step) {
      // The step-run row first: a second run of the same step (two claims racing) stops here.
      const [run] = await tx
        .insert(workflowStepRuns)
        .values({
          id: newId(now),
          orgId: enrollment.orgId,
          enrollmentId: enrollment.id,
          stepIndex: enrollment.currentStep,
          type: step.type,
          status: 'done',
          ranAt: now,
          createdAt: now,
        })
        .onConflictDoNothing()
        .returning({ id: workflowStepRuns.id });
      if (!run) return { outcome: 'skipped' };
      const done = await runStep(services, tx, enrollment, step, now);
      await tx
        .update(workflowStepRuns)
        .set({ status: done.status, result: done.result })
        .where(eq(workflowStepRuns.id, run.id));
      const advanced = await advance(tx, enrollment, steps, now);
      return {
        ...advanced,
        ...(done.email ? { email: done.email } : {}),
        ...(done.message ? { message: done.message } : {}),
      };
    }
    // Past its last step (no step to run): it is done.
    return advance(tx, enrollment, steps, now);
  });
}

/** Moves to the next step (due after its delay) or completes the enrollment. */
async function advance(
  tx: Executor,
  enrollment: WorkflowEnrollmentRow,
  steps: readonly StoredWorkflowStep[],
  now: Date,
): Promise<Ran> {
  const nextIndex = enrollment.currentStep + 1;
  const next = steps[nextIndex];
  const set = next
    ? {
        currentStep: nextIndex,
        nextRunAt: dueAfter(now, next.delay),
        attempts: 0,
        lastError: null,
        updatedAt: now,
      }
    : {
        currentStep: Math.max(nextIndex, steps.length),
        status: 'completed',
        nextRunAt: null,
        attempts: 0,
        completedAt: now,
        updatedAt: now,
      };
  const [row] = await tx
    .update(workflowEnrollments)
    .set(set)
    .where(eq(workflowEnrollments.id, enrollment.id))
    .returning();
  if (!row) throw new Error('the claimed enrollment vanished');
  return { outcome: next ? 'advanced' : 'completed', enrollment: row };
}

/** Writes the end of a failed attempt (stopped or failed), only while the claim still holds. */
async function recordFailure(
  services: Services,
  claimed: WorkflowEnrollmentRow,
  set: Partial<typeof workflowEnrollments.$inferInsert>,
): Promise<WorkflowEnrollmentRow | null> {
  return writeIfClaimed(services.db.system, LEASED, claimed, set, sameStep(claimed));
}

/**
 * The 'workflow.step' handler: one attempt at the enrollment's current step if it is due. `now` is
 * the clock (tests pass one to run steps at their times without waiting).
 */
export async function runWorkflowStep(
  services: Services,
  enrollmentId: string,
  options: { now?: Date } = {},
): Promise<StepOutcome> {
  const now = options.now ?? new Date();
  const { logger } = services;
  await failAbandoned(services, now, enrollmentId);
  const claimed = await claim(services, enrollmentId, now);
  if (!claimed) {
    logger.debug({ enrollment_id: enrollmentId }, 'workflow step not due or not runnable; job dropped');
    return 'skipped';
  }
  const fields = {
    enrollment_id: claimed.id,
    org_id: claimed.orgId,
    step: claimed.currentStep,
    attempt: claimed.attempts,
  };
  try {
    const ran = await runClaimed(services, claimed, now);
    if (ran.email) await wakeScheduledEmail(services, ran.email, now);
    if (ran.message) await sendQueued(services, ran.message);
    if (ran.outcome === 'advanced' && ran.enrollment) await wakeEnrollment(services, ran.enrollment, now);
    logger.info({ ...fields, outcome: ran.outcome }, 'workflow step ran');
    return ran.outcome;
  } catch (err) {
    const why = failureReason(err);
    if (err instanceof StopEnrollment) {
      await recordFailure(services, claimed, {
        status: 'stopped',
        stopReason: err.reason,
        nextRunAt: null,
        stoppedAt: now,
        updatedAt: now,
      });
      logger.info({ ...fields, reason: err.reason }, 'workflow enrollment stopped');
      return 'stopped';
    }
    if (err instanceof PermanentStepError || claimed.attempts >= LEASED.policy.maxAttempts) {
      await recordFailure(services, claimed, {
        status: 'failed',
        stopReason: why,
        lastError: why,
        nextRunAt: null,
        stoppedAt: now,
        updatedAt: now,
      });
      logger.warn({ ...fields, error: why }, 'workflow step failed; enrollment failed');
      return 'failed';
    }
    const { delayMs, row: retry } = await retryLater(
      services.db.system,
      LEASED,
      claimed,
      now,
      { lastError: why, updatedAt: now },
      sameStep(claimed),
    );
    logger.warn({ ...fields, error: why, retry_in_ms: delayMs }, 'workflow step failed; will retry');
    if (retry) await wakeEnrollment(services, retry, now);
    return 'retry';
  }
}

/**
 * Re-wakes active enrollments of active workflows whose step is due (or whose claim's lease expired)
 * by more than `graceMs`, so a job merely waiting in the queue is not doubled; first fails the
 * claims that expired after the last attempt. Returns how many were re-enqueued.
 */
export async function sweepDueEnrollments(
  services: Services,
  graceMs: number,
  now = new Date(),
): Promise<number> {
  await failAbandoned(services, now);
  const cutoff = sweepCutoff(now, graceMs);
  const db = services.db.system;
  const due = await db
    .select({
      id: workflowEnrollments.id,
      currentStep: workflowEnrollments.currentStep,
      attempts: workflowEnrollments.attempts,
    })
    .from(workflowEnrollments)
    .where(and(dueBefore(LEASED.columns, LEASED.dueStatuses, cutoff), workflowRunning(db)))
    .orderBy(workflowEnrollments.nextRunAt)
    .limit(SWEEP_BATCH);
  return wakeDue(
    services,
    'workflow.step',
    due.map((row) => ({ payload: { enrollmentId: row.id }, jobId: stepJobId(row) })),
    'workflow steps',
  );
}

/** One attempt per job: the enrollment schedules its own retries (see runWorkflowStep). */
export const workflowStepJob: DefinedJob = singleAttemptJob({
  name: 'workflow.step',
  payload: workflowStepPayload,
  run: (services, { enrollmentId }) => runWorkflowStep(services, enrollmentId),
});

/** Due steps of active workflows whose job was lost. */
export const enrollmentSweep: Sweep = {
  name: 'workflow steps',
  run: (services, graceMs) => sweepDueEnrollments(services, graceMs),
};
