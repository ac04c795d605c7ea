// The activities store: the record shape, logging and changing an activity (its references
// checked, call.completed emitted once), the lead timeline and the organization-wide list, and the
// trash entry, on the record helper (core/records.ts). The per-type rules live in types.ts.
import { and, desc, eq, gte, lt, sql } from 'drizzle-orm';
import { z } from 'zod';
import { checkFeature } from '../../core/access.ts';
import type { Executor } from '../../core/db/client.ts';
import { AppError, type ErrorDetail, validationError } from '../../core/errors.ts';
import {
  auditValues,
  defineRecordTable,
  isAssignableUser,
  type ListParams,
  mergePatch,
  newRecordStamp,
  type PagedList,
  type RecordContext,
  type SortColumn,
} from '../../core/records.ts';
import type { Page } from '../../core/schemas.ts';
import type { ToolContext } from '../../core/tool.ts';
import type { TrashType } from '../../core/trash.ts';
import { isContactOfLead } from '../contacts/store.ts';
import { customActivityTypesCatalogue } from '../custom-activity-types/catalogue.ts';
import { customActivityTypeFields } from '../custom-activity-types/store.ts';
import { validateCustomValues } from '../custom-objects/fields.ts';
import { restoreLeadChild } from '../leads/children.ts';
import { getLiveLead } from '../leads/store.ts';
import { type ActivityRow, activities } from './tables.ts';
import {
  ACTIVITY_TYPES,
  type ActivityType,
  detail,
  initialFields,
  isCompletedCall,
  type LogActivityInput,
  meetingTimeProblems,
  mergedFields,
  publicTypeFields,
  toActivityType,
  typeFieldOutputShape,
  typeKeyProblems,
  type UpdateActivityInput,
} from './types.ts';

// ---------------------------------------------------------------------------------------------
// Record shape

