// The document's shared components: the error envelope, rate-limit and idempotency headers, and
// the error responses every operation of a kind points at.
// Written in zod like everything else, so the envelope reaches the document the same way tool
// schemas do.
import { z } from 'zod';
import { ERROR_TABLE, type ErrorCode } from '../../core/errors.ts';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from '../../core/idempotency.ts';
import { jsonSchemasOf } from '../../core/json-schema.ts';
import type { Tool, ToolError } from '../../core/tool.ts';
import type {
  HeaderObject,
  JsonSchema,
  MediaTypeObject,
  ParameterObject,
  RefObject,
  ResponseObject,
} from './types.ts';

const errorDetailSchema = z.object({
  field: z.string().describe('Dotted path of the offending field, or "(root)"'),
  message: z.string().describe('What is wrong with it'),
  code: z.string().describe('Machine-readable reason, e.g. a zod issue code such as too_small'),
});

export const errorEnvelopeSchema = z
  .looseObject({
    error: z.string().describe('Short human-readable error text'),
    code: z
      .enum(Object.keys(ERROR_TABLE))
      .describe('Machine-readable error code; it alone decides the HTTP status'),
    message: z.string().optional().describe('More detail about this occurrence'),
    details: z
      .array(errorDetailSchema.describe('One problem with one field'))
      .optional()
      .describe('Per-field problems (validation errors)'),
  })
  .describe(
    'The error envelope of every failure. Some errors add keys: required_permission (403 forbidden), ' +
      'required_scope (403 scope_missing), feature and current_plan (402), retry_after in seconds (429), ' +
      'request_id (500).',
  );

const ERROR_REF = '#/components/schemas/Error';

