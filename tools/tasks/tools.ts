// Tasks: to-dos of the sales team, optionally about a lead, assigned to one user. Completing one
// stamps who and when and emits task.completed exactly once; snoozing hides it from the assignee's
// "my open tasks" until a time (plan feature task_snooze). Deleting moves it to the trash.
import { and, asc, count, desc, eq, isNotNull, isNull, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError, notFound, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import { isAssignableUser } from '../../core/records.ts';
import {
  iso,
  listParams,
  messageOutput,
  objectId,
  offsetOf,
  paged,
  pagedOutput,
} from '../../core/schemas.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool, type ToolContext } from '../../core/tool.ts';
import type { TrashType } from '../../core/trash.ts';
import { assertLeadLive } from '../leads/children.ts';
import { getLiveLead } from '../leads/tools.ts';
import { type TaskRow, tasks } from './tables.ts';

/**
 * Completion as a state machine over `is_complete` (false: open, true: complete). Both moves are
 * allowed; only completing has an event. Completing a complete task is the same-state no-op the
 * machines always accept, which keeps a retried completion safe and silent.
 */
export const taskCompletionMachine = defineStateMachine({
  resource: 'task',
  field: 'is_complete',
  states: ['open', 'complete'],
  initial: 'open',
  moves: {
    open: { complete: 'task.completed' },
    complete: { open: null },
  },
});
type TaskState = (typeof taskCompletionMachine.states)[number];

const completionOf = (isComplete: boolean): TaskState => (isComplete ? 'complete' : 'open');

/** The longest a task may be snoozed: a year ahead is already "someday". */
const MAX_SNOOZE_MS = 366 * 24 * 60 * 60 * 1000;
const MAX_TEXT = 5000;

// ---------------------------------------------------------------------------------------------
// Record shape

export const taskSchema = z
  .object({
    _id: z.string().describe('Task id (24 hex characters)'),
    lead_id: z
      .string()
      .nullable()
      .describe('Id of the lead the task is about, or null for a standalone task'),
    assigned_to: z.string().nullable().describe('Id of the user who should do the task'),
    text: z.string().describe('What needs doing'),
    due_at: z
      .string()
      .nullable()
      .describe('When the task is due (ISO 8601), or null when it has no due date'),
    is_complete: z.boolean().describe('True once the task is done'),
    completed_at: z.string().nullable().describe('When it was completed (ISO 8601); null while open'),
    completed_by: z.string().nullable().describe('Id of the user who completed it; null while open'),
    snoozed_until: z
      .string()
      .nullable()
      .describe(
        "Hidden from the assignee's open tasks until this time (ISO 8601); null (or a past time) means not snoozed",
      ),
    created_by: z.string().nullable().describe('Id of the user who created the task'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('A task');
export type TaskRecord = z.output<typeof taskSchema>;

export function serializeTask(row: TaskRow): TaskRecord {
  return {
    _id: row.id,
    lead_id: row.leadId,
    assigned_to: row.assignedTo,
    text: row.text,
    due_at: iso(row.dueAt),
    is_complete: row.isComplete,
    completed_at: iso(row.completedAt),
    completed_by: row.completedBy,
    snoozed_until: iso(row.snoozedUntil),
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

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
const taskIdShape = { id: objectId('task') };

/** Query strings carry booleans as text; MCP callers send real booleans. Both are accepted. */
const booleanParam = (what: string) =>
  z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .describe(`${what} (true or false)`);

// ---------------------------------------------------------------------------------------------
// Data functions

type TaskCtx = Pick<ToolContext, 'db' | 'auth' | 'emit' | 'now'>;

/** Live (not trashed) task of the organization, or a 404; `lock` for a read-modify-write. */
async function getLiveTask(db: Executor, orgId: string, id: string, lock = false): Promise<TaskRow> {
  const query = db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, id), eq(tasks.orgId, orgId), isNull(tasks.deletedAt)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Task');
  return row;
}

async function assertAssignee(db: Executor, orgId: string, userId: string): Promise<void> {
  if (!(await isAssignableUser(db, orgId, userId))) {
    throw validationError([
      {
        field: 'assigned_to',
        message: 'must be the id of an active user of this organization',
        code: 'invalid_assignee',
      },
    ]);
  }
}

interface TaskChanges {
  leadId?: string | null | undefined;
  assignedTo?: string | undefined;
  text?: string | undefined;
  dueAt?: Date | null | undefined;
  isComplete?: boolean | undefined;
}

/**
 * Applies the changes to a locked task. Moving to complete stamps completed_at/completed_by and
 * emits task.completed; reopening clears both; a task already complete stays as it was (no event).
 */
async function writeTask(ctx: TaskCtx, before: TaskRow, changes: TaskChanges): Promise<TaskRecord> {
  const orgId = ctx.auth.orgId;
  if (changes.leadId && changes.leadId !== before.leadId) await getLiveLead(ctx.db, orgId, changes.leadId);
  if (changes.assignedTo && changes.assignedTo !== before.assignedTo) {
    await assertAssignee(ctx.db, orgId, changes.assignedTo);
  }
  const from = completionOf(before.isComplete);
  const to = changes.isComplete === undefined ? from : completionOf(changes.isComplete);
  const event = taskCompletionMachine.eventOf(from, to);
  const completing = from === 'open' && to === 'complete';
  const reopening = from === 'complete' && to === 'open';
  const [row] = await ctx.db
    .update(tasks)
    .set({
      ...(changes.leadId !== undefined ? { leadId: changes.leadId } : {}),
      ...(changes.assignedTo !== undefined ? { assignedTo: changes.assignedTo } : {}),
      ...(changes.text !== undefined ? { text: changes.text } : {}),
      ...(changes.dueAt !== undefined ? { dueAt: changes.dueAt } : {}),
      ...(completing ? { isComplete: true, completedAt: ctx.now, completedBy: ctx.auth.userId } : {}),
      ...(reopening ? { isComplete: false, completedAt: null, completedBy: null } : {}),
      updatedAt: ctx.now,
    })
    .where(and(eq(tasks.id, before.id), eq(tasks.orgId, orgId)))
    .returning();
  if (!row) throw notFound('Task');
  const record = serializeTask(row);
  if (event !== null) await ctx.emit(event, record);
  return record;
}

/** Restores a trashed task; refused while its lead is in the trash, and an assignee who is gone hands it to the restorer. */
async function restoreTask(ctx: TaskCtx, id: string): Promise<TaskRecord> {
  const orgId = ctx.auth.orgId;
  const [before] = await ctx.db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, id), eq(tasks.orgId, orgId), isNotNull(tasks.deletedAt)))
    .limit(1)
    .for('update');
  if (!before) throw notFound('Trash item');
  if (before.leadId !== null) await assertLeadLive(ctx.db, orgId, before.leadId);
  let assignedTo = before.assignedTo;
  if (assignedTo !== null && !(await isAssignableUser(ctx.db, orgId, assignedTo)))
    assignedTo = ctx.auth.userId;
  const [row] = await ctx.db
    .update(tasks)
    .set({ deletedAt: null, deletedBy: null, assignedTo, updatedAt: ctx.now })
    .where(and(eq(tasks.id, before.id), eq(tasks.orgId, orgId)))
    .returning();
  if (!row) throw notFound('Trash item');
  return serializeTask(row);
}

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
    'Creates a task (a to-do) and returns it. `text` is required; `lead_id` ties it to a lead, `assigned_to` defaults to the ' +
    'caller, `due_at` is an ISO 8601 date-time. Use it to schedule a follow-up ("call back Tuesday 10:00"). Emits task.created.',
  input: z.strictObject({
    text: textField,
    lead_id: leadField.optional(),
    assigned_to: assigneeField
      .optional()
      .describe('Id of an active user of the organization; default: the caller'),
    due_at: dueField.optional(),
  }),
  output: taskOutput,
  access: access('write', 'tasks.create'),
  async handler(input, ctx) {
    const orgId = ctx.auth.orgId;
    if (input.lead_id) await getLiveLead(ctx.db, orgId, input.lead_id);
    const assignedTo = input.assigned_to ?? ctx.auth.userId;
    if (assignedTo !== ctx.auth.userId) await assertAssignee(ctx.db, orgId, assignedTo);
    const [row] = await ctx.db
      .insert(tasks)
      .values({
        id: newId(ctx.now),
        orgId,
        leadId: input.lead_id ?? null,
        assignedTo,
        text: input.text,
        dueAt: input.due_at ? new Date(input.due_at) : null,
        createdBy: ctx.auth.userId,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      })
      .returning();
    if (!row) throw new Error('insert returned no task');
    const task = serializeTask(row);
    await ctx.emit('task.created', task);
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
    return { task: serializeTask(await getLiveTask(db, auth.orgId, input.id)) };
  },
});

