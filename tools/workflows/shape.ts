// The public shapes of the workflows area: a workflow (its steps as sent) and an enrollment. Kept
// apart from store.ts so the email-send worker, which enrolls a lead after sending, can emit the
// same `workflow.triggered` payload with `serializeEnrollment` without loading the area's rules.
import { z } from 'zod';
import type { EventPayload } from '../../core/events.ts';
import { iso } from '../../core/schemas.ts';
import type { WorkflowEnrollmentRow, WorkflowStepRunRow } from './tables.ts';

export const ENROLLMENT_STATUSES = ['active', 'completed', 'stopped', 'failed'] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

function toEnrollmentStatus(value: string): EnrollmentStatus {
  return ENROLLMENT_STATUSES.find((s) => s === value) ?? 'failed';
}

export const enrollmentSchema = z
  .object({
    _id: z.string().describe('Enrollment id (24 hex characters)'),
    workflow_id: z.string().describe('The workflow the lead is enrolled in'),
    lead_id: z.string().describe('The enrolled lead'),
    contact_id: z
      .string()
      .nullable()
      .describe('The contact the email steps are sent to (a contact of the lead), or null'),
    enrolled_by: z
      .string()
      .describe('The user who enrolled the lead: email steps go out through their account'),
    connected_account_id: z
      .string()
      .nullable()
      .describe('The connected account email steps are sent through, or null when the workflow has none'),
    status: z.enum(ENROLLMENT_STATUSES).describe('active, completed, stopped or failed'),
    current_step: z
      .number()
      .int()
      .describe('Index (0-based) of the next step to run; the number of steps run once completed'),
    next_run_at: z
      .string()
      .nullable()
      .describe('When the next step is due (ISO 8601); null once the enrollment is over'),
    attempts: z.number().int().describe('Failed attempts at the current step so far'),
    stop_reason: z
      .string()
      .nullable()
      .describe(
        'Why it stopped or failed: replied, unenrolled, workflow_deleted, or the failure; null otherwise',
      ),
    last_error: z.string().nullable().describe('The last failure of a step attempt, or null'),
    source_email_id: z
      .string()
      .nullable()
      .describe('The scheduled email whose sending enrolled the lead (enroll_in_workflow_id), or null'),
    completed_at: z.string().nullable().describe('When the last step ran (ISO 8601), or null'),
    stopped_at: z.string().nullable().describe('When it was stopped or failed (ISO 8601), or null'),
    created_at: z.string().describe('When the lead was enrolled (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('A lead enrolled in a workflow');
export type EnrollmentRecord = z.output<typeof enrollmentSchema>;

/** The enrollment as the API and the `workflow.triggered` event show it. */
export function serializeEnrollment(row: WorkflowEnrollmentRow): EnrollmentRecord {
  return {
    _id: row.id,
    workflow_id: row.workflowId,
    lead_id: row.leadId,
    contact_id: row.contactId,
    enrolled_by: row.enrolledBy,
    connected_account_id: row.connectedAccountId,
    status: toEnrollmentStatus(row.status),
    current_step: row.currentStep,
    next_run_at: iso(row.nextRunAt),
    attempts: row.attempts,
    stop_reason: row.stopReason,
    last_error: row.lastError,
    source_email_id: row.sourceEmailId,
    completed_at: iso(row.completedAt),
    stopped_at: iso(row.stoppedAt),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const STEP_RUN_STATUSES = ['done', 'skipped', 'failed'] as const;

export const stepRunSchema = z
  .object({
    _id: z.string().describe('Step run id'),
    step_index: z.number().int().describe('Index (0-based) of the step in the workflow'),
    type: z.enum(['email', 'task', 'sms']).describe('The step type'),
    status: z.enum(STEP_RUN_STATUSES).describe('done, skipped (sms without telephony) or failed'),
    result: z
      .record(z.string(), z.unknown())
      .describe('What it made (task_id, scheduled_email_id) or why it was skipped or failed'),
    ran_at: z.string().describe('When it ran (ISO 8601)'),
  })
  .describe('One step an enrollment ran');

export function serializeStepRun(row: WorkflowStepRunRow): z.output<typeof stepRunSchema> {
  return {
    _id: row.id,
    step_index: row.stepIndex,
    type: row.type === 'email' || row.type === 'task' ? row.type : 'sms',
    status: row.status === 'done' || row.status === 'skipped' ? row.status : 'failed',
    result: row.result,
    ran_at: row.ranAt.toISOString(),
  };
}

/** The payload of `workflow.triggered`: the enrollment, its workflow's name and its number of steps. */
export function triggeredPayload(
  row: WorkflowEnrollmentRow,
  workflow: { name: string; steps: readonly unknown[] },
): EventPayload<'workflow.triggered'> {
  return { ...serializeEnrollment(row), workflow_name: workflow.name, step_count: workflow.steps.length };
}