export const RATE_LIMIT_HEADERS: Record<string, HeaderObject> = {
  'RateLimit-Limit': {
    description: 'Requests allowed in the window of the most constrained limit this request counted against',
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in that window',
    schema: { type: 'integer' },
  },
  'RateLimit-Reset': {
    description: 'Seconds until that window resets',
    schema: { type: 'integer' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying (429 and 503 only)',
    schema: { type: 'integer' },
  },
  [IDEMPOTENT_REPLAYED_HEADER]: {
    description: `\`true\` when this is the kept answer of an earlier request with the same ${IDEMPOTENCY_KEY_HEADER}, sent again; nothing ran`,
    schema: { type: 'string', enum: ['true'] },
  },
};

/**
 * Every POST takes an Idempotency-Key (core/idempotency.ts), scoped to the organization and the
 * credential, kept 24 hours.
 */
export const IDEMPOTENCY_KEY_PARAMETER: ParameterObject = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    'Makes the request safe to retry: for 24 hours the same key (per organization and credential) with the same method, path and body answers the kept status and body again with `Idempotent-Replayed: true` and runs nothing; with a different request it is a 422, while the first still runs a 409. Requests refused before running (401, 402, 403, 429, 400 validation) and 5xx answers keep nothing.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

/** The failures an Idempotency-Key adds to every POST. */
export const IDEMPOTENCY_ERRORS: readonly ToolError[] = [
  {
    code: 'idempotency_key_in_use',
    when: `a request with the same ${IDEMPOTENCY_KEY_HEADER} is still running`,
  },
  {
    code: 'idempotency_key_reused',
    when: `the ${IDEMPOTENCY_KEY_HEADER} was used in the last 24 hours for a different request (method, path or body)`,
  },
];

function headerRefs(names: readonly string[]): Record<string, RefObject> {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

export const SUCCESS_HEADERS = headerRefs(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
export const POST_SUCCESS_HEADERS = headerRefs([
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  IDEMPOTENT_REPLAYED_HEADER,
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Tool schemas are embedded at many places in one document, where a `#/$defs/...` reference would
 * resolve against the document instead of the schema, so only self-contained schemas are accepted.
 */
function assertSelfContained(value: unknown, label: string): void {
  if (Array.isArray(value)) {
    for (const item of value) assertSelfContained(item, label);
    return;
  }
  if (!isRecord(value)) return;
  if ('$ref' in value || '$defs' in value) {
    throw new Error(`${label}: JSON Schema references are not supported in the OpenAPI document`);
  }
  for (const item of Object.values(value)) assertSelfContained(item, label);
}

export function schemaOf(schema: z.ZodType, io: 'input' | 'output', label: string): JsonSchema {
  // `$schema` is dropped: an OpenAPI 3.1 schema object is 2020-12 by default, as MCP assumes too.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io });
  assertSelfContained(rest, label);
  return rest;
}

export function toolSchemas(tool: Tool): { input: JsonSchema; output: JsonSchema } {
  const { input, output } = jsonSchemasOf(tool);
  assertSelfContained(input, `Tool ${tool.name} input`);
  assertSelfContained(output, `Tool ${tool.name} output`);
  return { input, output };
}

export function propertiesOf(schema: JsonSchema): Record<string, unknown> {
  return isRecord(schema.properties) ? schema.properties : {};
}

export function requiredOf(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [];
}

/** The schema without the named properties (path parameters travel in the URL, not the body). */
export function withoutProperties(schema: JsonSchema, names: readonly string[]): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries(propertiesOf(schema)).filter(([name]) => !names.includes(name)),
  );
  const required = requiredOf(schema).filter((name) => !names.includes(name));
  const { required: _required, ...rest } = schema;
  return { ...rest, properties, ...(required.length > 0 ? { required } : {}) };
}

export function parameter(
  name: string,
  location: 'path' | 'query',
  required: boolean,
  schema: unknown,
): ParameterObject {
  const property = isRecord(schema) ? schema : { type: 'string' };
  const description = typeof property.description === 'string' ? property.description : undefined;
  return { name, in: location, required, ...(description ? { description } : {}), schema: property };
}

export function jsonContent(schema: JsonSchema, example?: unknown): Record<string, MediaTypeObject> {
  return { 'application/json': { schema, ...(example === undefined ? {} : { example }) } };
}

export function errorExample(code: ErrorCode, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { error: ERROR_TABLE[code].error, code, ...extra };
}

export function errorResponse(description: string, example: Record<string, unknown>): ResponseObject {
  return { description, content: jsonContent({ $ref: ERROR_REF }, example) };
}

const VALIDATION_EXAMPLE = errorExample('validation_failed', {
  details: [
    { field: 'name', message: 'Too small: expected string to have >=1 characters', code: 'too_small' },
  ],
});

/** Error responses every operation of a kind shares; operations point at them by reference. */
export const SHARED_RESPONSES = {
  BadRequest: errorResponse(
    'Validation failed (`details` lists each field): schema rules, unsafe input (NUL, lone surrogates, nesting over 32, non-finite numbers, malformed URL encoding) or malformed JSON',
    VALIDATION_EXAMPLE,
  ),
  Unauthorized: errorResponse(
    'No bearer token, or the token is invalid, expired or revoked',
    errorExample('authentication_required'),
  ),
  PayloadTooLarge: errorResponse(
    'The request body is larger than 1 MiB',
    errorExample('payload_too_large', { message: 'Request bodies are limited to 1 MiB' }),
  ),
  UnsupportedMediaType: errorResponse(
    'The body is not sent as application/json',
    errorExample('unsupported_media_type'),
  ),
  TooManyRequests: {
    ...errorResponse(
      'Too many requests: a rate limit was reached; wait `Retry-After` seconds',
      errorExample('rate_limited', { retry_after: 30 }),
    ),
    headers: headerRefs(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
  },
  ServiceUnavailable: {
    ...errorResponse(
      'The database could not serve the request in time (a lock held too long, no free connection); nothing was changed, retry after `Retry-After` seconds',
      errorExample('unavailable', { message: 'The database is busy; try again shortly', retry_after: 2 }),
    ),
    headers: headerRefs(['Retry-After']),
  },
} satisfies Record<string, ResponseObject>;

export function shared(name: keyof typeof SHARED_RESPONSES): RefObject {
  return { $ref: `#/components/responses/${name}` };
}

export function successResponse(status: number, schema: JsonSchema, post: boolean): ResponseObject {
  return {
    description: status === 201 ? 'Created' : 'Success',
    headers: post ? POST_SUCCESS_HEADERS : SUCCESS_HEADERS,
    content: jsonContent(schema),
  };
}