export const listTasks = defineTool({
  name: 'list_tasks',
  title: 'List tasks',
  description:
    "Lists the organization's live tasks, newest first by default. Filter by `lead_id`, `assigned_to`, `is_complete`, " +
    '`due_before`/`due_after` (ISO date-times) or `overdue=true` (open tasks whose due time has passed); `search` matches ' +
    'words in the text. Paginated: returns `tasks` plus `total`, `page`, `limit`, `totalPages`; request page 1, then increment ' +
    "`page` until page >= totalPages. `limit` is 1-100 (default 25). For the caller's own open tasks use list_my_tasks.",
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    lead_id: objectId('lead').optional().describe('Only tasks about this lead'),
    assigned_to: objectId('assignee').optional().describe('Only tasks assigned to this user'),
    is_complete: booleanParam('Only completed (true) or open (false) tasks').optional(),
    due_before: isoDateTime('Only tasks due before this time (ISO 8601 date-time)').optional(),
    due_after: isoDateTime('Only tasks due at or after this time (ISO 8601 date-time)').optional(),
    overdue: booleanParam('true: only open tasks whose due time has passed; false: no effect').optional(),
  }),
  output: pagedOutput('tasks', taskSchema),
  access: access('read', 'tasks.view'),
  toolset: 'sales',
  async handler(input, { db, auth, now }) {
    const conditions: SQL[] = [eq(tasks.orgId, auth.orgId), isNull(tasks.deletedAt)];
    if (input.lead_id) conditions.push(eq(tasks.leadId, input.lead_id));
    if (input.assigned_to) conditions.push(eq(tasks.assignedTo, input.assigned_to));
    if (input.is_complete !== undefined) conditions.push(eq(tasks.isComplete, input.is_complete));
    if (input.due_before) conditions.push(lt(tasks.dueAt, new Date(input.due_before)));
    if (input.due_after) conditions.push(sql`${tasks.dueAt} >= ${new Date(input.due_after)}`);
    if (input.overdue) conditions.push(eq(tasks.isComplete, false), lt(tasks.dueAt, now));
    if (input.search) conditions.push(sql`${tasks.text} ilike ${`%${escapeLike(input.search)}%`}`);
    const where = and(...conditions);

    const order: SQL[] = [];
    if (input.sort) {
      const descending = input.sort.startsWith('-');
      const field = descending ? input.sort.slice(1) : input.sort;
      const column =
        field === 'due_at' ? tasks.dueAt : field === 'updated_at' ? tasks.updatedAt : tasks.createdAt;
      // Tasks without a due date sort after dated ones in both directions: they are the least urgent.
      order.push(
        descending ? sql`${column} desc nulls last` : sql`${column} asc nulls last`,
        descending ? desc(tasks.id) : asc(tasks.id),
      );
    } else {
      order.push(desc(tasks.createdAt), desc(tasks.id));
    }
    const [counted] = await db.select({ n: count() }).from(tasks).where(where);
    const rows = await db
      .select()
      .from(tasks)
      .where(where)
      .orderBy(...order)
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('tasks', rows.map(serializeTask), counted?.n ?? 0, input);
  },
});

