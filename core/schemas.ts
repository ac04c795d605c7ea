// Zod building blocks shared by every tools module, so list conventions and id rules are written
// once: 24-hex ids, page/limit/sort/search, and the paged envelope.
import { z } from 'zod';
import { OBJECT_ID_PATTERN } from './ids.ts';

export const objectId = (what = 'record') =>
  z.string().regex(OBJECT_ID_PATTERN, 'must be a 24-character hexadecimal id').describe(`The ${what}'s id`);

/** True for a YYYY-MM-DD string naming a day that exists (2025-02-30 does not). */
function isRealDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** A calendar date field (YYYY-MM-DD, a day that exists). */
export const dateString = (what: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date in the form YYYY-MM-DD')
    .refine(isRealDate, 'must be a real calendar date')
    .meta({ format: 'date' })
    .describe(`${what} (YYYY-MM-DD)`);

export function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

/** page, limit, sort and search as the specification's list conventions; `sortFields` are the allowed fields. */
export function listParams<const F extends readonly [string, ...string[]]>(
  sortFields: F,
  options: { maxLimit?: number; defaultLimit?: number } = {},
) {
  const maxLimit = options.maxLimit ?? MAX_LIMIT;
  const sortValues = sortFields.flatMap((f) => [f, `-${f}`]);
  return {
    page: z.coerce.number().int().min(1).default(1).describe('Page number, 1-based'),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(maxLimit)
      .default(options.defaultLimit ?? DEFAULT_LIMIT)
      .describe('Items per page'),
    sort: z
      .string()
      .refine((s) => sortValues.includes(s), { message: `must be one of: ${sortValues.join(', ')}` })
      // The refinement as JSON Schema sees it (kept a refinement for its error message).
      .meta({ enum: sortValues })
      .optional()
      .describe('"-field" sorts descending; default newest first'),
    search: z.string().trim().min(1).max(200).optional().describe('Words to search for'),
  };
}

export interface Page {
  page: number;
  limit: number;
}

export function offsetOf(p: Page): number {
  return (p.page - 1) * p.limit;
}

/** The paged list envelope: `{ <key>: items, total, page, limit, totalPages }`. */
export function pagedOutput<K extends string, T extends z.ZodType>(key: K, item: T) {
  return z.object({
    ...({ [key]: z.array(item).describe('The items of this page') } as { [P in K]: z.ZodArray<T> }),
    total: z.number().int().describe('Items matching across all pages'),
    page: z.number().int().describe('The page returned'),
    limit: z.number().int().describe('The page size applied'),
    totalPages: z.number().int().describe('ceil(total / limit)'),
  });
}

export function paged<K extends string, T>(key: K, items: T[], total: number, p: Page) {
  return {
    [key]: items,
    total,
    page: p.page,
    limit: p.limit,
    totalPages: Math.ceil(total / p.limit),
  } as { [P in K]: T[] } & { total: number; page: number; limit: number; totalPages: number };
}

export const messageOutput = z.object({ message: z.string().describe('What was done') });
