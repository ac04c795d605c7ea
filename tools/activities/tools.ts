// Activities on a lead: notes, calls, emails, meetings and custom activities (of a custom activity
// type), plus the lead timeline that lists them all. A row keeps the type's own fields in the
// `fields` jsonb (shapes in the issue-5 brief, read by smart views and lead health); the API shows
// the built-in types' fields flattened at the top level and a custom activity's values under
// `values`, exactly as log_activity takes them. This file declares the tools; the per-type union is
// types.ts, the data functions store.ts.
import { z } from 'zod';
import { listParams, messageOutput, objectId, paged, pagedOutput } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import { getLiveLead } from '../leads/store.ts';
import {
  activityRecords,
  activitySchema,
  insertActivity,
  leadTimeline,
  listActivityPage,
  patchActivity,
  serializeActivity,
} from './store.ts';
import { ACTIVITY_TYPES, isoDateTime, logActivityInput, updateActivityInput } from './types.ts';

const access = (
  kind: 'read' | 'write',
  permission: 'activities.view' | 'activities.create' | 'activities.edit' | 'activities.delete',
) => ({ kind, resource: 'leads', permission }) as const;

const activityOutput = z.object({ activity: activitySchema });
const { page, limit } = listParams(['occurred_at']);
const typeFilter = z.enum(ACTIVITY_TYPES).optional().describe('Only activities of this type');

export const logActivity = defineTool({
  name: 'log_activity',
  title: 'Log an activity on a lead',
  errors: [
    { code: 'not_found', when: 'lead_id names no live lead of the organization' },
    { code: 'plan_upgrade_required', when: 'a custom activity on a plan without custom activity types' },
    {
      code: 'feature_disabled',
      when: 'a custom activity while the organization switched custom activity types off',
    },
  ],
  description:
    'Logs something that happened with a lead: a note, a call, an email, a meeting or a custom activity; `type` decides which fields apply.',
  input: logActivityInput,
  output: activityOutput,
  access: access('write', 'activities.create'),
  async handler(input, ctx) {
    return { activity: await insertActivity(ctx, input) };
  },
});

export const listLeadActivities = defineTool({
  name: 'list_lead_activities',
  title: "Read a lead's timeline",
  description:
    'Lists the timeline of one lead: its notes, calls, emails, meetings and custom activities, newest first; filter by `type`. Paged.',
  input: z.strictObject({ id: objectId('lead'), page, limit, type: typeFilter }),
  output: pagedOutput('activities', activitySchema),
  access: access('read', 'activities.view'),
  async handler(input, { db, auth }) {
    const lead = await getLiveLead(db, auth.orgId, input.id);
    const { rows, total } = await leadTimeline(db, auth.orgId, lead.id, input.type, input);
    return paged('activities', rows.map(serializeActivity), total, input);
  },
});

const LIST_SORT_FIELDS = ['occurred_at', 'created_at'] as const;
const listShape = listParams(LIST_SORT_FIELDS);

export const listActivities = defineTool({
  name: 'list_activities',
  title: 'List activities',
  description:
    'Lists live activities across the organization, newest first; filter by lead, type, user, custom activity type and date range. For one lead prefer list_lead_activities.',
  input: z.strictObject({
    page: listShape.page,
    limit: listShape.limit,
    sort: listShape.sort,
    lead_id: objectId('lead').optional().describe('Only activities of this lead'),
    type: typeFilter,
    user_id: objectId('user').optional().describe('Only activities by this user'),
    custom_activity_type_id: objectId('custom activity type')
      .optional()
      .describe('Only custom activities of this custom activity type'),
    occurred_after: isoDateTime(
      'Only activities that occurred at or after this time (ISO 8601 date-time)',
    ).optional(),
    occurred_before: isoDateTime(
      'Only activities that occurred before this time (ISO 8601 date-time)',
    ).optional(),
  }),
  output: pagedOutput('activities', activitySchema),
  access: access('read', 'activities.view'),
  toolset: 'sales',
  async handler(input, { db, auth }) {
    const filters = {
      leadId: input.lead_id,
      type: input.type,
      userId: input.user_id,
      customActivityTypeId: input.custom_activity_type_id,
      occurredAfter: input.occurred_after,
      occurredBefore: input.occurred_before,
    };
    return listActivityPage(db, auth.orgId, filters, input);
  },
});

export const getActivity = defineTool({
  name: 'get_activity',
  title: 'Get an activity',
  description:
    "Returns one activity by id with its type's fields (or a custom activity's `values`). Trashed activities and ids of other " +
    'organizations answer 404. To read all activities of a lead use list_lead_activities.',
  input: z.strictObject({ id: objectId('activity') }),
  output: activityOutput,
  access: access('read', 'activities.view'),
  toolset: 'sales',
  async handler(input, { db, auth }) {
    return { activity: serializeActivity(await activityRecords.getLive(db, auth.orgId, input.id)) };
  },
});

export const updateActivity = defineTool({
  name: 'update_activity',
  title: 'Update an activity',
  errors: [
    { code: 'plan_upgrade_required', when: 'changing custom values on a plan without custom activity types' },
    {
      code: 'feature_disabled',
      when: 'changing custom values while the organization switched custom activity types off',
    },
  ],
  description:
    "Changes only the fields sent of one activity: contact_id, user_id, occurred_at and the fields of the activity's own type " +
    '(custom `values` merge key by key; null clears an optional field). The type and lead cannot change. Moving a call from ' +
    'in_progress to completed emits call.completed (once; a completed call cannot go back to in_progress).',
  input: updateActivityInput,
  output: activityOutput,
  access: access('write', 'activities.edit'),
  annotations: { idempotentHint: true },
  toolset: 'sales',
  async handler(input, ctx) {
    return { activity: await patchActivity(ctx, input) };
  },
});

export const deleteActivity = defineTool({
  name: 'delete_activity',
  title: 'Delete an activity',
  description:
    "Moves an activity to the trash: it leaves the lead's timeline and every activity tool, and can be brought back with " +
    'restore_trash_item (while its lead is live).',
  input: z.strictObject({ id: objectId('activity') }),
  output: messageOutput,
  access: access('write', 'activities.delete'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'sales',
  async handler(input, ctx) {
    await activityRecords.trash(ctx, input.id);
    return { message: 'Activity moved to the trash' };
  },
});

export const activityTools = [
  logActivity,
  listLeadActivities,
  listActivities,
  getActivity,
  updateActivity,
  deleteActivity,
];