export const listMyTasks = defineTool({
  name: 'list_my_tasks',
  title: "List the caller's open tasks",
  description:
    "Lists the caller's open tasks: assigned to the caller, not complete and not currently snoozed, the earliest due first " +
    '(tasks without a due date last). `due_before` (ISO date-time) keeps only tasks due before that time, e.g. the end of ' +
    'today for "what\'s due today"; by default every open task is listed. Paginated: returns `tasks` plus `total`, `page`, ' +
    '`limit`, `totalPages`; request page 1, then increment `page` until page >= totalPages. `limit` is 1-100 (default 25).',
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
    const conditions: SQL[] = [
      eq(tasks.orgId, auth.orgId),
      eq(tasks.assignedTo, auth.userId),
      isNull(tasks.deletedAt),
      eq(tasks.isComplete, false),
    ];
    const notSnoozed = or(isNull(tasks.snoozedUntil), lte(tasks.snoozedUntil, now));
    if (notSnoozed) conditions.push(notSnoozed);
    if (input.due_before) conditions.push(lt(tasks.dueAt, new Date(input.due_before)));
    const where = and(...conditions);
    const [counted] = await db.select({ n: count() }).from(tasks).where(where);
    const rows = await db
      .select()
      .from(tasks)
      .where(where)
      .orderBy(sql`${tasks.dueAt} asc nulls last`, asc(tasks.id))
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('tasks', rows.map(serializeTask), counted?.n ?? 0, input);
  },
});

