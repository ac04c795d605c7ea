// Field definitions that organizations design themselves (custom activity types, custom objects) and
// the validation of the values stored against them. One module, so both features accept and refuse
// exactly the same values, and report problems with the same field paths and codes.
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { users } from '../../core/db/schema.ts';
import type { ErrorDetail } from '../../core/errors.ts';
import { OBJECT_ID_PATTERN } from '../../core/ids.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { liveLeadIds } from '../leads/lookups.ts';
import type { CustomFieldDef } from './tables.ts';

/** A field definition as stored, for the areas that design fields of their own (custom activity types). */
export type { CustomFieldDef } from './tables.ts';

const CUSTOM_FIELD_TYPES = ['text', 'number', 'date', 'boolean', 'choice', 'user', 'lead'] as const;

const MAX_CUSTOM_FIELDS = 100;
const MAX_CHOICE_OPTIONS = 100;
const MAX_TEXT_VALUE = 10_000;

const FIELD_KEY = /^[a-z][a-z0-9_]{0,63}$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

const optionSchema = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine(NO_NUL, nulMessage)
  .describe('An allowed value');

export const customFieldDefSchema = z
  .strictObject({
    key: z
      .string()
      .regex(
        FIELD_KEY,
        'must start with a lowercase letter and hold only a-z, 0-9 and _ (at most 64 characters)',
      )
      .describe('Machine name, the key of its value: a-z first, then a-z, 0-9, _'),
    label: z.string().trim().min(1).max(100).refine(NO_NUL, nulMessage).describe('Display name'),
    type: z
      .enum(CUSTOM_FIELD_TYPES)
      .describe(
        'text (up to 10000 characters), number, date (YYYY-MM-DD), boolean, choice (one of options), user or lead (an id)',
      ),
    required: z.boolean().default(false).describe('Every record needs a non-null value'),
    options: z
      .array(optionSchema)
      .min(1)
      .max(MAX_CHOICE_OPTIONS)
      .optional()
      .describe('Distinct allowed values; for type choice only, and required there'),
  })
  .superRefine((def, ctx) => {
    if (def.type === 'choice' && def.options === undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'a choice field needs its options' });
    }
    if (def.type !== 'choice' && def.options !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'only choice fields take options' });
    }
    const seen = new Set<string>();
    for (const [index, option] of (def.options ?? []).entries()) {
      if (seen.has(option)) {
        ctx.addIssue({ code: 'custom', path: ['options', index], message: `duplicate option "${option}"` });
      }
      seen.add(option);
    }
  })
  .describe('One field definition');

export const customFieldDefsSchema = z
  .array(customFieldDefSchema)
  .max(MAX_CUSTOM_FIELDS)
  .superRefine((defs, ctx) => {
    const seen = new Set<string>();
    for (const [index, def] of defs.entries()) {
      if (seen.has(def.key)) {
        ctx.addIssue({ code: 'custom', path: [index, 'key'], message: `duplicate field key "${def.key}"` });
      }
      seen.add(def.key);
    }
  })
  .describe(`The field definitions, at most ${MAX_CUSTOM_FIELDS}, keys unique`);

/** A field definition as returned to callers: `options` present only on choice fields. */
export const customFieldDefOutput = z
  .object({
    key: z.string().describe('Machine name of the field; the key of its value'),
    label: z.string().describe('Human-readable name of the field'),
    type: z.enum(CUSTOM_FIELD_TYPES).describe('Value type of the field'),
    required: z.boolean().describe('Whether a value is required'),
    options: z.array(z.string()).optional().describe('Allowed values, for choice fields only'),
  })
  .describe('One field definition');

/** Normalizes parsed definitions to the stored shape (drops an absent `options`). */
export function toFieldDefs(defs: readonly z.output<typeof customFieldDefSchema>[]): CustomFieldDef[] {
  return defs.map((d) => ({
    key: d.key,
    label: d.label,
    type: d.type,
    required: d.required,
    ...(d.options !== undefined ? { options: d.options } : {}),
  }));
}

/** Keys whose value type differs between two versions of a definition (removed or added keys are not changes). */
export function changedFieldTypes(
  before: readonly CustomFieldDef[],
  after: readonly CustomFieldDef[],
): string[] {
  const previous = new Map(before.map((d) => [d.key, d.type]));
  return after.filter((d) => previous.has(d.key) && previous.get(d.key) !== d.type).map((d) => d.key);
}

export interface ValidateCustomValuesOptions {
  /** A partial update: required keys that are absent keep their stored value, so are not errors. */
  partial: boolean;
  /** Prepended to each key in error `field` paths, e.g. `values` gives `values.outcome`; '' gives `outcome`. */
  pathPrefix: string;
}

export interface ValidatedCustomValues {
  /** The accepted values; on a full (non-partial) validation every defined key is present, absent optional ones null. */
  values: Record<string, unknown>;
  errors: ErrorDetail[];
}

function pathOf(prefix: string, key: string): string {
  return prefix ? `${prefix}.${key}` : key;
}

