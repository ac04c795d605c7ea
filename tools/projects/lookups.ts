// What other areas ask of projects without reading the projects table themselves
// (docs/architecture.md "Boundaries"): tasks check the project they join, project templates find
// the onboarding project that still exists.
import { and, eq, isNull, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { projects } from './tables.ts';

/** True when `projectId` is a live (not trashed) project of the organization. */
export async function isLiveProject(db: Executor, orgId: string, projectId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, projectId), eq(projects.orgId, orgId), isNull(projects.deletedAt)))
    .limit(1);
  return row !== undefined;
}

/** A condition for another area's query: the project `projectId` names exists and is not trashed. */
export function projectIsLive(projectId: SQLWrapper): SQL {
  return sql`exists (select 1 from ${projects} where ${projects.id} = ${projectId} and ${projects.deletedAt} is null)`;
}