export const updateTask = defineTool({
  name: 'update_task',
  title: 'Update a task',
  errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
  description:
    'Changes only the fields sent of one task and returns it. `due_at: null` removes the due date. Setting `is_complete` to true ' +
    'is the same as complete_task (stamps completed_at and emits task.completed once); false reopens a completed task and ' +
    'clears completed_at/completed_by.',
  input: z.strictObject({
    ...taskIdShape,
    text: textField.optional(),
    lead_id: leadField
      .nullable()
      .optional()
      .describe('Id of a live lead of the organization; null detaches the task'),
    assigned_to: assigneeField.optional(),
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
    const before = await getLiveTask(ctx.db, ctx.auth.orgId, input.id, true);
    const task = await writeTask(ctx, before, {
      text: input.text,
      leadId: input.lead_id,
      assignedTo: input.assigned_to,
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
    'Marks a task as done (stamps completed_at and completed_by, emits task.completed) and returns it. Completing a task that is ' +
    'already complete returns it unchanged and emits nothing, so retrying is safe.',
  input: z.strictObject(taskIdShape),
  output: taskOutput,
  access: access('write', 'tasks.edit'),
  annotations: { idempotentHint: true },
  async handler(input, ctx) {
    const before = await getLiveTask(ctx.db, ctx.auth.orgId, input.id, true);
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
    const before = await getLiveTask(ctx.db, ctx.auth.orgId, input.id, true);
    await ctx.db
      .update(tasks)
      .set({ deletedAt: ctx.now, deletedBy: ctx.auth.userId })
      .where(and(eq(tasks.id, before.id), eq(tasks.orgId, ctx.auth.orgId)));
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
    const before = await getLiveTask(ctx.db, ctx.auth.orgId, input.id, true);
    if (before.isComplete) throw new AppError('conflict', { message: 'A completed task cannot be snoozed' });
    const [row] = await ctx.db
      .update(tasks)
      .set({ snoozedUntil: until, updatedAt: ctx.now })
      .where(and(eq(tasks.id, before.id), eq(tasks.orgId, ctx.auth.orgId)))
      .returning();
    if (!row) throw notFound('Task');
    return { task: serializeTask(row) };
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
    const before = await getLiveTask(ctx.db, ctx.auth.orgId, input.id, true);
    if (before.snoozedUntil === null) return { task: serializeTask(before) };
    const [row] = await ctx.db
      .update(tasks)
      .set({ snoozedUntil: null, updatedAt: ctx.now })
      .where(and(eq(tasks.id, before.id), eq(tasks.orgId, ctx.auth.orgId)))
      .returning();
    if (!row) throw notFound('Task');
    return { task: serializeTask(row) };
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

/** The task entry of the trash registry; the task's text is its name there. */
export const taskTrashTypes: readonly TrashType[] = [
  {
    type: 'task',
    recordKey: 'task',
    resource: 'leads',
    schema: taskSchema,
    table: tasks,
    columns: {
      id: tasks.id,
      orgId: tasks.orgId,
      name: tasks.text,
      deletedAt: tasks.deletedAt,
      deletedBy: tasks.deletedBy,
    },
    restore: restoreTask,
  },
];

/**
 * Tasks belong to their assignee. A user deletion moves them to the heir or the trash; no event
 * fits (the catalogue has only task.created and task.completed), so announce writes nothing.
 */
export const taskOwnership: readonly OwnedRecordTable[] = [
  {
    name: 'tasks',
    table: tasks,
    orgId: tasks.orgId,
    ownerId: tasks.assignedTo,
    deletedAt: tasks.deletedAt,
    deletedBy: tasks.deletedBy,
    updatedAt: tasks.updatedAt,
    async announce() {},
  },
];
