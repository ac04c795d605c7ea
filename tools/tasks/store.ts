// The tasks store: the completion machine, the record shape, creating and changing a task
// (completing stamps who and when and emits task.completed exactly once), snoozing, the two lists,
// and the task's entries in the trash and ownership registries, on the record helper
// (core/records.ts). A task belongs to its assignee: the helper's owner rule is `assigned_to`.
import { and, asc, eq, isNull, lt, lte, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError, validationError } from '../../core/errors.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  isAssignableUser,
  type ListParams,
  newRecordStamp,
  type PagedList,
  type RecordContext,
  type SortColumn,
} from '../../core/records.ts';
import { iso, type Page } from '../../core/schemas.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import type { TrashType } from '../../core/trash.ts';
import { restoreLeadChild } from '../leads/children.ts';
import { getLiveLead } from '../leads/store.ts';
import { isLiveProject } from '../projects/lookups.ts';
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
    project_id: z.string().nullable().describe('Id of the project the task belongs to, or null'),
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
    ...auditFields('task'),
  })
  .describe('A task');
export type TaskRecord = z.output<typeof taskSchema>;

export function serializeTask(row: TaskRow): TaskRecord {
  return {
    _id: row.id,
    lead_id: row.leadId,
    assigned_to: row.assignedTo,
    project_id: row.projectId,
    text: row.text,
    due_at: iso(row.dueAt),
    is_complete: row.isComplete,
    completed_at: iso(row.completedAt),
    completed_by: row.completedBy,
    snoozed_until: iso(row.snoozedUntil),
    ...auditValues(row),
  };
}

// ---------------------------------------------------------------------------------------------
// Data functions

/** The tasks table on the record helper: lookups, lists, trash, and restore with the assignee fallback. */
export const taskRecords = defineRecordTable<TaskRow>({
  label: 'Task',
  table: tasks,
  select: (db) => db.select().from(tasks).$dynamic(),
  update: (db, set, where) => db.update(tasks).set(set).where(where).returning(),
  owner: {
    column: tasks.assignedTo,
    field: 'assigned_to',
    of: (row) => row.assignedTo,
    set: (assignedTo) => ({ assignedTo }),
  },
});

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

/** 400 naming project_id unless it is a live project of the organization. */
async function assertProject(db: Executor, orgId: string, projectId: string): Promise<void> {
  if (!(await isLiveProject(db, orgId, projectId))) {
    throw validationError([
      {
        field: 'project_id',
        message: 'must be the id of a project of this organization',
        code: 'invalid_project',
      },
    ]);
  }
}

export interface TaskChanges {
  leadId?: string | null | undefined;
  projectId?: string | null | undefined;
  assignedTo?: string | undefined;
  text?: string | undefined;
  dueAt?: Date | null | undefined;
  isComplete?: boolean | undefined;
}

/**
 * Applies the changes to a locked task. Moving to complete stamps completed_at/completed_by and
 * emits task.completed; reopening clears both; a task already complete stays as it was (no event).
 */
export async function writeTask(
  ctx: RecordContext,
  before: TaskRow,
  changes: TaskChanges,
): Promise<TaskRecord> {
  const orgId = ctx.auth.orgId;
  if (changes.leadId && changes.leadId !== before.leadId) await getLiveLead(ctx.db, orgId, changes.leadId);
  if (changes.assignedTo && changes.assignedTo !== before.assignedTo) {
    await assertAssignee(ctx.db, orgId, changes.assignedTo);
  }
  if (changes.projectId && changes.projectId !== before.projectId) {
    await assertProject(ctx.db, orgId, changes.projectId);
  }
  const from = completionOf(before.isComplete);
  const to = changes.isComplete === undefined ? from : completionOf(changes.isComplete);
  const event = taskCompletionMachine.eventOf(from, to);
  const completing = from === 'open' && to === 'complete';
  const reopening = from === 'complete' && to === 'open';
  const row = await taskRecords.write(ctx.db, orgId, before.id, {
    ...(changes.leadId !== undefined ? { leadId: changes.leadId } : {}),
    ...(changes.assignedTo !== undefined ? { assignedTo: changes.assignedTo } : {}),
    ...(changes.projectId !== undefined ? { projectId: changes.projectId } : {}),
    ...(changes.text !== undefined ? { text: changes.text } : {}),
    ...(changes.dueAt !== undefined ? { dueAt: changes.dueAt } : {}),
    ...(completing ? { isComplete: true, completedAt: ctx.now, completedBy: ctx.auth.userId } : {}),
    ...(reopening ? { isComplete: false, completedAt: null, completedBy: null } : {}),
    updatedAt: ctx.now,
  });
  const record = serializeTask(row);
  if (event !== null) await ctx.emit(event, record);
  return record;
}

/** Restores a trashed task; refused while its lead is in the trash, and an assignee who is gone hands it to the restorer. */
async function restoreTask(ctx: RecordContext, id: string): Promise<TaskRecord> {
  const { row } = await restoreLeadChild(taskRecords, ctx, id);
  return serializeTask(row);
}

export interface NewTask {
  text: string;
  leadId?: string | undefined;
  /** Default: the caller. */
  assignedTo?: string | undefined;
  projectId?: string | undefined;
  dueAt: Date | null;
}

