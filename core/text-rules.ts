// Input rules shared by every tools module: text PostgreSQL can store, and the open "additional
// properties" of leads and contacts (any key beyond the declared fields is kept with the record).
import { z } from 'zod';

/** PostgreSQL text and jsonb reject NUL characters; refusing them in validation keeps that a 400, not a 500. */
export const NO_NUL = (s: string): boolean => !s.includes('\u0000');
export const nulMessage = 'must not contain NUL characters';

/**
 * A mail header field (a subject, an attachment's file name or content type) is one line: a CR or LF
 * would end the header, so it is refused when the value is given (a 400 naming the field) rather
 * than failing at send time, or worse, adding a header (docs/security.md "Email").
 */
export const ONE_LINE = (s: string): boolean => !/[\r\n]/.test(s);
export const oneLineMessage = 'must be one line (no CR or LF)';

/** True when a JSON value holds a NUL character in any string or key, at any depth. */
function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([k, v]) => k.includes('\u0000') || containsNul(v));
  }
  return false;
}

/** The name rule of additional properties: a letter, then letters, digits and underscores (64 at most). */
const ADDITIONAL_PROPERTY_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const MAX_ADDITIONAL_PROPERTIES = 100;

export interface AdditionalPropertyRules {
  /** Names the record's own fields or event payloads use, which a caller may not set. */
  reserved: ReadonlySet<string>;
  /** The record's name in messages ("lead", "contact"). */
  record: string;
}

/** Checks the additional properties (keys outside `known`): name rules, reserved names, NULs, count. */
function checkAdditionalProperties(known: ReadonlySet<string>, rules: AdditionalPropertyRules) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    const keys = Object.keys(value).filter((k) => !known.has(k));
    for (const key of keys) {
      if (rules.reserved.has(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `"${key}" is a reserved field and cannot be set`,
        });
      } else if (!ADDITIONAL_PROPERTY_KEY.test(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message:
            'additional property names start with a letter and hold only letters, digits and underscores (at most 64 characters)',
        });
      } else if (containsNul(value[key])) {
        ctx.addIssue({ code: 'custom', path: [key], message: nulMessage });
      }
    }
    if (keys.length > MAX_ADDITIONAL_PROPERTIES) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `at most ${MAX_ADDITIONAL_PROPERTIES} additional properties per ${rules.record} (got ${keys.length})`,
      });
    }
  };
}

/** An object schema whose unknown keys become additional properties, checked by the same rules everywhere. */
export function withAdditionalProperties<S extends z.core.$ZodLooseShape>(
  shape: S,
  rules: AdditionalPropertyRules,
) {
  const known = new Set(Object.keys(shape));
  return z
    .object(shape)
    .catchall(z.unknown().describe(`Any JSON value, kept with the ${rules.record}`))
    .superRefine(checkAdditionalProperties(known, rules), {
      // Run even when a declared field failed, so one response lists every problem.
      when: (payload) => typeof payload.value === 'object' && payload.value !== null,
    });
}

/** The additional properties of a parsed input: every key outside the declared ones. */
export function additionalPropertiesOf(
  input: Record<string, unknown>,
  known: ReadonlySet<string>,
): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([k]) => !known.has(k)));
}
