// Workflow tools: definitions (list, get, create, update, delete, activate, pause) and enrollments
// (enroll, list, get, unenroll). enroll_in_workflow reaches outside (its email steps send mail), so
// it follows the `confirm` convention of core/confirm.ts. The data functions are in store.ts; the steps
// run in steps-runner.ts.
import { and, desc, eq, ilike } from 'drizzle-orm';
import { z } from 'zod';
import { confirmShape, sendResultShape } from '../../core/confirm.ts';
import { escapeLike } from '../../core/db/sql.ts';
import type { SortColumn } from '../../core/records.ts';
import { listParams, messageOutput, objectId, offsetOf, paged, pagedOutput } from '../../core/schemas.ts';
import { describeMoves } from '../../core/state-machine.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { enrollmentSchema, serializeEnrollment } from './shape.ts';
import { serializeStep, stepsInput } from './steps.ts';
import {
  deleteWorkflow,
  ENROLLMENT_FILTER,
  enrollmentCounts,
  enrollmentDetailSchema,
  enrollPlanned,
  insertWorkflow,
  moveWorkflow,
  patchWorkflow,
  planEnrollment,
  readEnrollment,
  serializeWorkflow,
  unenroll,
  WORKFLOW_STATUSES,
  workflowDetailSchema,
  workflowRecords,
  workflowSchema,
  workflowStatusMachine,
} from './store.ts';
import { type StoredWorkflowStep, workflowEnrollments, workflows } from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Input fields

const nameField = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine(NO_NUL, nulMessage)
  .describe('Name of the workflow, 1-200 characters');
const descriptionField = z
  .string()
  .max(2000)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('What the workflow is for, at most 2000 characters; null clears it');
const statusField = z
  .enum(WORKFLOW_STATUSES)
  .describe('active (steps run at their times) or paused (due steps wait until it is activated)');

const workflowIdShape = { id: objectId('workflow') };
const enrollmentIdShape = { ...workflowIdShape, enrollmentId: objectId('enrollment') };

type WorkflowPermission =
  | 'workflows.view'
  | 'workflows.create'
  | 'workflows.edit'
  | 'workflows.delete'
  | 'workflows.enroll';
const access = (kind: 'read' | 'write', permission: WorkflowPermission) =>
  ({ kind, resource: 'email', permission }) as const;

const workflowOutput = z.object({ workflow: workflowSchema });
const MOVES = describeMoves(workflowStatusMachine);
const OWN_ONLY =
  'Members change only the workflows they created (another’s is a 403); owners, admins and managers change any.';

const SORT_FIELDS = ['created_at', 'updated_at', 'name'] as const;
const SORT_COLUMNS = {
  created_at: workflows.createdAt,
  updated_at: workflows.updatedAt,
  name: workflows.name,
} satisfies Record<(typeof SORT_FIELDS)[number], SortColumn>;

// ---------------------------------------------------------------------------------------------
// Definitions

export const listWorkflows = defineTool({
  name: 'list_workflows',
  title: 'List workflows',
  description:
    'Lists the workflows (sequences) of the organization, newest first by default. Filter by `status` (active/paused); ' +
    '`search` matches part of the name. Paginated: returns `workflows` plus `total`, `page`, `limit`, `totalPages`; ' +
    '`limit` is 1-100 (default 25).',
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    status: z.enum(WORKFLOW_STATUSES).optional().describe('Only workflows in this status'),
  }),
  output: pagedOutput('workflows', workflowSchema),
  access: access('read', 'workflows.view'),
  toolset: 'email',
  async handler(input, { db, auth }) {
    const conditions = workflowRecords.liveConditions(auth.orgId);
    if (input.status) conditions.push(eq(workflows.status, input.status));
    return workflowRecords.list(db, 'workflows', serializeWorkflow, input, {
      conditions,
      sortColumns: SORT_COLUMNS,
      match: (text) => ({ where: ilike(workflows.name, `%${escapeLike(text)}%`) }),
    });
  },
});

export const getWorkflow = defineTool({
  name: 'get_workflow',
  title: 'Get a workflow',
  description:
    'Returns one workflow by id with its steps and how many enrollments it has by status (active, completed, stopped, ' +
    'failed). Find ids with list_workflows.',
  input: z.strictObject(workflowIdShape),
  output: z.object({ workflow: workflowDetailSchema }),
  access: access('read', 'workflows.view'),
  toolset: 'email',
  async handler(input, { db, auth }) {
    const row = await workflowRecords.getLive(db, auth.orgId, input.id);
    return {
      workflow: {
        ...serializeWorkflow(row),
        enrollment_counts: await enrollmentCounts(db, auth.orgId, row.id),
      },
    };
  },
});

