// The tasks store: the completion machine, the record shape, the live lookup, creating and changing
// a task (completing stamps who and when and emits task.completed exactly once), snoozing, the two
// lists, and the task's entries in the trash and ownership registries.
import { and, asc, count, desc, eq, isNotNull, isNull, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError, notFound, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import { isAssignableUser } from '../../core/records.ts';
import { iso, offsetOf, type Page } from '../../core/schemas.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import type { ToolContext } from '../../core/tool.ts';
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
// Data functions

export type TaskCtx = Pick<ToolContext, 'db' | 'auth' | 'emit' | 'now'>;

/** Live (not trashed) task of the organization, or a 404; `lock` for a read-modify-write. */
export async function getLiveTask(db: Executor, orgId: string, id: string, lock = false): Promise<TaskRow> {
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

export interface TaskChanges {
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
export async function writeTask(ctx: TaskCtx, before: TaskRow, changes: TaskChanges): Promise<TaskRecord> {
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

export interface NewTask {
  text: string;
  leadId?: string | undefined;
  /** Default: the caller. */
  assignedTo?: string | undefined;
  dueAt: Date | null;
}

/** Creates a task (its lead must be live, its assignee assignable) and emits task.created. */
export async function insertTask(ctx: TaskCtx, input: NewTask): Promise<TaskRecord> {
  const orgId = ctx.auth.orgId;
  if (input.leadId) await getLiveLead(ctx.db, orgId, input.leadId);
  const assignedTo = input.assignedTo ?? ctx.auth.userId;
  if (assignedTo !== ctx.auth.userId) await assertAssignee(ctx.db, orgId, assignedTo);
  const [row] = await ctx.db
    .insert(tasks)
    .values({
      id: newId(ctx.now),
      orgId,
      leadId: input.leadId ?? null,
      assignedTo,
      text: input.text,
      dueAt: input.dueAt,
      createdBy: ctx.auth.userId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  if (!row) throw new Error('insert returned no task');
  const task = serializeTask(row);
  await ctx.emit('task.created', task);
  return task;
}

/** Moves a live task to the trash (404 when there is none). */
export async function trashTask(ctx: TaskCtx, id: string): Promise<void> {
  const before = await getLiveTask(ctx.db, ctx.auth.orgId, id, true);
  await ctx.db
    .update(tasks)
    .set({ deletedAt: ctx.now, deletedBy: ctx.auth.userId })
    .where(and(eq(tasks.id, before.id), eq(tasks.orgId, ctx.auth.orgId)));
}

/** Hides an open task until `until` (a completed task is a 409); `null` clears the snooze, a no-op when there is none. */
export async function setSnooze(ctx: TaskCtx, id: string, until: Date | null): Promise<TaskRecord> {
  const before = await getLiveTask(ctx.db, ctx.auth.orgId, id, true);
  if (until === null) {
    if (before.snoozedUntil === null) return serializeTask(before);
  } else if (before.isComplete) {
    throw new AppError('conflict', { message: 'A completed task cannot be snoozed' });
  }
  const [row] = await ctx.db
    .update(tasks)
    .set({ snoozedUntil: until, updatedAt: ctx.now })
    .where(and(eq(tasks.id, before.id), eq(tasks.orgId, ctx.auth.orgId)))
    .returning();
  if (!row) throw notFound('Task');
  return serializeTask(row);
}

/** One page of the tasks matching `where` in `order`, with the total across all pages. */
async function taskPage(
  db: Executor,
  where: SQL | undefined,
  order: SQL[],
  page: Page,
): Promise<{ items: TaskRecord[]; total: number }> {
  const [counted] = await db.select({ n: count() }).from(tasks).where(where);
  const rows = await db
    .select()
    .from(tasks)
    .where(where)
    .orderBy(...order)
    .limit(page.limit)
    .offset(offsetOf(page));
  return { items: rows.map(serializeTask), total: counted?.n ?? 0 };
}

export interface TaskFilters {
  leadId?: string | undefined;
  assignedTo?: string | undefined;
  isComplete?: boolean | undefined;
  /** ISO date-times: due before, and due at or after. */
  dueBefore?: string | undefined;
  dueAfter?: string | undefined;
  /** Only open tasks whose due time has passed. */
  overdue?: boolean | undefined;
  search?: string | undefined;
}

/** The organization's live tasks matching the filters; `sort` is `[-]due_at|created_at|updated_at`, default newest first. */
export async function listTaskPage(
  db: Executor,
  orgId: string,
  now: Date,
  filters: TaskFilters,
  sort: string | undefined,
  page: Page,
): Promise<{ items: TaskRecord[]; total: number }> {
  const conditions: SQL[] = [eq(tasks.orgId, orgId), isNull(tasks.deletedAt)];
  if (filters.leadId) conditions.push(eq(tasks.leadId, filters.leadId));
  if (filters.assignedTo) conditions.push(eq(tasks.assignedTo, filters.assignedTo));
  if (filters.isComplete !== undefined) conditions.push(eq(tasks.isComplete, filters.isComplete));
  if (filters.dueBefore) conditions.push(lt(tasks.dueAt, new Date(filters.dueBefore)));
  if (filters.dueAfter) conditions.push(sql`${tasks.dueAt} >= ${new Date(filters.dueAfter)}`);
  if (filters.overdue) conditions.push(eq(tasks.isComplete, false), lt(tasks.dueAt, now));
  if (filters.search) conditions.push(sql`${tasks.text} ilike ${`%${escapeLike(filters.search)}%`}`);
  const order: SQL[] = [];
  if (sort) {
    const descending = sort.startsWith('-');
    const field = descending ? sort.slice(1) : sort;
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
  return taskPage(db, and(...conditions), order, page);
}

/** The user's open tasks that are not snoozed at `now` (due before `dueBefore`, if given), earliest due first. */
export async function openTaskPage(
  db: Executor,
  orgId: string,
  userId: string,
  now: Date,
  dueBefore: string | undefined,
  page: Page,
): Promise<{ items: TaskRecord[]; total: number }> {
  const conditions: SQL[] = [
    eq(tasks.orgId, orgId),
    eq(tasks.assignedTo, userId),
    isNull(tasks.deletedAt),
    eq(tasks.isComplete, false),
  ];
  const notSnoozed = or(isNull(tasks.snoozedUntil), lte(tasks.snoozedUntil, now));
  if (notSnoozed) conditions.push(notSnoozed);
  if (dueBefore) conditions.push(lt(tasks.dueAt, new Date(dueBefore)));
  return taskPage(db, and(...conditions), [sql`${tasks.dueAt} asc nulls last`, asc(tasks.id)], page);
}

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
