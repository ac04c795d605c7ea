// Smart views: saved, named filters over the leads. A view is private to its creator or shared
// with the organization; running one compiles its query (query/) into SQL and returns
// the matching live leads, optionally reduced to the view's display columns. This file declares
// the tools; the data functions are store.ts.
import { z } from 'zod';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { displayColumnsSchema, smartViewQuerySchema, smartViewSortSchema } from './query/filter-schema.ts';
import {
  deleteSmartViewRow,
  getVisibleView,
  insertSmartView,
  listSmartViewPage,
  runSmartViewPage,
  serializeSmartView,
  smartViewSchema,
  VISIBILITIES,
  writeSmartView,
} from './store.ts';

const FEATURE = 'smart_views';

// ---------------------------------------------------------------------------------------------
// Input fields

const nameField = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine(NO_NUL, 'must not contain NUL characters')
  .describe('Name of the view (1-200 characters)');
const scopeField = z.enum(['leads']).describe('What the view lists; only "leads" (the default) is supported');
const visibilityField = z
  .enum(VISIBILITIES)
  .describe('private (default): only its creator sees it; shared: everyone in the organization sees it');

const smartViewOutput = z.object({ smart_view: smartViewSchema });
const idShape = { id: objectId('smart view') };

// ---------------------------------------------------------------------------------------------
// Tools

const sortInput = smartViewSortSchema
  .nullable()
  .optional()
  .describe('Order of the results: {field, direction: 1 | -1}; null or left out means newest first');

export const createSmartView = defineTool({
  name: 'create_smart_view',
  title: 'Create a smart view',
  description:
    'Saves a named filter over the leads (a smart view): `query` = {filters, logic: and|or}; each filter compares a `field` of a `field_type` (lead, contact, opportunity, task, activity, custom_field) with an `op` and usually a `value`. Private unless `visibility` says otherwise. Run it with run_smart_view.',
  input: z.strictObject({
    name: nameField,
    scope: scopeField.default('leads'),
    query: smartViewQuerySchema,
    sort: sortInput,
    display_columns: displayColumnsSchema.optional(),
    visibility: visibilityField.default('private'),
  }),
  output: smartViewOutput,
  access: { kind: 'write', resource: 'leads', permission: 'smart_views.create', feature: FEATURE },
  toolset: 'views',
  async handler(input, ctx) {
    return { smart_view: await insertSmartView(ctx, input) };
  },
});

export const listSmartViews = defineTool({
  name: 'list_smart_views',
  title: 'List smart views',
  description:
    'Lists the saved smart views (lead filters) the caller can use, their own and shared ones; `search` matches names. Run one with run_smart_view.',
  input: z.strictObject({
    ...listParams(['created_at', 'updated_at', 'name'] as const),
    visibility: visibilityField.optional().describe('Only views with this visibility'),
  }),
  output: pagedOutput('smart_views', smartViewSchema),
  access: { kind: 'read', resource: 'leads', permission: 'smart_views.view', feature: FEATURE },
  async handler(input, { db, auth }) {
    return listSmartViewPage(db, auth, input);
  },
});

export const getSmartView = defineTool({
  name: 'get_smart_view',
  title: 'Get a smart view',
  description:
    'Returns one smart view (its query, sort, display columns and visibility) by id. Private views of other users answer 404. To get its leads use run_smart_view.',
  input: z.strictObject(idShape),
  output: smartViewOutput,
  access: { kind: 'read', resource: 'leads', permission: 'smart_views.view', feature: FEATURE },
  toolset: 'views',
  async handler(input, { db, auth }) {
    return { smart_view: serializeSmartView(await getVisibleView(db, auth, input.id)) };
  },
});

export const updateSmartView = defineTool({
  name: 'update_smart_view',
  title: 'Update a smart view',
  description:
    'Changes the fields sent of a smart view (merge semantics: fields left out keep their values; `query` is replaced as a whole; `sort: null` ' +
    "clears the sort). Anyone may change their own views; changing another user's shared view needs the smart_views.manage_shared permission, " +
    'and only the creator may change its visibility. Returns the updated view.',
  input: z.strictObject({
    ...idShape,
    name: nameField.optional(),
    scope: scopeField.optional(),
    query: smartViewQuerySchema.optional(),
    sort: sortInput,
    display_columns: displayColumnsSchema.optional(),
    visibility: visibilityField.optional(),
  }),
  output: smartViewOutput,
  access: { kind: 'write', resource: 'leads', permission: 'smart_views.edit', feature: FEATURE },
  annotations: { idempotentHint: true },
  toolset: 'views',
  async handler(input, ctx) {
    return { smart_view: await writeSmartView(ctx, input.id, input) };
  },
});

export const deleteSmartView = defineTool({
  name: 'delete_smart_view',
  title: 'Delete a smart view',
  description:
    "Deletes a smart view for good (views have no trash). Anyone may delete their own views; deleting another user's shared view needs the smart_views.manage_shared permission. The leads are not affected.",
  input: z.strictObject(idShape),
  output: messageOutput,
  access: { kind: 'write', resource: 'leads', permission: 'smart_views.edit', feature: FEATURE },
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'views',
  async handler(input, { db, auth }) {
    await deleteSmartViewRow(db, auth, input.id);
    return { message: 'Smart view deleted' };
  },
});

const resultLeadSchema = z
  .looseObject({
    _id: z.string().describe('Lead id (24 hex characters)'),
    name: z.string().describe('Lead name'),
  })
  .describe(
    'A matching lead: the whole lead (as get_lead returns it) or, when the view has display_columns, _id, name and those columns (null where the lead has no value)',
  );

export const runSmartView = defineTool({
  name: 'run_smart_view',
  title: 'Run a smart view',
  description:
    'Runs a saved smart view: returns the live leads matching its filters, in its sort order. Paged; find view ids with list_smart_views.',
  input: z.strictObject({
    ...idShape,
    page: listParams(['created_at'] as const).page,
    limit: listParams(['created_at'] as const).limit,
  }),
  output: pagedOutput('leads', resultLeadSchema),
  access: { kind: 'read', resource: 'leads', permission: 'smart_views.view', feature: FEATURE },
  async handler(input, ctx) {
    return runSmartViewPage(ctx, input.id, input);
  },
});

export const smartViewTools = [
  listSmartViews,
  runSmartView,
  createSmartView,
  getSmartView,
  updateSmartView,
  deleteSmartView,
];
