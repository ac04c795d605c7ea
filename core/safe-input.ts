// The one guard every value from a caller passes before any handler, zod schema or database sees it:
// REST bodies (http/body.ts), the URL's path and query (http/app.ts), MCP tool arguments
// (mcp/server.ts). It refuses what PostgreSQL or JSON cannot hold faithfully, as a 400 naming the
// field, so no such value can turn into a 500, a stack overflow or a silently changed record:
// - NUL characters, in strings and in object keys (PostgreSQL text and jsonb cannot store them);
// - lone UTF-16 surrogates (jsonb refuses them, text would store U+FFFD instead);
// - containers nested deeper than MAX_JSON_DEPTH (recursive code further on would overflow the stack);
// - non-finite numbers (JSON.parse reads 1e309 as Infinity, which JSON would store as null).
// The walk is iterative, so a value nested 100,000 deep is refused, not a crash.
import { AppError, type ErrorDetail } from './errors.ts';

/** Deepest nesting of objects and arrays a value may have; the root object is level 1. */
export const MAX_JSON_DEPTH = 32;
/** A refusal lists at most this many problems: enough to fix a request, never a huge answer. */
const MAX_DETAILS = 20;

const NUL = '\u0000';
/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const SAFE_INPUT_CODES = {
  nul: 'nul_character',
  surrogate: 'lone_surrogate',
  depth: 'too_deep',
  number: 'non_finite_number',
  encoding: 'malformed_encoding',
} as const;

/** The problem with one string, or null when PostgreSQL can store it as given. */
function textProblem(s: string): ErrorDetail['code'] | null {
  if (s.includes(NUL)) return SAFE_INPUT_CODES.nul;
  if (LONE_SURROGATE.test(s)) return SAFE_INPUT_CODES.surrogate;
  return null;
}

const MESSAGES: Record<string, string> = {
  [SAFE_INPUT_CODES.nul]: 'must not contain NUL characters',
  [SAFE_INPUT_CODES.surrogate]: 'must not contain unpaired UTF-16 surrogates',
  [SAFE_INPUT_CODES.depth]: `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`,
  [SAFE_INPUT_CODES.number]: 'must be a finite number',
};

/** A key shown in a field path with its offending characters escaped, so the answer is clean text. */
function printableKey(key: string): string {
  let out = '';
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    const unsafe = unit < 0x20 || (unit >= 0xd800 && unit <= 0xdfff);
    out += unsafe ? `\\u${unit.toString(16).padStart(4, '0')}` : key[i];
  }
  return out;
}

interface Pending {
  value: unknown;
  path: string;
  depth: number;
}

/**
 * Every problem of a JSON value, each naming its field as a dotted path under `prefix` ("" for a
 * body, "query" for a query string...). Keys are checked like strings.
 */
function findUnsafeInput(value: unknown, prefix = ''): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const report = (path: string, code: string, what = 'value') => {
    details.push({ field: path || '(root)', message: `${what} ${MESSAGES[code]}`, code });
  };
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  const stack: Pending[] = [{ value, path: prefix, depth: 0 }];
  while (stack.length > 0 && details.length < MAX_DETAILS) {
    const { value: v, path, depth } = stack.pop() as Pending;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) report(path, problem);
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) report(path, SAFE_INPUT_CODES.number);
    } else if (typeof v === 'object' && v !== null) {
      if (depth + 1 > MAX_JSON_DEPTH) {
        report(path, SAFE_INPUT_CODES.depth);
        continue;
      }
      const entries: [string, unknown][] = Array.isArray(v)
        ? v.map((item, i) => [String(i), item])
        : Object.entries(v);
      // Pushed in reverse so problems are reported in document order.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i] as [string, unknown];
        const keyProblem = Array.isArray(v) ? null : textProblem(key);
        if (keyProblem) report(join(path, printableKey(key)), keyProblem, 'key');
        stack.push({ value: item, path: join(path, printableKey(key)), depth: depth + 1 });
      }
    }
  }
  return details;
}

/** Throws the specified 400 (validation_failed, details naming each field) when `value` is unsafe. */
export function assertSafeInput(value: unknown, prefix = ''): void {
  const details = findUnsafeInput(value, prefix);
  if (details.length > 0) throw new AppError('validation_failed', { details });
}

/**
 * Decodes one percent-encoded URL component strictly: malformed escapes and escapes that are not
 * UTF-8 (which includes an encoded lone surrogate such as %ED%A0%80) are a 400, where a lenient
 * decoder would keep the raw text or substitute U+FFFD and so change what the caller sent.
 */
export function decodeUrlComponent(raw: string, field: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new AppError('validation_failed', {
      details: [
        {
          field,
          message: 'is not valid percent-encoded UTF-8',
          code: SAFE_INPUT_CODES.encoding,
        },
      ],
    });
  }
}

/**
 * Checks a request URL's path and query string before any route runs: every component decodes
 * strictly and holds no NUL or lone surrogate. Query names and values are both checked ('+' is a
 * space in a query, as form encoding says).
 */
export function assertSafeUrl(url: string): void {
  const parsed = new URL(url);
  const details: ErrorDetail[] = [];
  for (const segment of parsed.pathname.split('/')) {
    const decoded = decodeUrlComponent(segment, '(path)');
    const problem = textProblem(decoded);
    if (problem) details.push({ field: '(path)', message: `value ${MESSAGES[problem]}`, code: problem });
  }
  const search = parsed.search.startsWith('?') ? parsed.search.slice(1) : parsed.search;
  for (const pair of search.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = (eq === -1 ? pair : pair.slice(0, eq)).replaceAll('+', ' ');
    const rawValue = (eq === -1 ? '' : pair.slice(eq + 1)).replaceAll('+', ' ');
    const name = decodeUrlComponent(rawName, '(query)');
    // Named as the body names fields: a query parameter becomes the tool input field of that name.
    const field = printableKey(name) || '(query)';
    const value = decodeUrlComponent(rawValue, field);
    const nameProblem = textProblem(name);
    if (nameProblem) details.push({ field, message: `key ${MESSAGES[nameProblem]}`, code: nameProblem });
    const valueProblem = textProblem(value);
    if (valueProblem) details.push({ field, message: `value ${MESSAGES[valueProblem]}`, code: valueProblem });
  }
  if (details.length > 0) throw new AppError('validation_failed', { details });
}