export const activitySchema = z
  .object({
    _id: z.string().describe('Activity id (24 hex characters)'),
    lead_id: z.string().describe('Id of the lead the activity belongs to'),
    contact_id: z.string().nullable().describe('Id of the contact of that lead it involved, or null'),
    type: z.enum(ACTIVITY_TYPES).describe('note, call, email, meeting, sms, whatsapp or custom'),
    custom_activity_type_id: z
      .string()
      .nullable()
      .describe('For type custom: id of its custom activity type; null for the other types'),
    user_id: z.string().nullable().describe('Id of the user the activity is by'),
    occurred_at: z.string().describe('When it happened (ISO 8601); the timeline is ordered by it'),
    created_by: z.string().nullable().describe('Id of the user who logged it'),
    created_at: z.string().describe('When it was logged (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
    ...typeFieldOutputShape,
  })
  .describe(
    "An activity. Besides the common fields it carries its type's fields at the top level (note: note; call: direction, status, " +
      'duration_seconds, outcome, recording_url, phone, note; email: direction, subject, body_text, from, to, opened_at; meeting: ' +
      'title, starts_at, ends_at, location, attendees, note) or, for a custom activity, `values`.',
  );
export type ActivityRecord = z.output<typeof activitySchema>;

export function serializeActivity(row: ActivityRow): ActivityRecord {
  const type = toActivityType(row.type);
  return {
    ...publicTypeFields(type, row.fields),
    _id: row.id,
    lead_id: row.leadId,
    contact_id: row.contactId,
    type,
    custom_activity_type_id: row.customActivityTypeId,
    user_id: row.userId,
    occurred_at: row.occurredAt.toISOString(),
    ...auditValues(row),
  };
}

// ---------------------------------------------------------------------------------------------
// Data functions

/** The activities table on the record helper: lookups, lists, writes, trash and restore. */
export const activityRecords = defineRecordTable<ActivityRow>({
  label: 'Activity',
  table: activities,
  select: (db) => db.select().from(activities).$dynamic(),
  update: (db, set, where) => db.update(activities).set(set).where(where).returning(),
});

function assertCustomTypesAllowed(ctx: Pick<ToolContext, 'auth'>): void {
  const check = checkFeature(
    ctx.auth.plan,
    ctx.auth.disabledFeatures,
    'custom_activity_types',
    customActivityTypesCatalogue.features.custom_activity_types,
  );
  if (!check.ok) {
    throw new AppError(check.reason, {
      message: 'The "custom_activity_types" feature is not available to this organization',
      extra: { feature: 'custom_activity_types', current_plan: ctx.auth.plan },
    });
  }
}

/** The contact must be a live contact of the activity's lead (a 400 on `contact_id` otherwise). */
async function contactProblems(
  db: Executor,
  orgId: string,
  leadId: string,
  contactId: string | null | undefined,
): Promise<ErrorDetail[]> {
  if (!contactId) return [];
  return (await isContactOfLead(db, orgId, contactId, leadId))
    ? []
    : [detail('contact_id', 'must be the id of a live contact of this lead', 'invalid_reference')];
}

async function userProblems(ctx: RecordContext, userId: string | undefined): Promise<ErrorDetail[]> {
  if (userId === undefined || userId === ctx.auth.userId) return [];
  return (await isAssignableUser(ctx.db, ctx.auth.orgId, userId))
    ? []
    : [detail('user_id', 'must be the id of an active user of this organization', 'invalid_reference')];
}

/**
 * Custom values checked against their type's fields: the accepted values, and each problem as a
 * `values.<key>` detail (or `custom_activity_type_id` when the type is not the organization's).
 */
async function checkedValues(
  ctx: RecordContext,
  typeId: string,
  values: Record<string, unknown>,
  partial: boolean,
): Promise<{ values: Record<string, unknown>; errors: ErrorDetail[] }> {
  const fields = await customActivityTypeFields(ctx.db, ctx.auth.orgId, typeId);
  if (!fields) {
    const message = 'must be the id of a custom activity type of this organization';
    return { values: {}, errors: [detail('custom_activity_type_id', message, 'invalid_reference')] };
  }
  return validateCustomValues(ctx.db, ctx.auth.orgId, fields, values, { partial, pathPrefix: 'values' });
}

export async function insertActivity(ctx: RecordContext, input: LogActivityInput): Promise<ActivityRecord> {
  const type = input.type;
  if (type === 'custom') assertCustomTypesAllowed(ctx);
  const problems = typeKeyProblems(type, input, true);
  if (problems.length > 0) throw validationError(problems);
  const lead = await getLiveLead(ctx.db, ctx.auth.orgId, input.lead_id);
  const refProblems = [
    ...(await contactProblems(ctx.db, ctx.auth.orgId, lead.id, input.contact_id)),
    ...(await userProblems(ctx, input.user_id)),
  ];
  let fields: Record<string, unknown>;
  if (type === 'custom') {
    const checked = await checkedValues(ctx, input.custom_activity_type_id ?? '', input.values ?? {}, false);
    fields = checked.values;
    refProblems.push(...checked.errors);
  } else {
    fields = initialFields(type, input);
    if (type === 'meeting') refProblems.push(...meetingTimeProblems(fields));
  }
  if (refProblems.length > 0) throw validationError(refProblems);
  const occurredAt =
    input.occurred_at !== undefined
      ? new Date(input.occurred_at)
      : type === 'meeting' && input.starts_at
        ? new Date(input.starts_at)
        : ctx.now;
  const rows = await ctx.db
    .insert(activities)
    .values({
      ...newRecordStamp(ctx),
      leadId: lead.id,
      contactId: input.contact_id ?? null,
      type,
      customActivityTypeId: type === 'custom' ? (input.custom_activity_type_id ?? null) : null,
      userId: input.user_id ?? ctx.auth.userId,
      occurredAt,
      fields,
    })
    .returning();
  const record = await activityRecords.created(ctx, 'activity.created', serializeActivity, rows);
  if (isCompletedCall(type, fields)) await ctx.emit('call.completed', record);
  return record;
}

export async function patchActivity(ctx: RecordContext, input: UpdateActivityInput): Promise<ActivityRecord> {
  const before = await activityRecords.getLive(ctx.db, ctx.auth.orgId, input.id, true);
  const type = toActivityType(before.type);
  if (input.type !== undefined && input.type !== type) {
    throw validationError([
      detail(
        'type',
        `the type of an activity cannot change (this one is ${type}); log a new activity instead`,
        'invalid_value',
      ),
    ]);
  }
  if (type === 'custom' && input.values !== undefined) assertCustomTypesAllowed(ctx);
  const problems = [
    ...typeKeyProblems(type, input, false),
    ...(await contactProblems(ctx.db, ctx.auth.orgId, before.leadId, input.contact_id)),
    ...(await userProblems(ctx, input.user_id)),
  ];
  if (type === 'call' && before.fields.status === 'completed' && input.status === 'in_progress') {
    problems.push(detail('status', 'a completed call cannot go back to in_progress', 'invalid_value'));
  }
  let fields: Record<string, unknown>;
  if (type === 'custom') {
    const typeId = before.customActivityTypeId ?? '';
    const checked =
      input.values === undefined
        ? { values: {}, errors: [] }
        : await checkedValues(ctx, typeId, input.values, true);
    fields = { ...before.fields, ...checked.values };
    problems.push(...checked.errors);
  } else {
    fields = mergedFields(type, before.fields, input);
    if (type === 'meeting') problems.push(...meetingTimeProblems(fields));
  }
  if (problems.length > 0) throw validationError(problems);
  const next = mergePatch(
    { contactId: before.contactId, userId: before.userId, occurredAt: before.occurredAt, fields },
    {
      contactId: input.contact_id,
      userId: input.user_id,
      occurredAt: input.occurred_at === undefined ? undefined : new Date(input.occurred_at),
    },
  );
  const row = await activityRecords.write(ctx.db, ctx.auth.orgId, before.id, { ...next, updatedAt: ctx.now });
  const record = serializeActivity(row);
  // A call ends once: completed never goes back to in_progress, so this fires at most once per call.
  if (!isCompletedCall(type, before.fields) && isCompletedCall(type, fields)) {
    await ctx.emit('call.completed', record);
  }
  return record;
}

/** A lead's timeline: its live activities (of one type, if given), newest occurred first. */
export async function leadTimeline(
  db: Executor,
  orgId: string,
  leadId: string,
  type: ActivityType | undefined,
  page: Page,
): Promise<{ rows: ActivityRow[]; total: number }> {
  const conditions = activityRecords.liveConditions(orgId);
  conditions.push(eq(activities.leadId, leadId));
  if (type) conditions.push(eq(activities.type, type));
  return activityRecords.listPage(db, {
    where: and(...conditions),
    order: [desc(activities.occurredAt), desc(activities.id)],
    page,
  });
}

export interface ActivityFilters {
  leadId?: string | undefined;
  type?: ActivityType | undefined;
  userId?: string | undefined;
  customActivityTypeId?: string | undefined;
  /** ISO date-times: occurred at or after, and before. */
  occurredAfter?: string | undefined;
  occurredBefore?: string | undefined;
}

const SORT_COLUMNS: Record<'occurred_at' | 'created_at', SortColumn> = {
  occurred_at: activities.occurredAt,
  created_at: activities.createdAt,
};

/** The organization's live activities matching the filters, as list_activities answers. */
export async function listActivityPage(
  db: Executor,
  orgId: string,
  filters: ActivityFilters,
  params: ListParams,
): Promise<PagedList<'activities', ActivityRecord>> {
  const conditions = activityRecords.liveConditions(orgId);
  if (filters.leadId) conditions.push(eq(activities.leadId, filters.leadId));
  if (filters.type) conditions.push(eq(activities.type, filters.type));
  if (filters.userId) conditions.push(eq(activities.userId, filters.userId));
  if (filters.customActivityTypeId) {
    conditions.push(eq(activities.customActivityTypeId, filters.customActivityTypeId));
  }
  if (filters.occurredAfter) conditions.push(gte(activities.occurredAt, new Date(filters.occurredAfter)));
  if (filters.occurredBefore) conditions.push(lt(activities.occurredAt, new Date(filters.occurredBefore)));
  return activityRecords.list(db, 'activities', serializeActivity, params, {
    conditions,
    sortColumns: SORT_COLUMNS,
  });
}

/** Brings a trashed activity back; refused while its lead is in the trash (restore the lead, it brings them back). */
async function restoreActivity(ctx: RecordContext, id: string): Promise<ActivityRecord> {
  const { row } = await restoreLeadChild(activityRecords, ctx, id);
  return serializeActivity(row);
}

/**
 * The activity entry of the trash registry. The trash lists a column as the item name; the type
 * (note, call, ...) is the most telling one an activity has.
 */
export const activityTrashTypes: readonly TrashType[] = [
  activityRecords.trashType({
    type: 'activity',
    recordKey: 'activity',
    resource: 'leads',
    schema: activitySchema,
    // No name column: "<type>: <subject, title or the start of the note>", else the type alone.
    name: sql`${activities.type} || coalesce(': ' || left(coalesce(${activities.fields}->>'subject', ${activities.fields}->>'title', ${activities.fields}->>'note'), 80), '')`,
    restore: restoreActivity,
  }),
];