function isRealDate(value: string): boolean {
  const m = DATE_ONLY.exec(value);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

type Problem = { message: string; code: string } | null;

/** Checks a non-null value against its field's type, apart from references, which are looked up in batches. */
function checkValueShape(def: CustomFieldDef, value: unknown): Problem {
  switch (def.type) {
    case 'text':
      if (typeof value !== 'string') return { message: 'must be a string', code: 'invalid_type' };
      if (value.length > MAX_TEXT_VALUE) {
        return { message: `must be at most ${MAX_TEXT_VALUE} characters`, code: 'too_big' };
      }
      if (!NO_NUL(value)) return { message: nulMessage, code: 'invalid_string' };
      if (def.required && value.trim() === '') return { message: 'is required', code: 'required' };
      return null;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        return { message: 'must be a finite number', code: 'invalid_type' };
      }
      return null;
    case 'date':
      if (typeof value !== 'string' || !isRealDate(value)) {
        return { message: 'must be a real calendar date in the form YYYY-MM-DD', code: 'invalid_date' };
      }
      return null;
    case 'boolean':
      if (typeof value !== 'boolean') return { message: 'must be true or false', code: 'invalid_type' };
      return null;
    case 'choice': {
      const options = def.options ?? [];
      if (typeof value !== 'string' || !options.includes(value)) {
        return { message: `must be one of: ${options.join(', ')}`, code: 'invalid_value' };
      }
      return null;
    }
    case 'user':
    case 'lead':
      if (typeof value !== 'string' || !OBJECT_ID_PATTERN.test(value)) {
        return { message: 'must be a 24-character hexadecimal id', code: 'invalid_id' };
      }
      return null;
  }
}

/** Of `ids`, the ones that are active users of the organization. */
async function findActiveUsers(db: Executor, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(
      and(
        eq(users.orgId, orgId),
        inArray(users.id, [...new Set(ids)]),
        isNull(users.deletedAt),
        eq(users.status, 'active'),
      ),
    );
  return new Set(rows.map((r) => r.id));
}

/**
 * Validates `values` against `defs`: unknown keys, missing required keys (unless partial), types,
 * choices, and user/lead references (two queries at most, whatever the number of fields). `null`
 * clears an optional field and is an error for a required one. Returns the accepted values and every
 * problem found; callers throw validationError(errors) when there are any.
 */
export async function validateCustomValues(
  db: Executor,
  orgId: string,
  defs: readonly CustomFieldDef[],
  values: Record<string, unknown>,
  options: ValidateCustomValuesOptions,
): Promise<ValidatedCustomValues> {
  const byKey = new Map(defs.map((d) => [d.key, d]));
  const errors: ErrorDetail[] = [];
  const accepted: Record<string, unknown> = {};
  const userRefs: { key: string; id: string }[] = [];
  const leadRefs: { key: string; id: string }[] = [];

  for (const [key, value] of Object.entries(values)) {
    const field = pathOf(options.pathPrefix, key);
    const def = byKey.get(key);
    if (!def) {
      errors.push({ field, message: `unknown field "${key}"`, code: 'unknown_field' });
      continue;
    }
    if (value === null || value === undefined) {
      if (def.required) errors.push({ field, message: 'is required and cannot be null', code: 'required' });
      else accepted[key] = null;
      continue;
    }
    const problem = checkValueShape(def, value);
    if (problem) {
      errors.push({ field, ...problem });
      continue;
    }
    if (def.type === 'user' && typeof value === 'string') userRefs.push({ key, id: value.toLowerCase() });
    if (def.type === 'lead' && typeof value === 'string') leadRefs.push({ key, id: value.toLowerCase() });
    accepted[key] =
      typeof value === 'string' && (def.type === 'user' || def.type === 'lead') ? value.toLowerCase() : value;
  }

  if (!options.partial) {
    for (const def of defs) {
      if (Object.hasOwn(values, def.key)) continue;
      if (def.required) {
        errors.push({ field: pathOf(options.pathPrefix, def.key), message: 'is required', code: 'required' });
      } else {
        accepted[def.key] = null;
      }
    }
  }

  // One after the other: both run on the same transaction's connection anyway.
  const liveUsers = await findActiveUsers(
    db,
    orgId,
    userRefs.map((r) => r.id),
  );
  const liveLeads = await liveLeadIds(
    db,
    orgId,
    leadRefs.map((r) => r.id),
  );
  for (const ref of userRefs) {
    if (!liveUsers.has(ref.id)) {
      errors.push({
        field: pathOf(options.pathPrefix, ref.key),
        message: 'must be the id of an active user of this organization',
        code: 'invalid_reference',
      });
      delete accepted[ref.key];
    }
  }
  for (const ref of leadRefs) {
    if (!liveLeads.has(ref.id)) {
      errors.push({
        field: pathOf(options.pathPrefix, ref.key),
        message: 'must be the id of a live lead of this organization',
        code: 'invalid_reference',
      });
      delete accepted[ref.key];
    }
  }
  return { values: accepted, errors };
}
