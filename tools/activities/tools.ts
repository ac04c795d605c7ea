// Activities on a lead: notes, calls, emails, meetings and custom activities (of a custom activity
// type), plus the lead timeline that lists them all. A row keeps the type's own fields in the
// `fields` jsonb (shapes in the issue-5 brief, read by smart views and lead health); the API shows
// the built-in types' fields flattened at the top level and a custom activity's values under
// `values`, exactly as log_activity takes them.
import { and, asc, count, desc, eq, gte, isNotNull, isNull, lt, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { checkFeature } from '../../core/access.ts';
import type { Executor } from '../../core/db/client.ts';
import { AppError, type ErrorDetail, notFound, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { isAssignableUser } from '../../core/records.ts';
import { listParams, messageOutput, objectId, offsetOf, paged, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool, type Tool, type ToolContext } from '../../core/tool.ts';
import type { TrashContext, TrashType } from '../../core/trash.ts';
import { contacts } from '../contacts/tables.ts';
import { customActivityTypes } from '../custom-activity-types/tables.ts';
import { validateCustomValues } from '../custom-objects/fields.ts';
import { assertLeadLive } from '../leads/children.ts';
import { getLiveLead } from '../leads/tools.ts';
import { type ActivityRow, activities } from './tables.ts';

export const ACTIVITY_TYPES = ['note', 'call', 'email', 'meeting', 'custom'] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];
const DIRECTIONS = ['inbound', 'outbound'] as const;
const CALL_STATUSES = ['in_progress', 'completed'] as const;
const CALL_OUTCOMES = ['connected', 'no_answer', 'voicemail', 'busy', 'failed'] as const;
const MAX_NOTE = 20_000;
const MAX_BODY = 100_000;
const MAX_CALL_SECONDS = 86_400;

/** The type-specific input keys each type accepts (the rest of the input is common to every type). */
const TYPE_KEYS = {
  note: ['note'],
  call: ['direction', 'status', 'duration_seconds', 'outcome', 'recording_url', 'phone', 'note'],
  email: ['direction', 'subject', 'body_text', 'from', 'to', 'opened_at'],
  meeting: ['title', 'starts_at', 'ends_at', 'location', 'attendees', 'note'],
  custom: ['custom_activity_type_id', 'values'],
} as const satisfies Record<ActivityType, readonly string[]>;
/** Keys a new activity of the type must carry (and that can never be cleared). */
const REQUIRED_KEYS: Record<ActivityType, readonly string[]> = {
  note: ['note'],
  call: ['direction'],
  email: ['direction', 'subject'],
  meeting: ['title', 'starts_at'],
  custom: ['custom_activity_type_id'],
};
const ALL_TYPE_KEYS: readonly string[] = [...new Set(Object.values(TYPE_KEYS).flat())];

function toActivityType(value: string): ActivityType {
  return ACTIVITY_TYPES.find((t) => t === value) ?? 'note';
}

// ---------------------------------------------------------------------------------------------
// Record shape

const typeFieldOutputShape = {
  note: z.string().nullable().optional().describe('note, call, meeting: the free-text note (null when none)'),
  direction: z.enum(DIRECTIONS).optional().describe('call, email: inbound or outbound'),
  status: z
    .enum(CALL_STATUSES)
    .optional()
    .describe('call: in_progress while the call runs, completed once it ended'),
  duration_seconds: z.number().int().nullable().optional().describe('call: length in seconds, or null'),
  outcome: z
    .enum(CALL_OUTCOMES)
    .nullable()
    .optional()
    .describe('call: connected, no_answer, voicemail, busy or failed; null when not recorded'),
  recording_url: z.string().nullable().optional().describe('call: https URL of the recording, or null'),
  phone: z.string().nullable().optional().describe('call: the phone number called or calling, or null'),
  subject: z.string().optional().describe('email: subject line'),
  body_text: z.string().nullable().optional().describe('email: plain-text body, or null'),
  from: z.string().nullable().optional().describe('email: sender address, or null'),
  to: z.array(z.string()).optional().describe('email: recipient addresses'),
  opened_at: z
    .string()
    .nullable()
    .optional()
    .describe('email: when the recipient opened it (ISO 8601), or null'),
  title: z.string().optional().describe('meeting: title'),
  starts_at: z.string().optional().describe('meeting: start (ISO 8601)'),
  ends_at: z.string().nullable().optional().describe('meeting: end (ISO 8601), or null'),
  location: z.string().nullable().optional().describe('meeting: where it takes place, or null'),
  attendees: z.array(z.string()).optional().describe('meeting: attendees (names or email addresses)'),
  values: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("custom: the values keyed by the custom activity type's field keys (null when not set)"),
};

export const activitySchema = z
  .object({
    _id: z.string().describe('Activity id (24 hex characters)'),
    lead_id: z.string().describe('Id of the lead the activity belongs to'),
    contact_id: z.string().nullable().describe('Id of the contact of that lead it involved, or null'),
    type: z.enum(ACTIVITY_TYPES).describe('note, call, email, meeting or custom'),
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

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);
const intOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
function oneOf<const T extends readonly string[]>(options: T, v: unknown, fallback: T[number]): T[number] {
  return options.find((o) => o === v) ?? fallback;
}

/** The type's stored fields in their public form; absent optional values read as null. */
function publicTypeFields(type: ActivityType, f: Record<string, unknown>): Record<string, unknown> {
  switch (type) {
    case 'note':
      return { note: str(f.note) ?? '' };
    case 'call':
      return {
        direction: oneOf(DIRECTIONS, f.direction, 'outbound'),
        status: oneOf(CALL_STATUSES, f.status, 'completed'),
        duration_seconds: intOrNull(f.duration_seconds),
        outcome: CALL_OUTCOMES.find((o) => o === f.outcome) ?? null,
        recording_url: str(f.recording_url),
        phone: str(f.phone),
        note: str(f.note),
      };
    case 'email':
      return {
        direction: oneOf(DIRECTIONS, f.direction, 'outbound'),
        subject: str(f.subject) ?? '',
        body_text: str(f.body_text),
        from: str(f.from),
        to: strings(f.to),
        opened_at: str(f.opened_at),
      };
    case 'meeting':
      return {
        title: str(f.title) ?? '',
        starts_at: str(f.starts_at) ?? '',
        ends_at: str(f.ends_at),
        location: str(f.location),
        attendees: strings(f.attendees),
        note: str(f.note),
      };
    case 'custom':
      return { values: { ...f } };
  }
}

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
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Input fields

const isoDateTime = (what: string) =>
  z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-05-01T09:00:00Z' })
    .describe(what);
const emailAddress = z.email('must be an email address').max(320).describe('An email address');

/** Type-specific input fields; which type takes which is TYPE_KEYS, checked in the handlers. */
const typeFieldInputShape = {
  note: z
    .string()
    .max(MAX_NOTE)
    .refine(NO_NUL, nulMessage)
    .nullable()
    .optional()
    .describe(
      `note (required, 1-${MAX_NOTE} characters), call and meeting (optional): free-text note; null clears it on a call or meeting`,
    ),
  direction: z.enum(DIRECTIONS).optional().describe('call, email (required): inbound or outbound'),
  status: z
    .enum(CALL_STATUSES)
    .optional()
    .describe(
      'call: completed (default: a logged call has ended) or in_progress (a call still running; set completed later with update_activity)',
    ),
  duration_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_CALL_SECONDS)
    .nullable()
    .optional()
    .describe(`call: length of the call in whole seconds, 0-${MAX_CALL_SECONDS}; null clears it`),
  outcome: z
    .enum(CALL_OUTCOMES)
    .nullable()
    .optional()
    .describe('call: connected, no_answer, voicemail, busy or failed; null clears it'),
  recording_url: z
    .url({ protocol: /^https$/, message: 'must be an https URL' })
    .max(2000)
    .nullable()
    .optional()
    .describe('call: https URL of the call recording (at most 2000 characters); null clears it'),
  phone: z
    .string()
    .trim()
    .min(1)
    .max(50)
    .refine(NO_NUL, nulMessage)
    .nullable()
    .optional()
    .describe('call: the phone number called or calling (at most 50 characters); null clears it'),
  subject: z
    .string()
    .trim()
    .min(1)
    .max(998)
    .refine(NO_NUL, nulMessage)
    .optional()
    .describe('email (required): subject line, 1-998 characters'),
  body_text: z
    .string()
    .max(MAX_BODY)
    .refine(NO_NUL, nulMessage)
    .nullable()
    .optional()
    .describe(`email: plain-text body, at most ${MAX_BODY} characters; null clears it`),
  from: emailAddress.nullable().optional().describe('email: sender address; null clears it'),
  to: z
    .array(emailAddress)
    .max(50)
    .optional()
    .describe('email: recipient addresses, at most 50 (default none)'),
  opened_at: isoDateTime('email: when the recipient opened it (ISO 8601 date-time)')
    .nullable()
    .optional()
    .describe('email: when the recipient opened it (ISO 8601 date-time); null clears it'),
  title: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .refine(NO_NUL, nulMessage)
    .optional()
    .describe('meeting (required): title, 1-500 characters'),
  starts_at: isoDateTime(
    'meeting (required): start (ISO 8601 date-time); also the default occurred_at of the meeting',
  ).optional(),
  ends_at: isoDateTime('meeting: end (ISO 8601 date-time), not before starts_at')
    .nullable()
    .optional()
    .describe('meeting: end (ISO 8601 date-time), not before starts_at; null clears it'),
  location: z
    .string()
    .trim()
    .max(500)
    .refine(NO_NUL, nulMessage)
    .nullable()
    .optional()
    .describe('meeting: where it takes place (at most 500 characters); null clears it'),
  attendees: z
    .array(z.string().trim().min(1).max(320).refine(NO_NUL, nulMessage).describe('An attendee name or email'))
    .max(100)
    .optional()
    .describe('meeting: attendees, names or email addresses, at most 100 (default none)'),
  values: z
    .record(z.string().describe('A field key of the custom activity type'), z.unknown().describe('The value'))
    .optional()
    .describe(
      "custom: values keyed by the custom activity type's field keys (see get_custom_activity_type). Text <= 10000 chars, number, " +
        'date YYYY-MM-DD, boolean, choice (one of its options), user (active user id), lead (live lead id); null clears an optional field. ' +
        'On update only the keys sent change.',
    ),
};

const commonShape = {
  contact_id: objectId('contact')
    .nullable()
    .optional()
    .describe('Id of a live contact of the same lead the activity involved; null for none'),
  user_id: objectId('user')
    .optional()
    .describe('Id of the active user of the organization the activity is by (default: the caller)'),
  occurred_at: isoDateTime(
    'When it happened (ISO 8601 date-time); default now, or starts_at for a meeting',
  ).optional(),
};

const logActivityInput = z.strictObject({
  type: z
    .enum(ACTIVITY_TYPES)
    .describe(
      'The kind of activity; it decides which other fields apply: note (note), call (direction, status, duration_seconds, outcome, ' +
        'recording_url, phone, note), email (direction, subject, body_text, from, to, opened_at), meeting (title, starts_at, ends_at, ' +
        'location, attendees, note), custom (custom_activity_type_id, values)',
    ),
  lead_id: objectId('lead').describe('Id of the live lead the activity belongs to'),
  ...commonShape,
  custom_activity_type_id: objectId('custom activity type')
    .optional()
    .describe('custom (required): id of the custom activity type, from list_custom_activity_types'),
  ...typeFieldInputShape,
});
type LogActivityInput = z.output<typeof logActivityInput>;

const updateActivityInput = z.strictObject({
  id: objectId('activity'),
  type: z
    .enum(ACTIVITY_TYPES)
    .optional()
    .describe("The activity's current type, if you want it checked; the type of an activity cannot change"),
  ...commonShape,
  ...typeFieldInputShape,
});
type UpdateActivityInput = z.output<typeof updateActivityInput>;

// ---------------------------------------------------------------------------------------------
// Data functions

type ActivityCtx = Pick<ToolContext, 'db' | 'auth' | 'emit' | 'now'>;

function detail(field: string, message: string, code: string): ErrorDetail {
  return { field, message, code };
}

/** Type-specific keys the input sets (undefined means "not sent"). */
function sentTypeKeys(input: Record<string, unknown>): string[] {
  return ALL_TYPE_KEYS.filter((k) => input[k] !== undefined);
}

/**
 * Field problems of the discriminated union: keys of other types, and required keys absent (on
 * create) or null (always).
 */
function typeKeyProblems(
  type: ActivityType,
  input: Record<string, unknown>,
  creating: boolean,
): ErrorDetail[] {
  const allowed: readonly string[] = TYPE_KEYS[type];
  const problems: ErrorDetail[] = [];
  for (const key of sentTypeKeys(input)) {
    if (!allowed.includes(key)) {
      problems.push(
        detail(
          key,
          `is not a field of a ${type} activity (its fields: ${allowed.join(', ')})`,
          'unrecognized_keys',
        ),
      );
    }
  }
  for (const key of REQUIRED_KEYS[type]) {
    const value = input[key];
    if ((creating && value === undefined) || value === null) {
      problems.push(detail(key, `is required for a ${type} activity`, 'required'));
    }
  }
  if (type === 'note' && typeof input.note === 'string' && input.note.trim() === '') {
    problems.push(detail('note', 'must not be empty', 'too_small'));
  }
  return problems;
}

function isoOrNull(value: string | null | undefined): string | null {
  return value ? new Date(value).toISOString() : null;
}

/** The stored fields of a new built-in activity; absent optional values are stored as null. */
function initialFields(
  type: Exclude<ActivityType, 'custom'>,
  input: LogActivityInput,
): Record<string, unknown> {
  switch (type) {
    case 'note':
      return { note: input.note ?? '' };
    case 'call':
      return {
        direction: input.direction,
        status: input.status ?? 'completed',
        duration_seconds: input.duration_seconds ?? null,
        outcome: input.outcome ?? null,
        recording_url: input.recording_url ?? null,
        phone: input.phone ?? null,
        note: input.note ?? null,
      };
    case 'email':
      return {
        direction: input.direction,
        subject: input.subject,
        body_text: input.body_text ?? null,
        from: input.from ?? null,
        to: input.to ?? [],
        opened_at: isoOrNull(input.opened_at),
      };
    case 'meeting':
      return {
        title: input.title,
        starts_at: isoOrNull(input.starts_at),
        ends_at: isoOrNull(input.ends_at),
        location: input.location ?? null,
        attendees: input.attendees ?? [],
        note: input.note ?? null,
      };
  }
}

/** The built-in fields after a PATCH: sent keys replace (timestamps normalized to ISO), the rest stay. */
function mergedFields(
  type: Exclude<ActivityType, 'custom'>,
  before: Record<string, unknown>,
  input: Record<string, unknown>,
): Record<string, unknown> {
  const next: Record<string, unknown> = { ...before };
  for (const key of TYPE_KEYS[type]) {
    const value = input[key];
    if (value === undefined) continue;
    const isTime = key === 'starts_at' || key === 'ends_at' || key === 'opened_at';
    next[key] = isTime && typeof value === 'string' ? new Date(value).toISOString() : value;
  }
  return next;
}

function meetingTimeProblems(fields: Record<string, unknown>): ErrorDetail[] {
  const { starts_at: startsAt, ends_at: endsAt } = fields;
  if (
    typeof startsAt === 'string' &&
    typeof endsAt === 'string' &&
    Date.parse(endsAt) < Date.parse(startsAt)
  ) {
    return [detail('ends_at', 'must not be before starts_at', 'too_small')];
  }
  return [];
}

function assertCustomTypesAllowed(ctx: Pick<ToolContext, 'auth'>): void {
  const check = checkFeature(ctx.auth.plan, ctx.auth.disabledFeatures, 'custom_activity_types');
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
  const [row] = await db
    .select({ id: contacts.id })
    .from(contacts)
    .where(
      and(
        eq(contacts.id, contactId),
        eq(contacts.orgId, orgId),
        eq(contacts.leadId, leadId),
        isNull(contacts.deletedAt),
      ),
    )
    .limit(1);
  return row
    ? []
    : [detail('contact_id', 'must be the id of a live contact of this lead', 'invalid_reference')];
}

async function userProblems(ctx: ActivityCtx, userId: string | undefined): Promise<ErrorDetail[]> {
  if (userId === undefined || userId === ctx.auth.userId) return [];
  return (await isAssignableUser(ctx.db, ctx.auth.orgId, userId))
    ? []
    : [detail('user_id', 'must be the id of an active user of this organization', 'invalid_reference')];
}

/** Live activity of the organization, or a 404. */
export async function getLiveActivity(
  db: Executor,
  orgId: string,
  id: string,
  lock = false,
): Promise<ActivityRow> {
  const query = db
    .select()
    .from(activities)
    .where(and(eq(activities.id, id), eq(activities.orgId, orgId), isNull(activities.deletedAt)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Activity');
  return row;
}

/**
 * Custom values checked against their type's fields: the accepted values, and each problem as a
 * `values.<key>` detail (or `custom_activity_type_id` when the type is not the organization's).
 */
async function checkedValues(
  ctx: ActivityCtx,
  typeId: string,
  values: Record<string, unknown>,
  partial: boolean,
): Promise<{ values: Record<string, unknown>; errors: ErrorDetail[] }> {
  const [type] = await ctx.db
    .select({ fields: customActivityTypes.fields })
    .from(customActivityTypes)
    .where(and(eq(customActivityTypes.id, typeId), eq(customActivityTypes.orgId, ctx.auth.orgId)))
    .limit(1);
  if (!type) {
    const message = 'must be the id of a custom activity type of this organization';
    return { values: {}, errors: [detail('custom_activity_type_id', message, 'invalid_reference')] };
  }
  return validateCustomValues(ctx.db, ctx.auth.orgId, type.fields, values, { partial, pathPrefix: 'values' });
}

function isCompletedCall(type: ActivityType, fields: Record<string, unknown>): boolean {
  return type === 'call' && fields.status === 'completed';
}

export async function insertActivity(ctx: ActivityCtx, input: LogActivityInput): Promise<ActivityRecord> {
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
  const [row] = await ctx.db
    .insert(activities)
    .values({
      id: newId(ctx.now),
      orgId: ctx.auth.orgId,
      leadId: lead.id,
      contactId: input.contact_id ?? null,
      type,
      customActivityTypeId: type === 'custom' ? (input.custom_activity_type_id ?? null) : null,
      userId: input.user_id ?? ctx.auth.userId,
      occurredAt,
      fields,
      createdBy: ctx.auth.userId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  if (!row) throw new Error('insert returned no activity');
  const record = serializeActivity(row);
  await ctx.emit('activity.created', record);
  if (isCompletedCall(type, fields)) await ctx.emit('call.completed', record);
  return record;
}

async function patchActivity(ctx: ActivityCtx, input: UpdateActivityInput): Promise<ActivityRecord> {
  const before = await getLiveActivity(ctx.db, ctx.auth.orgId, input.id, true);
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
  const [row] = await ctx.db
    .update(activities)
    .set({
      contactId: input.contact_id === undefined ? before.contactId : input.contact_id,
      userId: input.user_id ?? before.userId,
      occurredAt: input.occurred_at === undefined ? before.occurredAt : new Date(input.occurred_at),
      fields,
      updatedAt: ctx.now,
    })
    .where(and(eq(activities.id, before.id), eq(activities.orgId, ctx.auth.orgId)))
    .returning();
  if (!row) throw notFound('Activity');
  const record = serializeActivity(row);
  // A call ends once: completed never goes back to in_progress, so this fires at most once per call.
  if (!isCompletedCall(type, before.fields) && isCompletedCall(type, fields)) {
    await ctx.emit('call.completed', record);
  }
  return record;
}

/** Brings a trashed activity back; refused while its lead is in the trash (restore the lead, it brings them back). */
async function restoreActivity(ctx: TrashContext, id: string): Promise<ActivityRecord> {
  const [before] = await ctx.db
    .select()
    .from(activities)
    .where(and(eq(activities.id, id), eq(activities.orgId, ctx.auth.orgId), isNotNull(activities.deletedAt)))
    .limit(1)
    .for('update');
  if (!before) throw notFound('Trash item');
  await assertLeadLive(ctx.db, ctx.auth.orgId, before.leadId);
  const [row] = await ctx.db
    .update(activities)
    .set({ deletedAt: null, deletedBy: null, updatedAt: ctx.now })
    .where(and(eq(activities.id, before.id), eq(activities.orgId, ctx.auth.orgId)))
    .returning();
  if (!row) throw notFound('Trash item');
  return serializeActivity(row);
}

/**
 * The activity entry of the trash registry. The trash lists a column as the item name; the type
 * (note, call, ...) is the most telling one an activity has.
 */
export const activityTrashTypes: readonly TrashType[] = [
  {
    type: 'activity',
    recordKey: 'activity',
    resource: 'leads',
    schema: activitySchema,
    table: activities,
    columns: {
      id: activities.id,
      orgId: activities.orgId,
      // No name column: "<type>: <subject, title or the start of the note>", else the type alone.
      name: sql`${activities.type} || coalesce(': ' || left(coalesce(${activities.fields}->>'subject', ${activities.fields}->>'title', ${activities.fields}->>'note'), 80), '')`,
      deletedAt: activities.deletedAt,
      deletedBy: activities.deletedBy,
    },
    restore: restoreActivity,
  },
];

// ---------------------------------------------------------------------------------------------
// Tools

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
    'Records something that happened with a lead: a note, a call, an email, a meeting, or a custom activity of a custom activity type. ' +
    '`type` and `lead_id` are required; then the fields of that type: note needs `note`; call needs `direction` (status defaults ' +
    'to completed, which emits call.completed); email needs `direction` and `subject`; meeting needs `title` and `starts_at`; custom ' +
    'needs `custom_activity_type_id` and its `values` (errors name `values.<key>`; needs the custom_activity_types plan feature). ' +
    'Fields of another type are refused. user_id defaults to the caller, occurred_at to now. Emits activity.created.',
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
    "Lists every activity of one lead (notes, calls, emails, meetings, custom activities) newest first by occurred_at: the lead's " +
    'timeline. Filter with `type`. Paginated: returns `activities` plus `total`, `page`, `limit`, `totalPages`; request page 1, then ' +
    'increment `page` until page >= totalPages. `limit` is 1-100 (default 25). A trashed or unknown lead answers 404.',
  input: z.strictObject({ id: objectId('lead'), page, limit, type: typeFilter }),
  output: pagedOutput('activities', activitySchema),
  access: access('read', 'activities.view'),
  async handler(input, { db, auth }) {
    const lead = await getLiveLead(db, auth.orgId, input.id);
    const conditions: SQL[] = [
      eq(activities.orgId, auth.orgId),
      eq(activities.leadId, lead.id),
      isNull(activities.deletedAt),
    ];
    if (input.type) conditions.push(eq(activities.type, input.type));
    const where = and(...conditions);
    const [totalRow] = await db.select({ n: count() }).from(activities).where(where);
    const rows = await db
      .select()
      .from(activities)
      .where(where)
      .orderBy(desc(activities.occurredAt), desc(activities.id))
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('activities', rows.map(serializeActivity), totalRow?.n ?? 0, input);
  },
});

const LIST_SORT_FIELDS = ['occurred_at', 'created_at'] as const;
const listShape = listParams(LIST_SORT_FIELDS);

export const listActivities = defineTool({
  name: 'list_activities',
  title: 'List activities',
  description:
    'Lists live activities across the organization, newest logged first by default (`sort`: occurred_at or created_at, prefix - for ' +
    'descending). Filters: lead_id, type, user_id, custom_activity_type_id, occurred_after / occurred_before. For one lead prefer ' +
    'list_lead_activities. Paginated: returns `activities` plus `total`, `page`, `limit`, `totalPages`; `limit` is 1-100 (default 25).',
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
    const conditions: SQL[] = [eq(activities.orgId, auth.orgId), isNull(activities.deletedAt)];
    if (input.lead_id) conditions.push(eq(activities.leadId, input.lead_id));
    if (input.type) conditions.push(eq(activities.type, input.type));
    if (input.user_id) conditions.push(eq(activities.userId, input.user_id));
    if (input.custom_activity_type_id) {
      conditions.push(eq(activities.customActivityTypeId, input.custom_activity_type_id));
    }
    if (input.occurred_after) conditions.push(gte(activities.occurredAt, new Date(input.occurred_after)));
    if (input.occurred_before) conditions.push(lt(activities.occurredAt, new Date(input.occurred_before)));
    const where = and(...conditions);
    let order: SQL[] = [desc(activities.createdAt), desc(activities.id)];
    if (input.sort) {
      const descending = input.sort.startsWith('-');
      const field = descending ? input.sort.slice(1) : input.sort;
      const direction = descending ? desc : asc;
      const column = field === 'occurred_at' ? activities.occurredAt : activities.createdAt;
      order = [direction(column), direction(activities.id)];
    }
    const [totalRow] = await db.select({ n: count() }).from(activities).where(where);
    const rows = await db
      .select()
      .from(activities)
      .where(where)
      .orderBy(...order)
      .limit(input.limit)
      .offset(offsetOf(input));
    return paged('activities', rows.map(serializeActivity), totalRow?.n ?? 0, input);
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
    return { activity: serializeActivity(await getLiveActivity(db, auth.orgId, input.id)) };
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
    const before = await getLiveActivity(ctx.db, ctx.auth.orgId, input.id, true);
    await ctx.db
      .update(activities)
      .set({ deletedAt: ctx.now, deletedBy: ctx.auth.userId })
      .where(and(eq(activities.id, before.id), eq(activities.orgId, ctx.auth.orgId)));
    return { message: 'Activity moved to the trash' };
  },
});

export const activityTools: Tool[] = [
  logActivity,
  listLeadActivities,
  listActivities,
  getActivity,
  updateActivity,
  deleteActivity,
];
