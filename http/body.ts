// Reads a JSON request body once: malformed JSON is a 400, a non-object body a 400, a body that is
// not JSON at all a 415, a body holding what the database cannot store (NUL, lone surrogates, too deep
// nesting, 1e309) a 400 before any handler sees it. The 1 MiB cap is enforced before this runs
// (bodyLimit in app.ts).
import type { Context } from 'hono';
import { AppError } from '../core/errors.ts';
import { assertSafeInput } from '../core/safe-input.ts';

export async function readJsonObject(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/([a-z.+-]*\+)?json\b/i.test(type)) throw new AppError('unsupported_media_type');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AppError('invalid_json', { message: err instanceof Error ? err.message : 'Unparseable JSON' });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError('validation_failed', {
      message: 'The request body must be a JSON object',
      details: [{ field: '(root)', message: 'Expected a JSON object', code: 'invalid_type' }],
    });
  }
  assertSafeInput(value);
  return Object.fromEntries(Object.entries(value));
}