export const createWorkflow = defineTool({
  name: 'create_workflow',
  title: 'Create a workflow',
  description:
    "Creates a workflow (nurture sequence) of 1-50 ordered steps, each after its `delay`: email (to the enrolled contact through the enrolling user's connected account), task (for the enrolling user) or sms (to the enrolled contact from the organization's first SMS-capable number; skipped without telephony). Created paused unless `status` is active. Enroll leads with enroll_in_workflow.",
  input: z.strictObject({
    name: nameField,
    description: descriptionField.optional(),
    status: statusField.optional().describe('active or paused (default paused)'),
    steps: stepsInput,
  }),
  output: workflowOutput,
  access: access('write', 'workflows.create'),
  toolset: 'email',
  async handler(input, ctx) {
    return { workflow: await insertWorkflow(ctx, input) };
  },
});

export const updateWorkflow = defineTool({
  name: 'update_workflow',
  title: 'Update a workflow',
  description: `Changes only the fields sent; \`steps\` replaces the whole list and applies to new enrollments only. A status change is a move (${MOVES}). ${OWN_ONLY}`,
  input: z.strictObject({
    ...workflowIdShape,
    name: nameField.optional(),
    description: descriptionField.optional(),
    status: statusField.optional(),
    steps: stepsInput.optional().describe('Replaces every step (1-50)'),
  }),
  output: workflowOutput,
  access: access('write', 'workflows.edit'),
  annotations: { idempotentHint: true },
  toolset: 'email',
  async handler(input, ctx) {
    const { id, ...changes } = input;
    return { workflow: await patchWorkflow(ctx, id, changes) };
  },
});

export const deleteWorkflowTool = defineTool({
  name: 'delete_workflow',
  title: 'Delete a workflow',
  description:
    'Deletes a workflow: it disappears from lists and its active enrollments stop (reason workflow_deleted); steps ' +
    `already run (emails scheduled, tasks created) stay. It cannot be restored. ${OWN_ONLY}`,
  input: z.strictObject(workflowIdShape),
  output: messageOutput,
  access: access('write', 'workflows.delete'),
  annotations: { destructiveHint: true },
  toolset: 'email',
  async handler(input, ctx) {
    const stopped = await deleteWorkflow(ctx, input.id);
    return {
      message:
        stopped === 0 ? 'Workflow deleted' : `Workflow deleted; ${stopped} active enrollment(s) stopped`,
    };
  },
});

export const activateWorkflow = defineTool({
  name: 'activate_workflow',
  title: 'Activate a workflow',
  description:
    'Activates a paused workflow: leads can be enrolled, and steps that fell due while it was paused run now. ' +
    `Activating an active workflow changes nothing. The moves: ${MOVES}. ${OWN_ONLY}`,
  input: z.strictObject(workflowIdShape),
  output: workflowOutput,
  access: access('write', 'workflows.edit'),
  annotations: { idempotentHint: true },
  toolset: 'email',
  async handler(input, ctx) {
    return { workflow: await moveWorkflow(ctx, input.id, 'active') };
  },
});

export const pauseWorkflow = defineTool({
  name: 'pause_workflow',
  title: 'Pause a workflow',
  description:
    'Pauses a workflow: no new enrollments, and enrolled leads hold where they are (a step that falls due waits and ' +
    `runs once the workflow is activated again). Pausing a paused workflow changes nothing. The moves: ${MOVES}. ${OWN_ONLY}`,
  input: z.strictObject(workflowIdShape),
  output: workflowOutput,
  access: access('write', 'workflows.edit'),
  annotations: { idempotentHint: true },
  toolset: 'email',
  async handler(input, ctx) {
    return { workflow: await moveWorkflow(ctx, input.id, 'paused') };
  },
});

// ---------------------------------------------------------------------------------------------
// Enrollments

/** The first line of a step as a person would read it first: an e-mail's subject, a task's or SMS's text. */
function firstLineOf(step: StoredWorkflowStep | undefined): string {
  if (!step) return '';
  const { subject, text, body } = serializeStep(step);
  return (subject ?? text ?? body ?? '').split('\n')[0] ?? '';
}

