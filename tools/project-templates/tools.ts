// Project template tools: template CRUD (settings.project_templates.manage; plan feature projects),
// applying a template to a lead (projects.create; plan feature projects) and reading a lead's
// client onboarding progress (projects.view; on every plan: the specification's row has no 402).
// The data functions are store.ts.
import { z } from 'zod';
import type { Feature, Permission } from '../../core/access.ts';
import { currencyField } from '../../core/line-items.ts';
import { SETTINGS_SORT_FIELDS } from '../../core/records.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { projectSchema } from '../projects/store.ts';
import {
  applyTemplate,
  deleteTemplate,
  insertTemplate,
  leadOnboarding,
  onboardingSchema,
  patchTemplate,
  serializeTemplate,
  templateSchema,
  templateTable,
} from './store.ts';

// ---------------------------------------------------------------------------------------------
// Input fields

const nameField = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine(NO_NUL, nulMessage)
  .describe('Template name, 1-200 characters; the projects it creates are named after it');
const templateCurrencyField = currencyField.describe(
  'ISO 4217 currency of the projects it creates (USD, EUR, JPY...); default USD',
);
const tasksField = z
  .array(
    z.strictObject({
      text: z
        .string()
        .trim()
        .min(1)
        .max(500)
        .refine(NO_NUL, nulMessage)
        .describe('What needs doing, 1-500 characters'),
      offset_days: z
        .number()
        .int()
        .min(0)
        .max(365)
        .describe('Due this many days after the day the template is applied, 0-365'),
      weight: z
        .number()
        .int()
        .min(1)
        .max(100)
        .default(1)
        .describe('Weight of the task in the progress percent, 1-100 (default 1)'),
    }),
  )
  .min(1)
  .max(100)
  .describe('The tasks, 1-100, in order');
const defaultField = z
  .boolean()
  .describe(
    'true makes it the default onboarding template, applied when a lead is converted to a client (the previous default is unset); false unsets it',
  );

const templateIdShape = { id: objectId('project template') };

// ---------------------------------------------------------------------------------------------
// Tools

const access = (kind: 'read' | 'write', permission: Permission, feature?: Feature) =>
  ({ kind, resource: 'projects', permission, ...(feature ? { feature } : {}) }) as const;
const manage = access('write', 'settings.project_templates.manage', 'projects');

const templateOutput = z.object({ project_template: templateSchema });

export const listProjectTemplates = defineTool({
  name: 'list_project_templates',
  title: 'List project templates',
  description:
    'Lists the project templates of the organization, newest first by default; `search` matches part of the name. ' +
    'Paginated: returns `project_templates` plus `total`, `page`, `limit`, `totalPages`; `limit` is 1-100 (default 25). ' +
    'Needs a plan with projects.',
  input: z.strictObject(listParams(SETTINGS_SORT_FIELDS)),
  output: pagedOutput('project_templates', templateSchema),
  access: access('read', 'projects.view', 'projects'),
  toolset: 'projects',
  async handler(input, { db, auth }) {
    return templateTable.list(db, 'project_templates', serializeTemplate, auth.orgId, input);
  },
});

export const getProjectTemplate = defineTool({
  name: 'get_project_template',
  title: 'Get a project template',
  description:
    'Returns one project template by id with its tasks (text, offset_days, weight). Find ids with list_project_templates. ' +
    'Needs a plan with projects.',
  input: z.strictObject(templateIdShape),
  output: templateOutput,
  access: access('read', 'projects.view', 'projects'),
  toolset: 'projects',
  async handler(input, { db, auth }) {
    return { project_template: serializeTemplate(await templateTable.get(db, auth.orgId, input.id)) };
  },
});

export const createProjectTemplate = defineTool({
  name: 'create_project_template',
  title: 'Create a project template',
  description:
    'Creates a project template of 1-100 tasks (text, offset_days, weight); `is_default_onboarding: true` makes it the client onboarding template (unsetting the previous one). Apply it with apply_project_template. Owners, admins and managers; needs a plan with projects.',
  input: z.strictObject({
    name: nameField,
    currency: templateCurrencyField.optional(),
    tasks: tasksField,
    is_default_onboarding: defaultField.optional(),
  }),
  output: templateOutput,
  access: manage,
  toolset: 'projects',
  async handler(input, ctx) {
    return { project_template: await insertTemplate(ctx, input) };
  },
});

export const updateProjectTemplate = defineTool({
  name: 'update_project_template',
  title: 'Update a project template',
  description:
    'Changes only the fields sent of a project template and returns it; `tasks` replaces every task. Projects already ' +
    'created from it do not change. `is_default_onboarding: true` unsets the previous default. Owners, admins and ' +
    'managers; needs a plan with projects.',
  input: z.strictObject({
    ...templateIdShape,
    name: nameField.optional(),
    currency: templateCurrencyField.optional(),
    tasks: tasksField.optional(),
    is_default_onboarding: defaultField.optional(),
  }),
  output: templateOutput,
  access: manage,
  annotations: { idempotentHint: true },
  toolset: 'projects',
  async handler(input, ctx) {
    const { id, ...changes } = input;
    return { project_template: await patchTemplate(ctx, id, changes) };
  },
});

export const deleteProjectTemplate = defineTool({
  name: 'delete_project_template',
  title: 'Delete a project template',
  description:
    'Deletes a project template for good. Projects created from it, their tasks and the onboarding progress they carry ' +
    'stay. Owners, admins and managers; needs a plan with projects.',
  input: z.strictObject(templateIdShape),
  output: messageOutput,
  access: manage,
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'projects',
  async handler(input, ctx) {
    await deleteTemplate(ctx, input.id);
    return { message: 'Project template deleted' };
  },
});

export const applyProjectTemplate = defineTool({
  name: 'apply_project_template',
  title: 'Apply a project template to a lead',
  errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
  description:
    "Starts a project for a lead from a project template: its name, currency and one task per template task (assigned to the caller, due offset_days from today). Idempotent per lead and template: again returns the existing project with `created: false`. A default onboarding template also becomes the lead's onboarding. Needs a plan with projects.",
  input: z.strictObject({
    ...templateIdShape,
    lead_id: objectId('lead').describe('Id of a live lead of this organization to create the project for'),
  }),
  output: z.object({
    project: projectSchema,
    created: z.boolean().describe('True when this call created the project; false when it already existed'),
  }),
  access: access('write', 'projects.create', 'projects'),
  annotations: { idempotentHint: true },
  toolset: 'projects',
  async handler(input, ctx) {
    const template = await templateTable.get(ctx.db, ctx.auth.orgId, input.id, 'share');
    return applyTemplate(ctx, template, input.lead_id, template.isDefaultOnboarding);
  },
});

export const getLeadOnboarding = defineTool({
  name: 'get_lead_onboarding',
  title: "Get a lead's client onboarding",
  description:
    "Returns a client lead's onboarding progress: its onboarding project's status, percent done, task counts, overdue tasks and the next task.",
  input: z.strictObject({ id: objectId('lead') }),
  output: z.object({ onboarding: onboardingSchema }),
  access: access('read', 'projects.view'),
  async handler(input, { db, auth, now }) {
    return { onboarding: await leadOnboarding(db, auth.orgId, input.id, now) };
  },
});

export const projectTemplateTools = [
  listProjectTemplates,
  getProjectTemplate,
  createProjectTemplate,
  updateProjectTemplate,
  deleteProjectTemplate,
  applyProjectTemplate,
  getLeadOnboarding,
];