/** Creates a task (its lead must be live, its assignee assignable) and emits task.created. */
export async function insertTask(ctx: RecordContext, input: NewTask): Promise<TaskRecord> {
  const orgId = ctx.auth.orgId;
  if (input.leadId) await getLiveLead(ctx.db, orgId, input.leadId);
  const assignedTo = input.assignedTo ?? ctx.auth.userId;
  if (assignedTo !== ctx.auth.userId) await assertAssignee(ctx.db, orgId, assignedTo);
  if (input.projectId) await assertProject(ctx.db, orgId, input.projectId);
  const rows = await ctx.db
    .insert(tasks)
    .values({
      ...newRecordStamp(ctx),
      leadId: input.leadId ?? null,
      assignedTo,
      projectId: input.projectId ?? null,
      text: input.text,
      dueAt: input.dueAt,
    })
    .returning();
  return taskRecords.created(ctx, 'task.created', serializeTask, rows);
}

/** Hides an open task until `until` (a completed task is a 409); `null` clears the snooze, a no-op when there is none. */
export async function setSnooze(ctx: RecordContext, id: string, until: Date | null): Promise<TaskRecord> {
  const before = await taskRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  if (until === null) {
    if (before.snoozedUntil === null) return serializeTask(before);
  } else if (before.isComplete) {
    throw new AppError('conflict', { message: 'A completed task cannot be snoozed' });
  }
  const row = await taskRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    snoozedUntil: until,
    updatedAt: ctx.now,
  });
  return serializeTask(row);
}

/** Tasks without a due date sort after dated ones in both directions: they are the least urgent. */
const SORT_COLUMNS: Record<'due_at' | 'created_at' | 'updated_at', SortColumn> = {
  due_at: { column: tasks.dueAt, nullsLast: true },
  created_at: { column: tasks.createdAt, nullsLast: true },
  updated_at: { column: tasks.updatedAt, nullsLast: true },
};

export interface TaskFilters {
  leadId?: string | undefined;
  assignedTo?: string | undefined;
  projectId?: string | undefined;
  isComplete?: boolean | undefined;
  /** ISO date-times: due before, and due at or after. */
  dueBefore?: string | undefined;
  dueAfter?: string | undefined;
  /** Only open tasks whose due time has passed. */
  overdue?: boolean | undefined;
}

/** The organization's live tasks matching the filters, as list_tasks answers; `search` matches words in the text. */
export async function listTaskPage(
  db: Executor,
  orgId: string,
  now: Date,
  filters: TaskFilters,
  params: ListParams,
): Promise<PagedList<'tasks', TaskRecord>> {
  const conditions = taskRecords.liveConditions(orgId);
  if (filters.leadId) conditions.push(eq(tasks.leadId, filters.leadId));
  if (filters.assignedTo) conditions.push(eq(tasks.assignedTo, filters.assignedTo));
  if (filters.projectId) conditions.push(eq(tasks.projectId, filters.projectId));
  if (filters.isComplete !== undefined) conditions.push(eq(tasks.isComplete, filters.isComplete));
  if (filters.dueBefore) conditions.push(lt(tasks.dueAt, new Date(filters.dueBefore)));
  if (filters.dueAfter) conditions.push(sql`${tasks.dueAt} >= ${new Date(filters.dueAfter)}`);
  if (filters.overdue) conditions.push(eq(tasks.isComplete, false), lt(tasks.dueAt, now));
  return taskRecords.list(db, 'tasks', serializeTask, params, {
    conditions,
    sortColumns: SORT_COLUMNS,
    match: (search) => ({ where: sql`${tasks.text} ilike ${`%${escapeLike(search)}%`}` }),
  });
}

/** The user's open tasks that are not snoozed at `now` (due before `dueBefore`, if given), earliest due first. */
export async function openTaskPage(
  db: Executor,
  orgId: string,
  userId: string,
  now: Date,
  dueBefore: string | undefined,
  page: Page,
): Promise<{ rows: TaskRow[]; total: number }> {
  const conditions = taskRecords.liveConditions(orgId);
  conditions.push(eq(tasks.assignedTo, userId), eq(tasks.isComplete, false));
  const notSnoozed = or(isNull(tasks.snoozedUntil), lte(tasks.snoozedUntil, now));
  if (notSnoozed) conditions.push(notSnoozed);
  if (dueBefore) conditions.push(lt(tasks.dueAt, new Date(dueBefore)));
  return taskRecords.listPage(db, {
    where: and(...conditions),
    order: [sql`${tasks.dueAt} asc nulls last`, asc(tasks.id)],
    page,
  });
}

/** The task entry of the trash registry; the task's text is its name there. */
export const taskTrashTypes: readonly TrashType[] = [
  taskRecords.trashType({
    type: 'task',
    recordKey: 'task',
    resource: 'leads',
    schema: taskSchema,
    name: tasks.text,
    restore: restoreTask,
  }),
];

/**
 * Tasks belong to their assignee. A user deletion moves them to the heir or the trash; no event
 * fits (the catalogue has only task.created and task.completed), so announce writes nothing.
 */
export const taskOwnership: readonly OwnedRecordTable[] = [
  taskRecords.ownedRecords({ name: 'tasks', async announce() {} }),
];
