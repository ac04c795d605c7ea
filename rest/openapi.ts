// The OpenAPI 3.1 document and the human docs page. The document is generated from the route table
// and the tools' zod schemas (the same JSON Schemas MCP serves), so it cannot drift from what the
// API validates and returns. The docs page is Swagger UI, served from node_modules: no CDN.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Hono } from 'hono';
import { compress } from 'hono/compress';
import { etag } from 'hono/etag';
import { z } from 'zod';
import { requiredScopes } from '../core/access.ts';
import { SESSION_TTL_SECONDS } from '../core/auth/jwt.ts';
import {
  loginInput,
  loginOutput,
  refreshInput,
  sessionTokensSchema,
  signupInput,
  signupOutput,
} from '../core/auth/sessions.ts';
import { ERROR_TABLE, type ErrorCode } from '../core/errors.ts';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from '../core/idempotency.ts';
import { jsonSchemasOf } from '../core/json-schema.ts';
import type { HttpMethod, Route } from '../core/route.ts';
import type { Tool, ToolError } from '../core/tool.ts';
import type { AppEnv } from '../http/env.ts';
import { TAG_DESCRIPTIONS as AREA_TAG_DESCRIPTIONS, ROUTES } from '../tools/index.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/docs';
const API_PREFIX = '/api/v1';

// ---------------------------------------------------------------------------------------------
// Document types (the subset of OpenAPI 3.1 this generator writes)

export type JsonSchema = Record<string, unknown>;

export interface RefObject {
  $ref: string;
}

export interface MediaTypeObject {
  schema: JsonSchema;
  example?: unknown;
}

export interface HeaderObject {
  description: string;
  schema: JsonSchema;
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject | RefObject>;
  content?: Record<string, MediaTypeObject>;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface RequestBodyObject {
  required: boolean;
  content: Record<string, MediaTypeObject>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters?: ParameterObject[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject | RefObject>;
  /** Only set to `[]` on the public routes; the rest inherit the document's bearer requirement. */
  security?: SecurityRequirement[];
}

export type OperationMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type PathItemObject = Partial<Record<OperationMethod, OperationObject>>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  security: SecurityRequirement[];
  paths: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, ResponseObject>;
    headers: Record<string, HeaderObject>;
    securitySchemes: Record<
      string,
      { type: 'http'; scheme: 'bearer'; bearerFormat?: string; description: string }
    >;
  };
}

const METHOD_KEYS = {
  GET: 'get',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'delete',
} as const satisfies Record<HttpMethod, OperationMethod>;

// ---------------------------------------------------------------------------------------------
// Shared components

// Written in zod like everything else, so the envelope reaches the document the same way tool
// schemas do.
const errorDetailSchema = z.object({
  field: z.string().describe('Dotted path of the offending field, or "(root)"'),
  message: z.string().describe('What is wrong with it'),
  code: z.string().describe('Machine-readable reason, e.g. a zod issue code such as too_small'),
});

const errorEnvelopeSchema = z
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

