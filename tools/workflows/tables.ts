// The workflows area's tables: sequences (a workflow is an ordered list of steps, each with a delay),
// the enrollments of leads in them, and one row per step an enrollment ran. An enrollment's
// `current_step` and `next_run_at` are the truth of where it stands; the 'workflow.step' job only
// carries the enrollment id, and the step-run row (unique per enrollment and step) makes running a
// step twice impossible even when two jobs race.
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, ts, updatedAt } from '../../core/db/schema.ts';
import { connectedAccounts } from '../connected-accounts/tables.ts';
import { contacts } from '../contacts/tables.ts';
import { leadRef } from '../leads/tables.ts';

export interface StepDelay {
  amount: number;
  unit: 'minutes' | 'hours' | 'days';
}

/** One step as stored; the type's own fields (subject and body, task text, sms body) beside the delay. */
export interface StoredWorkflowStep {
  type: 'email' | 'task' | 'sms';
  delay: StepDelay;
  [field: string]: unknown;
}

export const workflows = pgTable(
  'workflows',
  {
    id: id(),
    orgId: orgId(),
    ownerId: text('owner_id'),
    name: text('name').notNull(),
    description: text('description'),
    /** active | paused */
    status: text('status').notNull().default('paused'),
    steps: jsonb('steps').$type<StoredWorkflowStep[]>().notNull(),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('workflows_live_created_idx')
      .on(t.orgId, t.createdAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is null`),
  ],
);

export type WorkflowRow = typeof workflows.$inferSelect;

export const workflowEnrollments = pgTable(
  'workflow_enrollments',
  {
    id: id(),
    orgId: orgId(),
    workflowId: text('workflow_id')
      .notNull()
      .references(() => workflows.id, { onDelete: 'cascade' }),
    leadId: leadRef().notNull(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    /**
     * The workflow's steps as they were when the lead was enrolled: the engine runs these, never the
     * workflow's current ones, so an edit (by anyone) changes no running enrollment (docs/email.md
     * "Workflows").
     */
    steps: jsonb('steps').$type<StoredWorkflowStep[]>().notNull(),
    /** The enrolling user: email steps go out through their connected account, tasks are theirs. */
    enrolledBy: text('enrolled_by').notNull(),
    connectedAccountId: text('connected_account_id').references(() => connectedAccounts.id, {
      onDelete: 'set null',
    }),
    /** active | completed | stopped | failed */
    status: text('status').notNull().default('active'),
    /** Index of the next step to run (= steps.length once completed). */
    currentStep: integer('current_step').notNull().default(0),
    /** When the next step is due (or a claim's lease); null once the enrollment is over. */
    nextRunAt: ts('next_run_at'),
    attempts: integer('attempts').notNull().default(0),
    /** replied | unenrolled | workflow_deleted | lead_deleted | a failure's reason */
    stopReason: text('stop_reason'),
    lastError: text('last_error'),
    /** The scheduled email whose sending enrolled the lead (enroll_in_workflow_id). */
    sourceEmailId: text('source_email_id'),
    completedAt: ts('completed_at'),
    stoppedAt: ts('stopped_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // One enrollment per lead and workflow at a time.
    uniqueIndex('workflow_enrollments_active_idx')
      .on(t.orgId, t.workflowId, t.leadId)
      .where(sql`${t.status} = 'active'`),
    index('workflow_enrollments_due_idx').on(t.nextRunAt).where(sql`${t.status} = 'active'`),
    index('workflow_enrollments_workflow_idx').on(t.workflowId, t.createdAt.desc(), t.id.desc()),
    index('workflow_enrollments_lead_idx').on(t.leadId),
    index('workflow_enrollments_contact_idx').on(t.contactId),
    index('workflow_enrollments_account_idx').on(t.connectedAccountId),
  ],
);

export type WorkflowEnrollmentRow = typeof workflowEnrollments.$inferSelect;

/** What one step did for one enrollment: at most one row per (enrollment, step). */
export const workflowStepRuns = pgTable(
  'workflow_step_runs',
  {
    id: id(),
    orgId: orgId(),
    enrollmentId: text('enrollment_id')
      .notNull()
      .references(() => workflowEnrollments.id, { onDelete: 'cascade' }),
    stepIndex: integer('step_index').notNull(),
    type: text('type').notNull(),
    /** done | skipped | failed */
    status: text('status').notNull(),
    /** What it made (task_id, scheduled_email_id) or why it was skipped or failed. */
    result: jsonb('result').$type<Record<string, unknown>>().notNull().default({}),
    ranAt: ts('ran_at').notNull().default(sql`now()`),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('workflow_step_runs_step_idx').on(t.enrollmentId, t.stepIndex)],
);

export type WorkflowStepRunRow = typeof workflowStepRuns.$inferSelect;
