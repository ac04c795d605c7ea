// Tasks: to-dos of the sales team, optionally about a lead, assigned to one user. Completing one
// stamps who and when and emits task.completed exactly once; snoozing hides it from the assignee's
// "my open tasks" until a time (plan feature task_snooze). Deleting moves it to the trash. This file
// declares the tools; the data functions are store.ts.
import { z } from 'zod';
import { validationError } from '../../core/errors.ts';
import { listParams, messageOutput, objectId, paged, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import {
  insertTask,
  listTaskPage,
  openTaskPage,
  serializeTask,
  setSnooze,
  taskRecords,
  taskSchema,
  writeTask,
} from './store.ts';

/** The longest a task may be snoozed: a year ahead is already "someday". */
const MAX_SNOOZE_MS = 366 * 24 * 60 * 60 * 1000;
const MAX_TEXT = 5000;

// ---------------------------------------------------------------------------------------------
// Input fields

const isoDateTime = (what: string) =>
  z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-05-01T09:00:00Z' })
    .describe(what);

const textField = z
  .string()
  .trim()
  .min(1)
  .max(MAX_TEXT)
  .refine(NO_NUL, nulMessage)
  .describe(`What needs doing, 1-${MAX_TEXT} characters`);
const leadField = objectId('lead').describe('Id of a live lead of the organization the task is about');
const assigneeField = objectId('assignee').describe(
  'Id of an active user of the organization who should do the task',
);
const dueField = isoDateTime(
  'When the task is due (ISO 8601 date-time with offset, e.g. 2026-05-01T09:00:00Z)',
);
const projectField = objectId('project').describe('Id of a project of the organization the task belongs to');
const taskIdShape = { id: objectId('task') };

/** Query strings carry booleans as text; MCP callers send real booleans. Both are accepted. */
const booleanParam = (what: string) =>
  z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .describe(`${what} (true or false)`);

// ---------------------------------------------------------------------------------------------
// Tools

const access = (
  kind: 'read' | 'write',
  permission: 'tasks.view' | 'tasks.create' | 'tasks.edit' | 'tasks.delete',
) => ({ kind, resource: 'leads', permission }) as const;
const snoozeAccess = { ...access('write', 'tasks.edit'), feature: 'task_snooze' } as const;

const taskOutput = z.object({ task: taskSchema });

const SORT_FIELDS = ['due_at', 'created_at', 'updated_at'] as const;

export const createTask = defineTool({
  name: 'create_task',
  title: 'Create a task',
  errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
  description:
    'Creates a task (a to-do or reminder), optionally for a lead or project, with an assignee and a due time. Use it to schedule a follow-up.',
  input: z.strictObject({
    text: textField,
    lead_id: leadField.optional(),
    assigned_to: assigneeField
      .optional()
      .describe('Id of an active user of the organization; default: the caller'),
    project_id: projectField.optional(),
    due_at: dueField.optional(),
  }),
  output: taskOutput,
  access: access('write', 'tasks.create'),
  async handler(input, ctx) {
    const task = await insertTask(ctx, {
      text: input.text,
      leadId: input.lead_id,
      assignedTo: input.assigned_to,
      projectId: input.project_id,
      dueAt: input.due_at ? new Date(input.due_at) : null,
    });
    return { task };
  },
});

export const getTask = defineTool({
  name: 'get_task',
  title: 'Get a task',
  description:
    'Returns one task by id. Use it when you already hold a task `_id`; find ids with list_tasks or list_my_tasks. Trashed tasks answer 404.',
  input: z.strictObject(taskIdShape),
  output: taskOutput,
  access: access('read', 'tasks.view'),
  toolset: 'sales',
  async handler(input, { db, auth }) {
    return { task: serializeTask(await taskRecords.getLive(db, auth.orgId, input.id)) };
  },
});

export const listTasks = defineTool({
  name: 'list_tasks',
  title: 'List tasks',
  description:
    "Lists the organization's live tasks, newest first. Filter by lead, assignee, project, completion, due range or `overdue=true` (open and past due); `search` matches words in the text. For the caller's own open tasks use list_my_tasks.",
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    lead_id: objectId('lead').optional().describe('Only tasks about this lead'),
    assigned_to: objectId('assignee').optional().describe('Only tasks assigned to this user'),
    project_id: objectId('project').optional().describe('Only tasks of this project'),
    is_complete: booleanParam('Only completed (true) or open (false) tasks').optional(),
    due_before: isoDateTime('Only tasks due before this time (ISO 8601 date-time)').optional(),
    due_after: isoDateTime('Only tasks due at or after this time (ISO 8601 date-time)').optional(),
    overdue: booleanParam('true: only open tasks whose due time has passed; false: no effect').optional(),
  }),
  output: pagedOutput('tasks', taskSchema),
  access: access('read', 'tasks.view'),
  toolset: 'sales',
  async handler(input, { db, auth, now }) {
    const filters = {
      leadId: input.lead_id,
      assignedTo: input.assigned_to,
      projectId: input.project_id,
      isComplete: input.is_complete,
      dueBefore: input.due_before,
      dueAfter: input.due_after,
      overdue: input.overdue,
    };
    return listTaskPage(db, auth.orgId, now, filters, input);
  },
});

