// Project templates' data functions: templates (workspace settings, deleted for good), applying
// one to a lead (a project named after it with one task per template task, idempotent per lead and
// template through a unique index), the default onboarding template applied when a lead is
// converted to a client, and the lead's onboarding progress.
import { and, desc, eq, ne, sql } from 'drizzle-orm';
import { z } from 'zod';
import { checkFeature } from '../../core/access.ts';
import type { Executor } from '../../core/db/client.ts';
import { newId } from '../../core/ids.ts';
import { auditFields, defineSettingsTable, type RecordContext } from '../../core/records.ts';
import { leadRecords } from '../leads/store.ts';
import { projectsCatalogue } from '../projects/catalogue.ts';
import { projectIsLive } from '../projects/lookups.ts';
import { insertProject, type ProjectRecord, projectRecord, projectRecords } from '../projects/store.ts';
import { liveTasksOfProject } from '../tasks/lookups.ts';
import { insertTask } from '../tasks/store.ts';
import {
  type ProjectTemplateRow,
  projectTemplateApplications,
  projectTemplates,
  type TemplateTask,
} from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Template shape

const templateTaskSchema = z
  .object({
    text: z.string().describe('What needs doing'),
    offset_days: z.number().int().describe('Due this many days after the day the template is applied'),
    weight: z.number().int().describe('Weight in the progress percent, 1-100'),
  })
  .describe('One task of the template');

export const templateSchema = z
  .object({
    _id: z.string().describe('Template id (24 hex characters)'),
    name: z.string().describe('Template name; the projects it creates are named after it'),
    currency: z.string().describe('ISO 4217 currency of the projects it creates'),
    tasks: z.array(templateTaskSchema).describe('Its tasks, in order'),
    is_default_onboarding: z
      .boolean()
      .describe(
        "True for the organization's default onboarding template (at most one), applied when a lead becomes a client",
      ),
    ...auditFields('template'),
  })
  .describe('A project template');
export type TemplateRecord = z.output<typeof templateSchema>;

