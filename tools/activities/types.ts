// The per-type union of activities: the seven types (note, call, email, meeting, sms, whatsapp,
// custom), the keys
// each type takes, their input and output shapes, and the rules that tell one type from another
// (keys of another type refused, required keys, a built-in type's stored fields on create and after
// a PATCH, meeting times, a completed call). The API is one flat object whose `type` decides which
// of the type keys apply; the handlers check that with typeKeyProblems.
import { z } from 'zod';
import type { ErrorDetail } from '../../core/errors.ts';
import { objectId } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';

export const ACTIVITY_TYPES = ['note', 'call', 'email', 'meeting', 'sms', 'whatsapp', 'custom'] as const;
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
  // A text message (the messages area logs one per message sent or received): its text and the
  // other party's number.
  sms: ['direction', 'body_text', 'phone'],
  whatsapp: ['direction', 'body_text', 'phone'],
  custom: ['custom_activity_type_id', 'values'],
} as const satisfies Record<ActivityType, readonly string[]>;
/** Keys a new activity of the type must carry (and that can never be cleared). */
const REQUIRED_KEYS: Record<ActivityType, readonly string[]> = {
  note: ['note'],
  call: ['direction'],
  email: ['direction', 'subject'],
  meeting: ['title', 'starts_at'],
  sms: ['direction'],
  whatsapp: ['direction'],
  custom: ['custom_activity_type_id'],
};
const ALL_TYPE_KEYS: readonly string[] = [...new Set(Object.values(TYPE_KEYS).flat())];

export function toActivityType(value: string): ActivityType {
  return ACTIVITY_TYPES.find((t) => t === value) ?? 'note';
}

// ---------------------------------------------------------------------------------------------
// Output: the type fields of the record shape

export const typeFieldOutputShape = {
  note: z.string().nullable().optional().describe('note, call, meeting: the free-text note (null when none)'),
  direction: z.enum(DIRECTIONS).optional().describe('call, email, sms, whatsapp: inbound or outbound'),
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
  phone: z
    .string()
    .nullable()
    .optional()
    .describe("call, sms, whatsapp: the other party's phone number, or null"),
  subject: z.string().optional().describe('email: subject line'),
  body_text: z
    .string()
    .nullable()
    .optional()
    .describe('email: plain-text body; sms, whatsapp: the message text; or null'),
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

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);
const intOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
function oneOf<const T extends readonly string[]>(options: T, v: unknown, fallback: T[number]): T[number] {
  return options.find((o) => o === v) ?? fallback;
}

/** The type's stored fields in their public form; absent optional values read as null. */
export function publicTypeFields(type: ActivityType, f: Record<string, unknown>): Record<string, unknown> {
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
    case 'sms':
    case 'whatsapp':
      return {
        direction: oneOf(DIRECTIONS, f.direction, 'outbound'),
        body_text: str(f.body_text),
        phone: str(f.phone),
      };
    case 'custom':
      return { values: { ...f } };
  }
}

// ---------------------------------------------------------------------------------------------
// Input: the type fields and the two input objects built on them

export const isoDateTime = (what: string) =>
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
  direction: z.enum(DIRECTIONS).optional().describe('call, email, sms, whatsapp (required): in- or outbound'),
  status: z
    .enum(CALL_STATUSES)
    .optional()
    .describe('call: completed (the default) or in_progress (a call still running)'),
  duration_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_CALL_SECONDS)
    .nullable()
    .optional()
    .describe('call: length in whole seconds; null clears it'),
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
    .describe('call: https URL of the recording; null clears it'),
  phone: z
    .string()
    .trim()
    .min(1)
    .max(50)
    .refine(NO_NUL, nulMessage)
    .nullable()
    .optional()
    .describe('call, sms, whatsapp: the other phone number; null clears it'),
  subject: z
    .string()
    .trim()
    .min(1)
    .max(998)
    .refine(NO_NUL, nulMessage)
    .optional()
    .describe('email (required): subject line'),
  body_text: z
    .string()
    .max(MAX_BODY)
    .refine(NO_NUL, nulMessage)
    .nullable()
    .optional()
    .describe('email, sms, whatsapp: plain-text body; null clears it'),
  from: emailAddress.nullable().optional().describe('email: sender address; null clears it'),
  to: z.array(emailAddress).max(50).optional().describe('email: recipient addresses'),
  opened_at: isoDateTime('email: when the recipient opened it (ISO 8601 date-time)')
    .nullable()
    .optional()
    .describe('email: when the recipient opened it; null clears it'),
  title: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .refine(NO_NUL, nulMessage)
    .optional()
    .describe('meeting (required): title'),
  starts_at: isoDateTime(
    'meeting (required): start (ISO 8601 date-time); also the default occurred_at of the meeting',
  ).optional(),
  ends_at: isoDateTime('meeting: end (ISO 8601 date-time), not before starts_at')
    .nullable()
    .optional()
    .describe('meeting: end, not before starts_at; null clears it'),
  location: z
    .string()
    .trim()
    .max(500)
    .refine(NO_NUL, nulMessage)
    .nullable()
    .optional()
    .describe('meeting: where it takes place; null clears it'),
  attendees: z
    .array(z.string().trim().min(1).max(320).refine(NO_NUL, nulMessage).describe('An attendee name or email'))
    .max(100)
    .optional()
    .describe('meeting: attendees, names or email addresses'),
  values: z
    .record(z.string().describe('A field key of the custom activity type'), z.unknown().describe('The value'))
    .optional()
    .describe(
      "custom: values keyed by the custom activity type's field keys (see get_custom_activity_type); null clears an " +
        'optional field. On update only the keys sent change.',
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

export const logActivityInput = z.strictObject({
  type: z
    .enum(ACTIVITY_TYPES)
    .describe(
      'The kind of activity; each other field says which kinds it applies to (`call: ...`, `email (required): ...`)',
    ),
  lead_id: objectId('lead').describe('Id of the live lead the activity belongs to'),
  ...commonShape,
  custom_activity_type_id: objectId('custom activity type')
    .optional()
    .describe('custom (required): id of the custom activity type, from list_custom_activity_types'),
  ...typeFieldInputShape,
});
export type LogActivityInput = z.output<typeof logActivityInput>;

export const updateActivityInput = z.strictObject({
  id: objectId('activity'),
  type: z
    .enum(ACTIVITY_TYPES)
    .optional()
    .describe("The activity's current type, if you want it checked; the type of an activity cannot change"),
  ...commonShape,
  ...typeFieldInputShape,
});
export type UpdateActivityInput = z.output<typeof updateActivityInput>;

// ---------------------------------------------------------------------------------------------
// Type rules

export function detail(field: string, message: string, code: string): ErrorDetail {
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
export function typeKeyProblems(
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
export function initialFields(
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
    case 'sms':
    case 'whatsapp':
      return {
        direction: input.direction,
        body_text: input.body_text ?? null,
        phone: input.phone ?? null,
      };
  }
}

/** The built-in fields after a PATCH: sent keys replace (timestamps normalized to ISO), the rest stay. */
export function mergedFields(
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

export function meetingTimeProblems(fields: Record<string, unknown>): ErrorDetail[] {
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

export function isCompletedCall(type: ActivityType, fields: Record<string, unknown>): boolean {
  return type === 'call' && fields.status === 'completed';
}