export const listMyTasks = defineTool({
  name: 'list_my_tasks',
  title: "List the caller's open tasks",
  description:
    "Lists the caller's open tasks (not done, not snoozed), earliest due first; `due_before` keeps what is due by then, e.g. the end of today. Paged.",
  input: z.strictObject({
    page: listParams(SORT_FIELDS).page,
    limit: listParams(SORT_FIELDS).limit,
    due_before: isoDateTime(
      'Only tasks due before this time (ISO 8601 date-time); default: every open task',
    ).optional(),
  }),
  output: pagedOutput('tasks', taskSchema),
  access: access('read', 'tasks.view'),
  async handler(input, { db, auth, now }) {
    const { rows, total } = await openTaskPage(db, auth.orgId, auth.userId, now, input.due_before, input);
    return paged('tasks', rows.map(serializeTask), total, input);
  },
});

export const updateTask = defineTool({
  name: 'update_task',
  title: 'Update a task',
  errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
  description:
    'Changes some fields of a task (text, due time, assignee); only the fields sent change. `is_complete` true completes it, false reopens it.',
  input: z.strictObject({
    ...taskIdShape,
    text: textField.optional(),
    lead_id: leadField
      .nullable()
      .optional()
      .describe('Id of a live lead of the organization; null detaches the task'),
    assigned_to: assigneeField.optional(),
    project_id: projectField
      .nullable()
      .optional()
      .describe('Id of a project of the organization; null detaches the task'),
    due_at: dueField
      .nullable()
      .optional()
      .describe('New due time (ISO 8601 date-time); null removes the due date'),
    is_complete: z.boolean().optional().describe('true completes the task, false reopens it'),
  }),
  output: taskOutput,
  access: access('write', 'tasks.edit'),
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    const before = await taskRecords.getLive(ctx.db, ctx.auth.orgId, input.id, true);
    const task = await writeTask(ctx, before, {
      text: input.text,
      leadId: input.lead_id,
      assignedTo: input.assigned_to,
      projectId: input.project_id,
      dueAt: input.due_at === undefined ? undefined : input.due_at === null ? null : new Date(input.due_at),
      isComplete: input.is_complete,
    });
    return { task };
  },
});

export const completeTask = defineTool({
  name: 'complete_task',
  title: 'Complete a task',
  description:
    'Marks a task as done and returns it; completing a completed task changes nothing, so retrying is safe.',
  input: z.strictObject(taskIdShape),
  output: taskOutput,
  access: access('write', 'tasks.edit'),
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    const before = await taskRecords.getLive(ctx.db, ctx.auth.orgId, input.id, true);
    if (before.isComplete) return { task: serializeTask(before) };
    return { task: await writeTask(ctx, before, { isComplete: true }) };
  },
});

export const deleteTask = defineTool({
  name: 'delete_task',
  title: 'Delete a task',
  description:
    'Moves a task to the trash: it disappears from the task lists and can be brought back with restore_trash_item.',
  input: z.strictObject(taskIdShape),
  output: messageOutput,
  access: access('write', 'tasks.delete'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'sales',
  async handler(input, ctx) {
    await taskRecords.trash(ctx, input.id);
    return { message: 'Task moved to the trash' };
  },
});

export const snoozeTask = defineTool({
  name: 'snooze_task',
  title: 'Snooze a task',
  errors: [{ code: 'conflict', when: 'the task is already complete' }],
  description:
    "Hides an open task from the assignee's open tasks (list_my_tasks) until `until`, an ISO 8601 date-time in the future and " +
    'at most a year ahead; snoozing again replaces the time. Returns the task with `snoozed_until` set. A completed task cannot ' +
    'be snoozed (409). Undo with unsnooze_task. Needs a plan with task snoozing.',
  input: z.strictObject({
    ...taskIdShape,
    until: isoDateTime('When the task reappears (ISO 8601 date-time in the future, at most one year ahead)'),
  }),
  output: taskOutput,
  access: snoozeAccess,
  annotations: { idempotentHint: true },
  toolset: 'sales',
  async handler(input, ctx) {
    const until = new Date(input.until);
    const ahead = until.getTime() - ctx.now.getTime();
    if (ahead <= 0 || ahead > MAX_SNOOZE_MS) {
      throw validationError([
        {
          field: 'until',
          message: ahead <= 0 ? 'must be in the future' : 'must be at most one year ahead',
          code: 'out_of_range',
        },
      ]);
    }
    return { task: await setSnooze(ctx, input.id, until) };
  },
});

export const unsnoozeTask = defineTool({
  name: 'unsnooze_task',
  title: 'Unsnooze a task',
  description:
    "Clears a task's snooze so it shows in the assignee's open tasks again, and returns the task. A task that is not snoozed " +
    'is returned unchanged, so retrying is safe. Needs a plan with task snoozing.',
  input: z.strictObject(taskIdShape),
  output: taskOutput,
  access: snoozeAccess,
  annotations: { idempotentHint: true },
  toolset: 'sales',
  async handler(input, ctx) {
    return { task: await setSnooze(ctx, input.id, null) };
  },
});

export const taskTools = [
  listMyTasks,
  createTask,
  updateTask,
  completeTask,
  getTask,
  listTasks,
  deleteTask,
  snoozeTask,
  unsnoozeTask,
];