export function serializeTemplate(row: ProjectTemplateRow): TemplateRecord {
  return {
    _id: row.id,
    name: row.name,
    currency: row.currency,
    tasks: row.tasks.map((t) => ({ text: t.text, offset_days: t.offset_days, weight: t.weight })),
    is_default_onboarding: row.isDefaultOnboarding,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Templates are workspace settings: looked up, listed by name and deleted for good. */
export const templateTable = defineSettingsTable<ProjectTemplateRow>({
  label: 'Project template',
  table: projectTemplates,
  select: (db) => db.select().from(projectTemplates).$dynamic(),
  update: (db, set, where) => db.update(projectTemplates).set(set).where(where).returning(),
});

// ---------------------------------------------------------------------------------------------
// Template writes

export interface TemplateInput {
  name?: string | undefined;
  currency?: string | undefined;
  tasks?: TemplateTask[] | undefined;
  is_default_onboarding?: boolean | undefined;
}

/**
 * Making a template the default unsets the previous one first. A transaction-scoped advisory lock
 * per organization queues concurrent changes of the default, so the partial unique index
 * (one default per organization) is never hit as a 500.
 */
async function takeDefault(ctx: RecordContext, templateId: string): Promise<void> {
  await ctx.db.execute(
    sql`select pg_advisory_xact_lock(hashtext(${`project_templates_default:${ctx.auth.orgId}`}))`,
  );
  await ctx.db
    .update(projectTemplates)
    .set({ isDefaultOnboarding: false, updatedAt: ctx.now })
    .where(
      and(
        eq(projectTemplates.orgId, ctx.auth.orgId),
        eq(projectTemplates.isDefaultOnboarding, true),
        ne(projectTemplates.id, templateId),
      ),
    );
}

export async function insertTemplate(
  ctx: RecordContext,
  input: TemplateInput & { name: string; tasks: TemplateTask[] },
): Promise<TemplateRecord> {
  const id = newId();
  const isDefault = input.is_default_onboarding ?? false;
  if (isDefault) await takeDefault(ctx, id);
  const [row] = await ctx.db
    .insert(projectTemplates)
    .values({
      id,
      orgId: ctx.auth.orgId,
      name: input.name,
      currency: input.currency ?? 'USD',
      tasks: input.tasks,
      isDefaultOnboarding: isDefault,
      createdBy: ctx.auth.userId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  if (!row) throw new Error('insert returned no template');
  return serializeTemplate(row);
}

export async function patchTemplate(
  ctx: RecordContext,
  id: string,
  input: TemplateInput,
): Promise<TemplateRecord> {
  const before = await templateTable.get(ctx.db, ctx.auth.orgId, id, 'update');
  if (input.is_default_onboarding === true && !before.isDefaultOnboarding) await takeDefault(ctx, before.id);
  const row = await templateTable.write(ctx.db, ctx.auth.orgId, before.id, {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.currency !== undefined ? { currency: input.currency } : {}),
    ...(input.tasks !== undefined ? { tasks: input.tasks } : {}),
    ...(input.is_default_onboarding !== undefined
      ? { isDefaultOnboarding: input.is_default_onboarding }
      : {}),
    updatedAt: ctx.now,
  });
  return serializeTemplate(row);
}

/** Deletes the template for good; the projects it created and their onboarding stay. */
export async function deleteTemplate(ctx: RecordContext, id: string): Promise<void> {
  const before = await templateTable.get(ctx.db, ctx.auth.orgId, id, 'update');
  await templateTable.remove(ctx.db, ctx.auth.orgId, before.id);
}

// ---------------------------------------------------------------------------------------------
// Applying

/** The UTC day `days` after `now`'s, as YYYY-MM-DD. */
export function dayAfter(now: Date, days: number): string {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(start + days * 86_400_000).toISOString().slice(0, 10);
}

/** A template task is due at the end (23:59:59 UTC) of its day, so a task due today is not yet overdue today. */
export const dueAtOf = (day: string): Date => new Date(`${day}T23:59:59.000Z`);

export interface Applied {
  project: ProjectRecord;
  /** False when this lead already had a project from this template (which is returned). */
  created: boolean;
}

/**
 * Applies a template to a lead: a project named after the template for the lead, in the template's
 * currency, with one task per template task (assigned to the caller, due `offset_days` after
 * today, on the lead and the project). Idempotent per lead and template: the application row's
 * unique index lets one transaction win; the others wait for it and then return its project.
 */
export async function applyTemplate(
  ctx: RecordContext,
  template: ProjectTemplateRow,
  leadId: string,
  onboarding: boolean,
): Promise<Applied> {
  await leadRecords.getLive(ctx.db, ctx.auth.orgId, leadId);
  const [claimed] = await ctx.db
    .insert(projectTemplateApplications)
    .values({ id: newId(), orgId: ctx.auth.orgId, templateId: template.id, leadId, onboarding })
    .onConflictDoNothing({
      target: [
        projectTemplateApplications.orgId,
        projectTemplateApplications.templateId,
        projectTemplateApplications.leadId,
      ],
    })
    .returning();
  if (!claimed) {
    const [existing] = await ctx.db
      .select({ projectId: projectTemplateApplications.projectId })
      .from(projectTemplateApplications)
      .where(
        and(
          eq(projectTemplateApplications.orgId, ctx.auth.orgId),
          eq(projectTemplateApplications.templateId, template.id),
          eq(projectTemplateApplications.leadId, leadId),
        ),
      );
    if (!existing?.projectId) throw new Error('a template application without its project');
    const row = await projectRecords.getLive(ctx.db, ctx.auth.orgId, existing.projectId);
    return { project: await projectRecord(ctx.db, ctx.auth.orgId, row), created: false };
  }
  const project = await insertProject(ctx, {
    name: template.name,
    currency: template.currency,
    lead_id: leadId,
  });
  const weights: Record<string, number> = {};
  for (const task of template.tasks) {
    const created = await insertTask(ctx, {
      text: task.text,
      leadId,
      projectId: project.id,
      dueAt: dueAtOf(dayAfter(ctx.now, task.offset_days)),
    });
    weights[created._id] = task.weight;
  }
  await ctx.db
    .update(projectTemplateApplications)
    .set({ projectId: project.id, taskWeights: weights })
    .where(eq(projectTemplateApplications.id, claimed.id));
  return { project: await projectRecord(ctx.db, ctx.auth.orgId, project), created: true };
}

/**
 * The leadConverted hook: applies the organization's default onboarding template to the new client,
 * when there is one and the plan has projects (else nothing).
 */
export async function applyDefaultOnboarding(ctx: RecordContext, leadId: string): Promise<void> {
  const lowest = projectsCatalogue.features.projects;
  if (!checkFeature(ctx.auth.plan, ctx.auth.disabledFeatures, 'projects', lowest).ok) return;
  const [template] = await ctx.db
    .select()
    .from(projectTemplates)
    .where(and(eq(projectTemplates.orgId, ctx.auth.orgId), eq(projectTemplates.isDefaultOnboarding, true)))
    .limit(1);
  if (template) await applyTemplate(ctx, template, leadId, true);
}

// ---------------------------------------------------------------------------------------------
// Onboarding progress

const ONBOARDING_STATUSES = ['not_started', 'in_progress', 'completed'] as const;

export const onboardingSchema = z
  .object({
    lead_id: z.string().describe('The lead'),
    project_id: z.string().nullable().describe('Its onboarding project, or null when none was started'),
    status: z
      .enum(ONBOARDING_STATUSES)
      .describe('not_started (no onboarding project), in_progress (open tasks left, even at 0%), completed'),
    percent: z
      .number()
      .int()
      .describe(
        '0-100: the weight of the completed tasks over the weight of all, rounded down (100 only when all are done)',
      ),
    tasks_total: z.number().int().describe('Live tasks of the onboarding project'),
    tasks_done: z.number().int().describe('Those completed'),
    overdue_tasks: z.number().int().describe('Open tasks whose due time has passed'),
    next_task: z
      .object({
        id: z.string().describe('Task id'),
        text: z.string().describe('What needs doing'),
        due_date: z.string().nullable().describe('Its due day (YYYY-MM-DD, UTC), or null'),
      })
      .nullable()
      .describe('The open task due first (undated ones last), or null when none is open'),
  })
  .describe("A lead's client onboarding progress");
export type Onboarding = z.output<typeof onboardingSchema>;

export interface OnboardingTask {
  id: string;
  text: string;
  dueAt: Date | null;
  isComplete: boolean;
  weight: number;
}

/** The progress of an onboarding project's tasks at `now` (pure: the tests fix `now`). */
export function onboardingOf(
  leadId: string,
  projectId: string | null,
  list: readonly OnboardingTask[],
  now: Date,
): Onboarding {
  if (projectId === null) {
    return {
      lead_id: leadId,
      project_id: null,
      status: 'not_started',
      percent: 0,
      tasks_total: 0,
      tasks_done: 0,
      overdue_tasks: 0,
      next_task: null,
    };
  }
  const open = list.filter((t) => !t.isComplete);
  const total = list.reduce((sum, t) => sum + t.weight, 0);
  const done = list.filter((t) => t.isComplete).reduce((sum, t) => sum + t.weight, 0);
  const next = [...open].sort((a, b) => {
    if (a.dueAt === null || b.dueAt === null)
      return a.dueAt === b.dueAt ? a.id.localeCompare(b.id) : a.dueAt === null ? 1 : -1;
    return a.dueAt.getTime() - b.dueAt.getTime() || a.id.localeCompare(b.id);
  })[0];
  return {
    lead_id: leadId,
    project_id: projectId,
    status: open.length === 0 ? 'completed' : 'in_progress',
    percent: open.length === 0 ? 100 : Math.floor((done * 100) / total),
    tasks_total: list.length,
    tasks_done: list.length - open.length,
    overdue_tasks: open.filter((t) => t.dueAt !== null && t.dueAt.getTime() < now.getTime()).length,
    next_task: next
      ? { id: next.id, text: next.text, due_date: next.dueAt ? next.dueAt.toISOString().slice(0, 10) : null }
      : null,
  };
}

/** The lead's onboarding: its latest onboarding project that still exists, and that project's live tasks. */
export async function leadOnboarding(
  db: Executor,
  orgId: string,
  leadId: string,
  now: Date,
): Promise<Onboarding> {
  const lead = await leadRecords.getLive(db, orgId, leadId);
  const [application] = await db
    .select({
      projectId: projectTemplateApplications.projectId,
      weights: projectTemplateApplications.taskWeights,
    })
    .from(projectTemplateApplications)
    .where(
      and(
        eq(projectTemplateApplications.orgId, orgId),
        eq(projectTemplateApplications.leadId, lead.id),
        eq(projectTemplateApplications.onboarding, true),
        projectIsLive(projectTemplateApplications.projectId),
      ),
    )
    .orderBy(desc(projectTemplateApplications.createdAt), desc(projectTemplateApplications.id))
    .limit(1);
  if (!application?.projectId) return onboardingOf(lead.id, null, [], now);
  const rows = await liveTasksOfProject(db, orgId, application.projectId);
  const list = rows.map((row) => ({ ...row, weight: application.weights[row.id] ?? 1 }));
  return onboardingOf(lead.id, application.projectId, list, now);
}
