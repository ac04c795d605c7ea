// The one way a lead is enrolled in a workflow, shared by the enrollment route (tools/workflows) and
// the sending of a scheduled email with `enroll_in_workflow_id` (tools/email/sender.ts): an `active`
// enrollment whose first step is due after its delay, `workflow.triggered`, and after the commit the
// wake-up of its 'workflow.step' job. The enrollment keeps a copy of the workflow's steps as they are
// now: the engine runs those, so a later edit reaches new enrollments only. One active enrollment per
// lead and workflow (a unique index): enrolling again answers the existing one with `created: false`
// and emits nothing; alreadyEnrolled is the 409 every path answers or records for it.
import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { AppError } from '../../core/errors.ts';
import type { Emit, EventPayload } from '../../core/events.ts';
import { newId } from '../../core/ids.ts';
import type { Services } from '../../core/services.ts';
import {
  type StepDelay,
  type WorkflowEnrollmentRow,
  type WorkflowRow,
  workflowEnrollments,
  workflows,
} from './tables.ts';

export const workflowStepPayload = z.object({
  enrollmentId: z.string().describe('The workflow_enrollments row whose current step is due'),
});

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** Run the current step of one enrollment, if it is still due. */
    'workflow.step': z.output<typeof workflowStepPayload>;
  }
}

const UNIT_MS: Record<StepDelay['unit'], number> = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 };

/** The time a step with `delay` is due, counted from `from`. */
export function dueAfter(from: Date, delay: StepDelay): Date {
  return new Date(from.getTime() + delay.amount * UNIT_MS[delay.unit]);
}

export interface EnrollContext {
  /** The tenant transaction. */
  db: Executor;
  orgId: string;
  emit: Emit;
  now: Date;
}

export interface EnrollInput {
  workflow: WorkflowRow;
  leadId: string;
  contactId: string | null;
  /** The enrolling user: email steps go out through their connected account. */
  enrolledBy: string;
  connectedAccountId: string | null;
  /** The scheduled email whose sending enrolled the lead. */
  sourceEmailId?: string | null;
}

/** The live workflow `id` of the organization, locked against a concurrent pause or delete; null when none. */
export async function lockLiveWorkflow(db: Executor, orgId: string, id: string): Promise<WorkflowRow | null> {
  const [row] = await db
    .select()
    .from(workflows)
    .where(and(eq(workflows.id, id), eq(workflows.orgId, orgId), isNull(workflows.deletedAt)))
    .for('update')
    .limit(1);
  return row ?? null;
}

/**
 * Enrolls the lead: a new active enrollment (`created: true`, `workflow.triggered` emitted with
 * `payload(enrollment)`) or the one already active for this lead and workflow (`created: false`).
 * The caller checked that the workflow is active and the lead live.
 */
export async function enrollLead(
  ctx: EnrollContext,
  input: EnrollInput,
  payload: (enrollment: WorkflowEnrollmentRow) => EventPayload<'workflow.triggered'>,
): Promise<{ enrollment: WorkflowEnrollmentRow; created: boolean }> {
  const first = input.workflow.steps[0];
  const [inserted] = await ctx.db
    .insert(workflowEnrollments)
    .values({
      id: newId(ctx.now),
      orgId: ctx.orgId,
      workflowId: input.workflow.id,
      leadId: input.leadId,
      contactId: input.contactId,
      steps: input.workflow.steps,
      enrolledBy: input.enrolledBy,
      connectedAccountId: input.connectedAccountId,
      status: 'active',
      currentStep: 0,
      nextRunAt: first ? dueAfter(ctx.now, first.delay) : ctx.now,
      sourceEmailId: input.sourceEmailId ?? null,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .onConflictDoNothing()
    .returning();
  if (inserted) {
    await ctx.emit('workflow.triggered', payload(inserted));
    return { enrollment: inserted, created: true };
  }
  const [existing] = await ctx.db
    .select()
    .from(workflowEnrollments)
    .where(
      and(
        eq(workflowEnrollments.orgId, ctx.orgId),
        eq(workflowEnrollments.workflowId, input.workflow.id),
        eq(workflowEnrollments.leadId, input.leadId),
        eq(workflowEnrollments.status, 'active'),
      ),
    )
    .limit(1);
  if (!existing) throw new Error('enrollment neither inserted nor found active');
  return { enrollment: existing, created: false };
}

/** The 409 `already_enrolled` naming the lead's active enrollment in the workflow. */
export function alreadyEnrolled(enrollment: Pick<WorkflowEnrollmentRow, 'id'>): AppError {
  return new AppError('already_enrolled', {
    message: `The lead is already enrolled in this workflow (enrollment ${enrollment.id}); unenroll it first`,
    extra: { enrollment_id: enrollment.id },
  });
}

/** The job id of a step attempt: `<enrollment>:<step>` then `:<attempt>` for retries. */
export function stepJobId(
  enrollment: Pick<WorkflowEnrollmentRow, 'id' | 'currentStep' | 'attempts'>,
): string {
  const base = `${enrollment.id}:${enrollment.currentStep}`;
  return enrollment.attempts === 0 ? base : `${base}:${enrollment.attempts + 1}`;
}

/** Enqueues the enrollment's due step after the commit; a failure is logged (the sweeper finds it). */
export async function wakeEnrollment(
  services: Services,
  enrollment: Pick<WorkflowEnrollmentRow, 'id' | 'currentStep' | 'attempts' | 'nextRunAt'>,
  now = new Date(),
): Promise<void> {
  if (!enrollment.nextRunAt) return;
  const delayMs = Math.max(0, enrollment.nextRunAt.getTime() - now.getTime());
  try {
    await services.jobs.enqueue(
      'workflow.step',
      { enrollmentId: enrollment.id },
      { delayMs, jobId: stepJobId(enrollment) },
    );
  } catch (err) {
    services.logger.warn(
      { err, enrollment_id: enrollment.id },
      'could not enqueue a workflow step; the sweeper will',
    );
  }
}
