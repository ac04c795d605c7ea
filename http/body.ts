// Reads a request body once into an object, the same way for the REST routes (readJsonObject) and
// the public pages and hooks outside /api/v1 (readRequestObject, rest/public-pages.ts):
// - the bytes must be UTF-8: a body holding bytes that are not (a stray 0xFF, an encoded lone
//   surrogate) is a 400 naming the body, where a lenient decoder would store U+FFFD in their place
//   and so change what the caller sent;
// - malformed JSON is a 400, a non-object body a 400, a body that is neither JSON nor (where a route
//   takes forms) a form a 415;
// - what the database cannot store (NUL, lone surrogates, too deep nesting, 1e309) is a 400 before
//   any handler sees it (core/safe-input.ts), in JSON and form fields alike.
// The 1 MiB cap is enforced before this runs (bodyLimit in app.ts).
import type { Context } from 'hono';
import { AppError } from '../core/errors.ts';
import { assertSafeInput, decodeUrlComponent, SAFE_INPUT_CODES } from '../core/safe-input.ts';

const JSON_TYPE = /^application\/([a-z.+-]*\+)?json\b/i;
const URLENCODED_TYPE = /^application\/x-www-form-urlencoded\b/i;
const MULTIPART_TYPE = /^multipart\/form-data\b/i;

/** The body's bytes as text, refusing bytes that are not UTF-8 (fatal decoding, no U+FFFD). */
function decodeUtf8Body(bytes: ArrayBuffer | Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new AppError('validation_failed', {
      message: 'The request body is not valid UTF-8',
      details: [{ field: '(body)', message: 'must be valid UTF-8 text', code: SAFE_INPUT_CODES.encoding }],
    });
  }
}

function parseJsonObject(text: string): Record<string, unknown> {
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

/** An urlencoded form, each name and value decoded strictly (malformed or non-UTF-8 escapes are a 400). */
function parseUrlencoded(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeUrlComponent((eq === -1 ? pair : pair.slice(0, eq)).replaceAll('+', ' '), '(body)');
    out[name] = decodeUrlComponent((eq === -1 ? '' : pair.slice(eq + 1)).replaceAll('+', ' '), name);
  }
  return out;
}

export interface ReadBodyOptions {
  /** Accept urlencoded and multipart forms besides JSON (their text fields become the object). */
  forms?: boolean;
}

/**
 * The body of a Fetch API request as an object: JSON, or with `forms` an HTML form. An empty body is
 * `{}`. Every value has passed the input guard.
 */
export async function readRequestObject(
  request: Request,
  options: ReadBodyOptions = {},
): Promise<Record<string, unknown>> {
  return objectOfBody(request.headers.get('content-type') ?? '', await request.arrayBuffer(), options);
}

async function objectOfBody(
  type: string,
  buffer: ArrayBuffer,
  options: ReadBodyOptions,
): Promise<Record<string, unknown>> {
  const bytes = new Uint8Array(buffer);
  if (options.forms && MULTIPART_TYPE.test(type)) {
    // Parts may be files (bytes of any kind): only the text fields are taken, each then guarded.
    const form = await new Response(bytes, { headers: { 'content-type': type } }).formData().catch(() => {
      throw new AppError('validation_failed', {
        message: 'The request body is not a valid multipart form',
        details: [{ field: '(body)', message: 'must be a valid multipart form', code: 'invalid_form' }],
      });
    });
    const out: Record<string, unknown> = {};
    form.forEach((value, key) => {
      if (typeof value === 'string') out[key] = value;
    });
    assertSafeInput(out);
    return out;
  }
  const text = decodeUtf8Body(bytes);
  if (text.trim() === '') return {};
  if (JSON_TYPE.test(type)) return parseJsonObject(text);
  if (options.forms && URLENCODED_TYPE.test(type)) {
    const out = parseUrlencoded(text);
    assertSafeInput(out);
    return out;
  }
  throw new AppError('unsupported_media_type');
}

/** The JSON object body of a REST request (an empty body is `{}`). */
export async function readJsonObject(c: Context): Promise<Record<string, unknown>> {
  // Through Hono's body cache, so a middleware that read the body before leaves it readable here.
  return objectOfBody(c.req.header('content-type') ?? '', await c.req.arrayBuffer(), {});
}