export const enrollInWorkflow = defineTool({
  name: 'enroll_in_workflow',
  title: 'Enroll a lead in a workflow',
  description:
    "Enrolls a lead in an active workflow (nurture sequence): its steps then e-mail the lead's contact through your connected account and create tasks. One active enrollment per lead and workflow; a reply stops it.",
  input: z.strictObject({
    ...workflowIdShape,
    lead_id: objectId('lead').describe('Id of a live lead'),
    contact_id: objectId('contact')
      .optional()
      .describe("Id of a live contact of the lead; default the lead's oldest contact with an e-mail"),
    connected_account_id: objectId('connected account')
      .optional()
      .describe(
        'Id of one of your own connected accounts; default your most recently verified one, else your newest',
      ),
    ...confirmShape,
  }),
  output: z.object({
    ...sendResultShape,
    enrollment: enrollmentSchema.optional().describe('The new enrollment (absent in a preview)'),
  }),
  access: access('write', 'workflows.enroll'),
  errors: [
    { code: 'already_enrolled', when: 'the lead already has an active enrollment in the workflow' },
    { code: 'conflict', when: 'the workflow is paused' },
    {
      code: 'validation_failed',
      when: 'no contact with an e-mail or no connected account for a workflow that sends e-mail',
    },
  ],
  annotations: { openWorldHint: true, idempotentHint: false },
  toolset: 'email',
  sends: {
    async preview(input, ctx) {
      const plan = await planEnrollment(ctx, input.id, input);
      const steps = plan.workflow.steps;
      const firstEmail = steps.find((step) => step.type === 'email');
      const first = firstEmail ?? steps[0];
      const contact = plan.contact;
      return {
        action:
          `Enroll lead ${plan.leadName} (${plan.leadId}) in workflow ${plan.workflow.name} (${plan.workflow.id})` +
          (contact ? `, writing to contact ${contact.name} (${contact.id})` : ''),
        sender: plan.account
          ? `${plan.account.email} (connected account ${plan.account.id})`
          : 'nobody: no e-mail step',
        to: contact?.email ? [contact.email] : [],
        cc: [],
        bcc: [],
        subject: firstLineOf(first),
        amounts: [],
        send_at: plan.schedule[0]?.due_at ?? null,
        attachments: [],
        details: plan.schedule.map(
          (step) =>
            `Step ${step.step_index} (${step.type}) at ${step.due_at}: ${firstLineOf(steps[step.step_index])}`,
        ),
      };
    },
  },
  async handler(input, ctx) {
    const plan = await planEnrollment(ctx, input.id, input);
    return { sent: true, enrollment: await enrollPlanned(ctx, plan) };
  },
});

const { page: pageField, limit: limitField } = listParams(['created_at']);

export const listWorkflowEnrollments = defineTool({
  name: 'list_workflow_enrollments',
  title: 'List the enrollments of a workflow',
  description:
    'Lists the enrollments of one workflow, newest first. Filter by `status` (active/completed/stopped/failed) and ' +
    '`lead_id`. Paginated: returns `enrollments` plus `total`, `page`, `limit`, `totalPages`; `limit` is 1-100 (default 25).',
  input: z.strictObject({
    ...workflowIdShape,
    page: pageField,
    limit: limitField,
    status: ENROLLMENT_FILTER.optional().describe('Only enrollments in this status'),
    lead_id: objectId('lead').optional().describe('Only enrollments of this lead'),
  }),
  output: pagedOutput('enrollments', enrollmentSchema),
  access: access('read', 'workflows.view'),
  toolset: 'email',
  async handler(input, { db, auth }) {
    const workflow = await workflowRecords.getLive(db, auth.orgId, input.id);
    const where = and(
      eq(workflowEnrollments.orgId, auth.orgId),
      eq(workflowEnrollments.workflowId, workflow.id),
      input.status ? eq(workflowEnrollments.status, input.status) : undefined,
      input.lead_id ? eq(workflowEnrollments.leadId, input.lead_id) : undefined,
    );
    const total = await db.$count(workflowEnrollments, where);
    const rows = await db
      .select()
      .from(workflowEnrollments)
      .where(where)
      .orderBy(desc(workflowEnrollments.createdAt), desc(workflowEnrollments.id))
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('enrollments', rows.map(serializeEnrollment), total, input);
  },
});

export const getWorkflowEnrollment = defineTool({
  name: 'get_workflow_enrollment',
  title: 'Get an enrollment',
  description:
    'Returns one enrollment of a workflow with its status, the next step and when it is due, why it stopped or failed, ' +
    'and the steps it ran (what each made: task_id, scheduled_email_id, or why it was skipped).',
  input: z.strictObject(enrollmentIdShape),
  output: z.object({ enrollment: enrollmentDetailSchema }),
  access: access('read', 'workflows.view'),
  toolset: 'email',
  async handler(input, { db, auth }) {
    return { enrollment: await readEnrollment(db, auth.orgId, input.id, input.enrollmentId) };
  },
});

export const unenrollFromWorkflow = defineTool({
  name: 'unenroll_from_workflow',
  title: 'Unenroll a lead from a workflow',
  description:
    'Stops an active enrollment (status stopped, reason unenrolled): no further step runs; what already ran stays. ' +
    'An enrollment already completed, stopped or failed is a 409.',
  input: z.strictObject(enrollmentIdShape),
  output: messageOutput,
  access: access('write', 'workflows.enroll'),
  errors: [{ code: 'conflict', when: 'the enrollment is already completed, stopped or failed' }],
  annotations: { destructiveHint: true },
  toolset: 'email',
  async handler(input, ctx) {
    await unenroll(ctx, input.id, input.enrollmentId);
    return { message: 'Enrollment stopped' };
  },
});

export const workflowTools = [
  listWorkflows,
  getWorkflow,
  createWorkflow,
  updateWorkflow,
  deleteWorkflowTool,
  activateWorkflow,
  pauseWorkflow,
  enrollInWorkflow,
  listWorkflowEnrollments,
  getWorkflowEnrollment,
  unenrollFromWorkflow,
];
