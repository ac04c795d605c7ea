// The project-templates area's tables: templates (their tasks as jsonb) and the record of each
// template applied to a lead, whose unique index makes applying idempotent per lead and template
// and which marks the lead's onboarding project with the weight of each of its tasks.
import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, id, orgId, updatedAt } from '../../core/db/schema.ts';
import { leadRef } from '../leads/tables.ts';
import { projects } from '../projects/tables.ts';

/** One task of a template: due `offset_days` after the day it is applied, weighing `weight` in the progress. */
export interface TemplateTask {
  text: string;
  offset_days: number;
  weight: number;
}

export const projectTemplates = pgTable(
  'project_templates',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    /** The currency of the projects it creates. */
    currency: text('currency').notNull(),
    tasks: jsonb('tasks').$type<TemplateTask[]>().notNull(),
    isDefaultOnboarding: boolean('is_default_onboarding').notNull().default(false),
    createdBy: text('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('project_templates_org_idx').on(t.orgId, t.createdAt),
    // At most one default onboarding template per organization.
    uniqueIndex('project_templates_default_uq').on(t.orgId).where(sql`${t.isDefaultOnboarding}`),
  ],
);

export type ProjectTemplateRow = typeof projectTemplates.$inferSelect;

export const projectTemplateApplications = pgTable(
  'project_template_applications',
  {
    id: id(),
    orgId: orgId(),
    /** Null once the template is deleted: the project and the onboarding stay. */
    templateId: text('template_id').references(() => projectTemplates.id, { onDelete: 'set null' }),
    leadId: leadRef().notNull(),
    /** Set in the applying transaction right after the project is created. */
    projectId: text('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    /** Whether the project is the lead's client onboarding (the default onboarding template's). */
    onboarding: boolean('onboarding').notNull().default(false),
    /** Task id -> weight of the tasks the template created (other tasks of the project weigh 1). */
    taskWeights: jsonb('task_weights').$type<Record<string, number>>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('project_template_applications_uq').on(t.orgId, t.templateId, t.leadId),
    index('project_template_applications_lead_idx').on(t.leadId),
    index('project_template_applications_project_idx').on(t.projectId),
  ],
);

export type ProjectTemplateApplicationRow = typeof projectTemplateApplications.$inferSelect;
