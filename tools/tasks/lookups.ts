// What other areas ask of tasks without reading the tasks table themselves
// (docs/architecture.md "Boundaries").
import { and, count, eq, isNull, lt, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { tasks } from './tables.ts';

/** Live open tasks of a lead whose due time has passed (tools/lead-health). */
export async function countOverdueTasksOfLead(
  db: Executor,
  orgId: string,
  leadId: string,
  now: Date,
): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(tasks)
    .where(
      and(
        eq(tasks.orgId, orgId),
        eq(tasks.leadId, leadId),
        isNull(tasks.deletedAt),
        eq(tasks.isComplete, false),
        lt(tasks.dueAt, now),
      ),
    );
  return row?.n ?? 0;
}

/** The live tasks of a project, with what its progress needs (tools/project-templates onboarding). */
export function liveTasksOfProject(
  db: Executor,
  orgId: string,
  projectId: string,
): Promise<{ id: string; text: string; dueAt: Date | null; isComplete: boolean }[]> {
  return db
    .select({ id: tasks.id, text: tasks.text, dueAt: tasks.dueAt, isComplete: tasks.isComplete })
    .from(tasks)
    .where(and(eq(tasks.orgId, orgId), eq(tasks.projectId, projectId), isNull(tasks.deletedAt)));
}

/** Filterable task columns by catalogue field, for a query over the leads (a smart view). */
export const TASK_QUERY_COLUMNS = {
  text: tasks.text,
  due_at: tasks.dueAt,
  is_complete: tasks.isComplete,
  assigned_to: tasks.assignedTo,
} as const;

/** `exists (a live task of the lead `leadId` matching `predicate`)`, correlated on (org_id, lead_id). */
export function existsLiveTaskOfLead(orgId: string, leadId: SQLWrapper, predicate: SQL): SQL {
  return sql`exists (select 1 from ${tasks} where ${tasks.orgId} = ${orgId}::text and ${tasks.leadId} = ${leadId} and ${tasks.deletedAt} is null and ${predicate})`;
}