const RATE_LIMIT_HEADERS: Record<string, HeaderObject> = {
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
const IDEMPOTENCY_KEY_PARAMETER: ParameterObject = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    'Makes the request safe to retry: for 24 hours the same key (per organization and credential) with the same method, path and body answers the kept status and body again with `Idempotent-Replayed: true` and runs nothing; with a different request it is a 422, while the first still runs a 409. Requests refused before running (401, 402, 403, 429, 400 validation) and 5xx answers keep nothing.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

/** The failures an Idempotency-Key adds to every POST. */
const IDEMPOTENCY_ERRORS: readonly ToolError[] = [
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

const SUCCESS_HEADERS = headerRefs(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
const POST_SUCCESS_HEADERS = headerRefs([
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  IDEMPOTENT_REPLAYED_HEADER,
]);

const SECURITY_DESCRIPTION = [
  "Send `Authorization: Bearer <token>`. The token's shape decides how it is checked; three kinds are accepted:",
  '',
  `- **Session JWT** (\`header.payload.signature\`): from \`POST /api/v1/auth/signup\` or \`/auth/login\`, valid ${SESSION_TTL_SECONDS / 60} minutes, renewed with \`POST /api/v1/auth/refresh\`. It carries the user's role permissions and is not scope-limited.`,
  "- **Personal access token** (`pat_` + 64 hex characters): created at `POST /api/v1/settings/api-keys`. Limited by its scopes and by its user's role. Every route except `GET /me` and the trash (which checks each record's own family) names the scope it needs: `read:<family>` / `write:<family>` on leads, contacts, opportunities, invoices, proposals, projects (the defaults) and users, webhooks, settings, custom_objects (never defaults); `mcp:read` / `mcp:write` for MCP.",
  "- **OAuth access token** (64 hex characters): issued to an integration by the operator. Limited by its scopes and its user's role, like a personal access token.",
  '',
  'Tokens in the URL query string (`access_token`, `token`, `api_key`, ...) are never used: without an Authorization header the request is answered 401 `Authentication required`.',
].join('\n');

const DOCUMENT_DESCRIPTION = [
  'The REST API of the CRM. Every operation below is also an MCP tool of the same name (its `operationId`) at `/mcp`; where one tool serves two methods, the second operationId adds the method (`update_contact_put`).',
  '',
  '- Records use `_id` (24 hex characters) and ISO 8601 timestamps.',
  '- Lists are paged: `page` (1-based) and `limit`; responses carry `total`, `page`, `limit` and `totalPages`.',
  '- Every failure answers the `Error` envelope; `code` is machine-readable. Each operation lists the statuses it can answer; a method a path does not offer answers 405 with `Allow`.',
  '- Request bodies are JSON objects of at most 1 MiB.',
  '- Responses carry `RateLimit-*` headers; a refused request gets 429 with `Retry-After`.',
  '- A request that the database could not serve in time (busy rows, no free connection) gets 503 with `Retry-After`; it can be retried as is.',
].join('\n');

/** The auth routes are the REST surface's own; every other tag is described by the area that introduces it. */
const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  auth: 'Sign up, log in and refresh a session. These routes need no token.',
  ...AREA_TAG_DESCRIPTIONS,
};

/** Path segments that only group routes (`/settings/api-keys`); the tag is the segment after them. */
const GROUPING_SEGMENTS: ReadonlySet<string> = new Set(['settings']);

// ---------------------------------------------------------------------------------------------
// Helpers

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

function schemaOf(schema: z.ZodType, io: 'input' | 'output', label: string): JsonSchema {
  // `$schema` is dropped: an OpenAPI 3.1 schema object is 2020-12 by default, as MCP assumes too.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io });
  assertSelfContained(rest, label);
  return rest;
}

function toolSchemas(tool: Tool): { input: JsonSchema; output: JsonSchema } {
  const { input, output } = jsonSchemasOf(tool);
  assertSelfContained(input, `Tool ${tool.name} input`);
  assertSelfContained(output, `Tool ${tool.name} output`);
  return { input, output };
}

/** `/leads/:id` -> `/api/v1/leads/{id}` and the parameter names, in order. */
export function openApiPath(honoPath: string): { path: string; params: string[] } {
  // Optional parameters, regex constraints and wildcards have no OpenAPI path form.
  if (/[*?{}]/.test(honoPath)) {
    throw new Error(`Route path ${honoPath} uses syntax the OpenAPI document cannot express`);
  }
  const params: string[] = [];
  const path = honoPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: `${API_PREFIX}${path}`, params };
}

export function tagOf(honoPath: string): string {
  const segments = honoPath.split('/').filter((s) => s !== '' && !s.startsWith(':'));
  const tag = segments.find((s) => !GROUPING_SEGMENTS.has(s));
  if (!tag) throw new Error(`Route path ${honoPath} has no resource segment to tag it by`);
  return tag;
}

function propertiesOf(schema: JsonSchema): Record<string, unknown> {
  return isRecord(schema.properties) ? schema.properties : {};
}

function requiredOf(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [];
}

/** The schema without the named properties (path parameters travel in the URL, not the body). */
function withoutProperties(schema: JsonSchema, names: readonly string[]): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries(propertiesOf(schema)).filter(([name]) => !names.includes(name)),
  );
  const required = requiredOf(schema).filter((name) => !names.includes(name));
  const { required: _required, ...rest } = schema;
  return { ...rest, properties, ...(required.length > 0 ? { required } : {}) };
}

