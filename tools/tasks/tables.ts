// The tasks area's table: to-dos on leads.
import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, ts, updatedAt } from '../../core/db/schema.ts';
import { leadRef } from '../leads/tables.ts';
import { projects } from '../projects/tables.ts';

export const tasks = pgTable(
  'tasks',
  {
    id: id(),
    orgId: orgId(),
    leadId: leadRef(),
    assignedTo: text('assigned_to'),
    /** The project the task belongs to (tools/projects), or null. */
    projectId: text('project_id').references(() => projects.id, { onDelete: 'set null' }),
    text: text('text').notNull(),
    dueAt: ts('due_at'),
    isComplete: boolean('is_complete').notNull().default(false),
    completedAt: ts('completed_at'),
    completedBy: text('completed_by'),
    /** Hidden from "my open tasks" until this time. */
    snoozedUntil: ts('snoozed_until'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('tasks_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('tasks_assignee_open_idx')
      .on(t.orgId, t.assignedTo, t.dueAt)
      .where(sql`${t.deletedAt} is null and ${t.isComplete} = false`),
    index('tasks_lead_idx').on(t.leadId),
    index('tasks_project_idx').on(t.projectId),
    index('tasks_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

export type TaskRow = typeof tasks.$inferSelect;