function parameter(
  name: string,
  location: 'path' | 'query',
  required: boolean,
  schema: unknown,
): ParameterObject {
  const property = isRecord(schema) ? schema : { type: 'string' };
  const description = typeof property.description === 'string' ? property.description : undefined;
  return { name, in: location, required, ...(description ? { description } : {}), schema: property };
}

function jsonContent(schema: JsonSchema, example?: unknown): Record<string, MediaTypeObject> {
  return { 'application/json': { schema, ...(example === undefined ? {} : { example }) } };
}

function errorExample(code: ErrorCode, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { error: ERROR_TABLE[code].error, code, ...extra };
}

function errorResponse(description: string, example: Record<string, unknown>): ResponseObject {
  return { description, content: jsonContent({ $ref: ERROR_REF }, example) };
}

const VALIDATION_EXAMPLE = errorExample('validation_failed', {
  details: [
    { field: 'name', message: 'Too small: expected string to have >=1 characters', code: 'too_small' },
  ],
});

/** Error responses every operation of a kind shares; operations point at them by reference. */
const SHARED_RESPONSES = {
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

function shared(name: keyof typeof SHARED_RESPONSES): RefObject {
  return { $ref: `#/components/responses/${name}` };
}

function successResponse(status: number, schema: JsonSchema, post: boolean): ResponseObject {
  return {
    description: status === 201 ? 'Created' : 'Success',
    headers: post ? POST_SUCCESS_HEADERS : SUCCESS_HEADERS,
    content: jsonContent(schema),
  };
}

/** What the route does with `confirm` (core/confirm.ts), in REST's own terms. */
const CONFIRM_REST_TEXT =
  '**Confirm:** this route sends unless the body says `"confirm": false`; then it answers 200 ' +
  '`{"sent": false, "preview": {...}}` (sender, recipients, subject, amounts) and changes nothing. `confirm` is a ' +
  'boolean: the string "true" is a 400 naming it.';

function accessText(tool: Tool): string {
  const { permission, feature, kind, resource } = tool.access;
  const parts = [permission ? `role permission \`${permission}\`` : 'any signed-in user'];
  const scopes = requiredScopes('rest', kind, resource);
  if (scopes) parts.push(`API keys and OAuth tokens need scope \`${scopes.join('` or `')}\``);
  if (feature) parts.push(`plan feature \`${feature}\``);
  return `**Access:** ${parts.join('; ')}.`;
}

/** The failures a tool's handler declares (core/tool.ts `errors`) and `extra` ones, by HTTP status. */
function declaredErrors(tool: Tool, extra: readonly ToolError[]): Map<number, ToolError[]> {
  const byStatus = new Map<number, ToolError[]>();
  for (const error of [...(tool.errors ?? []), ...extra]) {
    const status = ERROR_TABLE[error.code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), error]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

/** One status's response: the pipeline's own reason (if any) and each declared reason with its code. */
function declaredResponse(generic: string | undefined, errors: readonly ToolError[]): ResponseObject {
  const reasons = errors.map((e) => `\`${e.code}\`: ${e.when}`);
  const description = [generic, ...reasons].filter((r) => r !== undefined).join('; ');
  const first = errors[0];
  const example = first
    ? errorExample(first.code, { message: first.when })
    : errorExample('not_found', { message: 'Record not found' });
  return errorResponse(description, example);
}

// ---------------------------------------------------------------------------------------------
// Operations

/**
 * One route as an operation. It describes the default request mapping of core/route.ts (path params
 * and the query or body merged into the tool input), which every route in the table uses.
 */
function toolOperation(route: Route): { path: string; method: OperationMethod; operation: OperationObject } {
  const { tool } = route;
  const { path, params } = openApiPath(route.path);
  const schemas = toolSchemas(tool);
  const inputProperties = propertiesOf(schemas.input);
  const inputRequired = requiredOf(schemas.input);

  const parameters = params.map((name) => parameter(name, 'path', true, inputProperties[name]));
  let requestBody: RequestBodyObject | undefined;
  if (route.method === 'GET') {
    for (const [name, schema] of Object.entries(inputProperties)) {
      if (params.includes(name)) continue;
      parameters.push(parameter(name, 'query', inputRequired.includes(name), schema));
    }
  } else {
    const body = withoutProperties(schemas.input, params);
    // A body with no fields and no room for extra ones (`{id}` only) is not worth documenting.
    const empty = Object.keys(propertiesOf(body)).length === 0 && body.additionalProperties === false;
    if (!empty) {
      requestBody = { required: requiredOf(body).length > 0, content: jsonContent(body) };
    }
  }

  const post = route.method === 'POST';
  if (post) parameters.push(IDEMPOTENCY_KEY_PARAMETER);
  const declared = declaredErrors(tool, post ? IDEMPOTENCY_ERRORS : []);
  const responses: Record<string, ResponseObject | RefObject> = {
    [String(route.status)]: route.file
      ? {
          description: `The file (${route.file.mediaType}), with Content-Disposition: attachment and its file name`,
          headers: post ? POST_SUCCESS_HEADERS : SUCCESS_HEADERS,
          content: { [route.file.mediaType]: { schema: { type: 'string', format: 'binary' } } },
        }
      : successResponse(route.status, schemas.output, post),
    ...(route.statusOf ? { '200': successResponse(200, schemas.output, post) } : {}),
    '400': declared.has(400)
      ? declaredResponse(SHARED_RESPONSES.BadRequest.description, declared.get(400) ?? [])
      : shared('BadRequest'),
    '401': shared('Unauthorized'),
  };
  if (tool.access.feature) {
    responses['402'] = errorResponse(
      `The organization's plan lacks the \`${tool.access.feature}\` feature, or the organization switched it off`,
      errorExample('plan_upgrade_required', {
        message: `The "${tool.access.feature}" feature is not available to this organization`,
        feature: tool.access.feature,
        current_plan: 'free',
      }),
    );
  } else if (declared.has(402)) {
    responses['402'] = declaredResponse(undefined, declared.get(402) ?? []);
  }
  responses['403'] = errorResponse(
    "The caller's role lacks the permission, the token lacks the scope, or the organization is inactive",
    tool.access.permission
      ? errorExample('forbidden', { required_permission: tool.access.permission })
      : errorExample('organization_inactive'),
  );
  if (params.length > 0 || declared.has(404)) {
    responses['404'] = declaredResponse(
      params.length > 0
        ? 'No such record in the organization (ids of other organizations are not found either)'
        : undefined,
      declared.get(404) ?? [],
    );
  }
  for (const [status, errors] of declared) {
    if (String(status) in responses) continue;
    responses[String(status)] = declaredResponse(undefined, errors);
  }
  if (route.method !== 'GET') {
    responses['413'] = shared('PayloadTooLarge');
    responses['415'] = shared('UnsupportedMediaType');
  }
  responses['429'] = shared('TooManyRequests');
  responses['503'] = shared('ServiceUnavailable');

  const operation: OperationObject = {
    operationId: tool.name,
    summary: tool.title,
    description: `${tool.description}\n\n${tool.sends ? `${CONFIRM_REST_TEXT}\n\n` : ''}${accessText(tool)}`,
    tags: [tagOf(route.path)],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
  return { path, method: METHOD_KEYS[route.method], operation };
}

interface PublicOperation {
  path: string;
  operation: OperationObject;
}

/** The public auth routes (rest/auth-routes.ts); their schemas live in core/auth/sessions.ts. */
function authOperations(): PublicOperation[] {
  const common = (
    operationId: string,
    summary: string,
    description: string,
    input: z.ZodType,
    status: 200 | 201,
    output: z.ZodType,
    errors: Record<string, ResponseObject>,
  ): OperationObject => ({
    operationId,
    summary,
    description,
    tags: ['auth'],
    security: [],
    requestBody: { required: true, content: jsonContent(schemaOf(input, 'input', `${operationId} input`)) },
    responses: {
      [String(status)]: successResponse(status, schemaOf(output, 'output', `${operationId} output`), false),
      '400': shared('BadRequest'),
      ...errors,
      '413': shared('PayloadTooLarge'),
      '415': shared('UnsupportedMediaType'),
      '429': shared('TooManyRequests'),
      '503': shared('ServiceUnavailable'),
    },
  });
  const inactive = errorResponse('The organization is inactive', errorExample('organization_inactive'));
  return [
    {
      path: `${API_PREFIX}/auth/signup`,
      operation: common(
        'sign_up',
        'Sign up',
        'Creates an organization on the default plan with the caller as its owner, and signs the owner in: returns the organization, the user, a session JWT and a refresh token.',
        signupInput,
        201,
        signupOutput,
        {
          '403': errorResponse('Signup is disabled on this server', errorExample('signup_disabled')),
          '409': errorResponse(
            'A user with this email already exists',
            errorExample('conflict', { message: 'A user with this email already exists' }),
          ),
        },
      ),
    },
    {
      path: `${API_PREFIX}/auth/login`,
      operation: common(
        'log_in',
        'Log in',
        'Exchanges an email and password for a session JWT and a refresh token. A wrong password, an unknown email and a deactivated user all get the same 401.',
        loginInput,
        200,
        loginOutput,
        {
          '401': errorResponse('Invalid email or password', errorExample('invalid_credentials')),
          '403': inactive,
        },
      ),
    },
    {
      path: `${API_PREFIX}/auth/refresh`,
      operation: common(
        'refresh_session',
        'Refresh a session',
        'Exchanges a refresh token for a new session JWT and a new refresh token. Refresh tokens are single-use: presenting a used one again revokes every token of that login.',
        refreshInput,
        200,
        sessionTokensSchema,
        {
          '401': errorResponse(
            'Invalid, expired or reused refresh token',
            errorExample('invalid_refresh_token'),
          ),
          '403': inactive,
        },
      ),
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// The document

const packageJson = z.object({ version: z.string() });

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  return packageJson.parse(require('../package.json')).version;
}

/** Builds the OpenAPI 3.1 document of the public auth routes and the given REST route table. */
export function buildOpenApiDocument(routes: readonly Route[]): OpenApiDocument {
  const paths: Record<string, PathItemObject> = {};
  const operationIds = new Set<string>();
  const tags: string[] = ['auth'];

  const add = (path: string, method: OperationMethod, operation: OperationObject): void => {
    const item = paths[path] ?? {};
    if (item[method]) throw new Error(`Two routes for ${method.toUpperCase()} ${path}`);
    if (operationIds.has(operation.operationId)) {
      throw new Error(`Operation id ${operation.operationId} is used by two routes`);
    }
    operationIds.add(operation.operationId);
    item[method] = operation;
    paths[path] = item;
    for (const tag of operation.tags) if (!tags.includes(tag)) tags.push(tag);
  };

  for (const { path, operation } of authOperations()) add(path, 'post', operation);
  for (const route of routes) {
    const { path, method, operation } = toolOperation(route);
    // One tool may serve two methods (PUT and PATCH both merge on the sales records), and
    // operationIds must be unique: the second route carries its method as a suffix.
    if (operationIds.has(operation.operationId)) operation.operationId = `${operation.operationId}_${method}`;
    add(path, method, operation);
  }

  return {
    openapi: '3.1.0',
    info: { title: 'CRM API', version: packageVersion(), description: DOCUMENT_DESCRIPTION },
    servers: [{ url: '/', description: 'This server' }],
    tags: tags.map((name) => {
      // A new resource area must say what it is: a tag without a description fails the build of the document.
      const description = Object.hasOwn(TAG_DESCRIPTIONS, name) ? TAG_DESCRIPTIONS[name] : undefined;
      if (!description)
        throw new Error(
          `Tag ${name} has no description: the area introducing it must declare it in \`tags\``,
        );
      return { name, description };
    }),
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: {
        Error: schemaOf(errorEnvelopeSchema, 'output', 'Error'),
      },
      responses: SHARED_RESPONSES,
      headers: RATE_LIMIT_HEADERS,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: SECURITY_DESCRIPTION },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Serving: the document and the docs page

interface DocsAsset {
  type: string;
  /** The bytes, read from swagger-ui-dist or written here. */
  load: () => Promise<Uint8Array<ArrayBuffer> | string>;
}

function swaggerUiFile(name: string): () => Promise<Uint8Array<ArrayBuffer>> {
  // Resolved through Node's module resolution, so it works wherever npm put the package.
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return () => readFile(join(dir, name));
}

// A file rather than an inline script, so the page works under a CSP without 'unsafe-inline' scripts.
const DOCS_INIT = `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  displayOperationId: true,
  docExpansion: 'list',
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** The only files under /docs/assets: a fixed list, so no request can name another file. */
const DOCS_ASSETS: Record<string, DocsAsset> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', load: swaggerUiFile('swagger-ui.css') },
  'swagger-ui-bundle.js': {
    type: 'text/javascript; charset=utf-8',
    load: swaggerUiFile('swagger-ui-bundle.js'),
  },
  'favicon-32x32.png': { type: 'image/png', load: swaggerUiFile('favicon-32x32.png') },
  'docs-init.js': { type: 'text/javascript; charset=utf-8', load: async () => DOCS_INIT },
};

const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>CRM API reference</title>
    <link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/assets/favicon-32x32.png">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/assets/docs-init.js"></script>
  </body>
</html>
`;

/** Registers GET /api/v1/openapi.json, GET /docs and its assets. All public: no token needed. */
export function mountOpenApi(app: Hono<AppEnv>): void {
  let document: OpenApiDocument | undefined;
  const loaded = new Map<string, Promise<Uint8Array<ArrayBuffer> | string>>();

  // The docs page loads 2.7 MB (Swagger UI's bundle and the document): compressed (gzip, about a
  // fifth) and with an ETag, so a slow link loads it in seconds and a reload costs a 304.
  for (const path of [OPENAPI_PATH, DOCS_PATH, `${DOCS_PATH}/assets/*`]) app.use(path, compress(), etag());

  app.get(OPENAPI_PATH, (c) => {
    // Built on first use and kept: the route table does not change while the process runs.
    document ??= buildOpenApiDocument(ROUTES);
    // Revalidated (ETag) rather than kept: a new version of the server may change it.
    c.header('Cache-Control', 'public, max-age=0, must-revalidate');
    return c.json(document);
  });

  // The app-wide Content-Security-Policy (rest/operations.ts) already allows only this origin.
  app.get(DOCS_PATH, (c) => {
    c.header('Cache-Control', 'public, max-age=0, must-revalidate');
    return c.html(DOCS_HTML);
  });
  app.get(`${DOCS_PATH}/`, (c) => c.redirect(DOCS_PATH, 301));

  app.get(`${DOCS_PATH}/assets/:file`, async (c) => {
    const name = c.req.param('file');
    const asset = Object.hasOwn(DOCS_ASSETS, name) ? DOCS_ASSETS[name] : undefined;
    if (!asset) return c.notFound();
    let body = loaded.get(name);
    if (!body) {
      body = asset.load();
      loaded.set(name, body);
      // A failed read is not cached, so the next request tries again.
      body.catch(() => loaded.delete(name));
    }
    c.header('Content-Type', asset.type);
    c.header('Cache-Control', 'public, max-age=3600');
    return c.body(await body);
  });
}
