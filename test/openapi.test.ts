// Locks in the OpenAPI 3.1 document (valid, public, complete for the route table) and the /docs page (local assets only).
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents } from '../core/db/schema.ts';
import { ERROR_TABLE } from '../core/errors.ts';
import type { HttpMethod } from '../core/route.ts';
import type {
  OpenApiDocument,
  OperationMethod,
  OperationObject,
  RefObject,
  ResponseObject,
} from '../rest/openapi.ts';
import { CATALOGUE, PUBLIC_ROUTES, ROUTES } from '../tools/index.ts';
import { listLeads } from '../tools/leads/tools.ts';
import { reservedCatalogue } from '../tools/reserved.ts';
import { subscribableEvents } from '../tools/webhooks/store.ts';
import { webhookDeliveries } from '../tools/webhooks/tables.ts';
import { createWebhookTool } from '../tools/webhooks/tools.ts';
import { fileTest } from './fixtures/index.ts';
import { createAt } from './fixtures/kit-helpers.ts';
import { loadKits } from './fixtures/load-kits.ts';
import { json } from './helpers.ts';
import { createSchemaValidator } from './openapi-fuzz-inputs.ts';

const ERROR_REF = '#/components/schemas/Error';
const SUBSCRIBABLE_EVENTS = subscribableEvents(CATALOGUE.eventNames);
const KITS = await loadKits();
const createWebhook = createWebhookTool(CATALOGUE.eventNames);
const AUTH_PATHS = ['/api/v1/auth/signup', '/api/v1/auth/login', '/api/v1/auth/refresh'];
/** The areas' public routes that declare an operation (core/area.ts PublicRoute.operation). */
const PUBLIC_OPERATIONS = PUBLIC_ROUTES.filter((route) => route.operation !== undefined);
const PUBLIC_OPERATION_PATHS = PUBLIC_OPERATIONS.map((route) => route.path);

// The file's context and the document it serves, read once (built on first use).
const test = fileTest().extend('doc', { scope: 'file' }, async ({ t }) => {
  const res = await t.request('GET', '/api/v1/openapi.json');
  expect(res.status).toBe(200);
  return json<OpenApiDocument>(res);
});

/** Written independently of the generator: Hono's `:id` becomes OpenAPI's `{id}` under /api/v1. */
function expectedPath(honoPath: string): string {
  return `/api/v1${honoPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
}

const METHOD_KEYS: Record<HttpMethod, OperationMethod> = {
  GET: 'get',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'delete',
};

function operations(d: OpenApiDocument): { path: string; method: string; op: OperationObject }[] {
  return Object.entries(d.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
}

function operationAt(doc: OpenApiDocument, path: string, method: OperationMethod): OperationObject {
  const op = doc.paths[path]?.[method];
  if (!op) throw new Error(`no ${method.toUpperCase()} ${path} in the document`);
  return op;
}

function isRef(value: ResponseObject | RefObject): value is RefObject {
  return '$ref' in value;
}

/** Follows a `#/components/responses/X` reference, failing on anything it cannot resolve. */
function resolveResponse(
  doc: OpenApiDocument,
  value: ResponseObject | RefObject | undefined,
): ResponseObject | undefined {
  if (value === undefined || !isRef(value)) return value;
  const prefix = '#/components/responses/';
  if (!value.$ref.startsWith(prefix)) throw new Error(`unexpected response reference ${value.$ref}`);
  const target = doc.components.responses[value.$ref.slice(prefix.length)];
  if (!target) throw new Error(`dangling response reference ${value.$ref}`);
  return target;
}

/** Validates the document as it travels: a JSON round trip, as a client would receive it. */
async function validate(document: unknown): Promise<{ valid: boolean; errors: unknown; version: unknown }> {
  const wire: unknown = JSON.parse(JSON.stringify(document));
  if (typeof wire !== 'object' || wire === null || Array.isArray(wire)) throw new Error('not a JSON object');
  const validator = new Validator();
  const result = await validator.validate(Object.fromEntries(Object.entries(wire)));
  return { valid: result.valid, errors: result.errors, version: validator.version };
}

function errorSchemaRef(doc: OpenApiDocument, value: ResponseObject | RefObject | undefined): unknown {
  return resolveResponse(doc, value)?.content?.['application/json']?.schema.$ref;
}

describe('GET /api/v1/openapi.json', () => {
  test('is served without a token as an OpenAPI 3.1.0 document of this package', async ({ t, doc }) => {
    const res = await t.request('GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const pkg: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    const version = typeof pkg === 'object' && pkg !== null && 'version' in pkg ? pkg.version : undefined;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'CRM API', version });
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  test('passes the OpenAPI 3.1 schema validator', async ({ doc }) => {
    const result = await validate(doc);
    if (!result.valid) console.error(JSON.stringify(result.errors, null, 2));
    expect(result.valid).toBe(true);
    expect(result.version).toBe('3.1');
  });

  test('uses a validator that does reject broken documents', async ({ doc }) => {
    const { info: _info, ...withoutInfo } = structuredClone(doc);
    expect((await validate(withoutInfo)).valid).toBe(false);

    // OpenAPI requires path parameters to be marked required.
    const optionalPathParam = structuredClone(doc);
    const id = optionalPathParam.paths['/api/v1/leads/{id}']?.get?.parameters?.[0];
    if (!id) throw new Error('GET /api/v1/leads/{id} has no parameter');
    id.required = false;
    expect((await validate(optionalPathParam)).valid).toBe(false);
  });

  test('has every registered route with its method, operationId, summary and resource tag', ({ doc }) => {
    for (const route of ROUTES) {
      const op = doc.paths[expectedPath(route.path)]?.[METHOD_KEYS[route.method]];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      // The second method of one tool (PUT beside PATCH) carries the method as a suffix.
      expect([route.tool.name, `${route.tool.name}_${METHOD_KEYS[route.method]}`]).toContain(op?.operationId);
      expect(op?.summary).toBe(route.tool.title);
      expect(op?.description).toContain(route.tool.description);
      expect(op?.tags).toHaveLength(1);
      expect(op?.responses[String(route.status)]).toBeDefined();
    }
    // Nothing beyond the route table, the three auth routes and the public routes declaring an operation.
    expect(operations(doc)).toHaveLength(ROUTES.length + AUTH_PATHS.length + PUBLIC_OPERATIONS.length);
    const ids = operations(doc).map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('tags operations by resource area and lists every tag used', ({ doc }) => {
    expect(operationAt(doc, '/api/v1/leads', 'get').tags).toEqual(['leads']);
    expect(operationAt(doc, '/api/v1/leads/{id}/convert-to-client', 'post').tags).toEqual(['leads']);
    expect(operationAt(doc, '/api/v1/settings/api-keys', 'get').tags).toEqual(['api-keys']);
    expect(operationAt(doc, '/api/v1/users/{id}', 'get').tags).toEqual(['users']);
    expect(operationAt(doc, '/api/v1/trash', 'get').tags).toEqual(['trash']);
    expect(operationAt(doc, '/api/v1/me', 'get').tags).toEqual(['me']);
    expect(operationAt(doc, '/api/v1/auth/login', 'post').tags).toEqual(['auth']);
    const declared = doc.tags.map((tag) => tag.name);
    for (const { op } of operations(doc)) for (const tag of op.tags) expect(declared).toContain(tag);
  });

  test('gives every operation 401 (all but signup and the public routes, which take no credential) and 429 with the Error envelope', ({
    doc,
  }) => {
    for (const { path, method, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (path !== '/api/v1/auth/signup' && !PUBLIC_OPERATION_PATHS.includes(path))
        expect(errorSchemaRef(doc, op.responses['401']), where).toBe(ERROR_REF);
      expect(errorSchemaRef(doc, op.responses['429']), where).toBe(ERROR_REF);
      expect(errorSchemaRef(doc, op.responses['400']), where).toBe(ERROR_REF);
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) >= 400)
          expect(errorSchemaRef(doc, response), `${where} ${status}`).toBe(ERROR_REF);
      }
    }
  });

  test('declares the Idempotency-Key header, Idempotent-Replayed and its 409/422 on every POST, and only there', ({
    doc,
  }) => {
    for (const route of ROUTES) {
      const op = operationAt(doc, expectedPath(route.path), METHOD_KEYS[route.method]);
      const where = `${route.method} ${route.path}`;
      const header = (op.parameters ?? []).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect(header !== undefined, where).toBe(route.method === 'POST');
      if (route.method !== 'POST') continue;
      expect(resolveResponse(doc, op.responses['409'])?.description, where).toContain(
        'idempotency_key_in_use',
      );
      expect(resolveResponse(doc, op.responses['422'])?.description, where).toContain(
        'idempotency_key_reused',
      );
      const success = resolveResponse(doc, op.responses[String(route.status)]);
      expect(Object.keys(success?.headers ?? {}), where).toContain('Idempotent-Replayed');
    }
  });

  test('declares 404 for routes with ids, 402 for plan features, 413 for bodies', ({ doc }) => {
    for (const route of ROUTES) {
      const op = operationAt(doc, expectedPath(route.path), METHOD_KEYS[route.method]);
      const where = `${route.method} ${route.path}`;
      const declared = (route.tool.errors ?? []).map((e) => ERROR_TABLE[e.code].status);
      expect('404' in op.responses, where).toBe(route.path.includes(':') || declared.includes(404));
      expect('402' in op.responses, where).toBe(
        route.tool.access.feature !== undefined || declared.includes(402),
      );
      expect('413' in op.responses, where).toBe(route.method !== 'GET');
      expect('403' in op.responses, where).toBe(true);
    }
  });

  test('declares a required path parameter for every {param} and no others', ({ doc }) => {
    for (const { path, method, op } of operations(doc)) {
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
      expect(declared.map((p) => p.name).sort(), `${method} ${path}`).toEqual(inPath.sort());
      for (const p of declared) expect(p.required).toBe(true);
    }
    const id = operationAt(doc, '/api/v1/leads/{id}', 'get').parameters?.find((p) => p.name === 'id');
    expect(id?.schema).toMatchObject({ type: 'string', pattern: '^[0-9a-fA-F]{24}$' });
  });

  test('documents GET inputs as described query parameters and other inputs as a JSON body without path params', ({
    doc,
  }) => {
    const list = operationAt(doc, '/api/v1/leads', 'get');
    const query = (list.parameters ?? []).filter((p) => p.in === 'query');
    expect(query.map((p) => p.name)).toEqual(
      expect.arrayContaining(['page', 'limit', 'sort', 'search', 'status', 'owner_id', 'tag']),
    );
    for (const p of query) {
      expect(p.required).toBe(false);
      expect(p.description, p.name).toBeTruthy();
    }
    expect(list.requestBody).toBeUndefined();

    const create = operationAt(doc, '/api/v1/leads', 'post');
    const createBody = create.requestBody?.content['application/json']?.schema;
    expect(create.requestBody?.required).toBe(true);
    expect(createBody?.required).toEqual(['name']);
    expect(
      resolveResponse(doc, create.responses['201'])?.content?.['application/json']?.schema,
    ).toMatchObject({
      properties: { lead: { type: 'object' } },
    });

    const patch = operationAt(doc, '/api/v1/leads/{id}', 'patch');
    const patchBody = patch.requestBody?.content['application/json']?.schema;
    expect(patchBody?.properties).not.toHaveProperty('id');
    expect(patchBody?.properties).toHaveProperty('name');
    expect(patch.requestBody?.required).toBe(false);
    expect((patch.parameters ?? []).some((p) => p.in === 'query')).toBe(false);

    // A DELETE whose only input is the path id has no body to document.
    expect(operationAt(doc, '/api/v1/leads/{id}', 'delete').requestBody).toBeUndefined();
  });

  test('documents the public auth routes without a security requirement', ({ doc }) => {
    for (const path of AUTH_PATHS) {
      const op = operationAt(doc, path, 'post');
      expect(op.security, path).toEqual([]);
      expect(op.requestBody?.content['application/json']?.schema).toMatchObject({ type: 'object' });
      expect(op.responses['429']).toBeDefined();
    }
    expect(operationAt(doc, '/api/v1/auth/signup', 'post').responses['201']).toBeDefined();
    const login = operationAt(doc, '/api/v1/auth/login', 'post');
    expect(login.requestBody?.content['application/json']?.schema.required).toEqual(['email', 'password']);
    expect(resolveResponse(doc, login.responses['200'])?.content?.['application/json']?.schema).toMatchObject(
      {
        properties: { token: { type: 'string' }, refresh_token: { type: 'string' } },
      },
    );
  });

  test('declares the bearer scheme globally, describing the three token kinds', ({ doc }) => {
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const scheme = doc.components.securitySchemes.bearerAuth;
    expect(scheme).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(scheme?.description).toMatch(/JWT/);
    expect(scheme?.description).toContain('pat_');
    expect(scheme?.description).toMatch(/OAuth/);
    for (const { op } of operations(doc)) {
      if (op.security !== undefined)
        expect([...AUTH_PATHS, ...PUBLIC_OPERATION_PATHS].some((p) => doc.paths[p]?.post === op)).toBe(true);
    }
  });

  test('documents the public routes whose area declares an operation (the password reset) like the auth routes', ({
    doc,
  }) => {
    expect(PUBLIC_OPERATION_PATHS).toEqual(
      expect.arrayContaining(['/api/v1/auth/password-reset', '/api/v1/auth/password-reset/confirm']),
    );
    for (const route of PUBLIC_OPERATIONS) {
      const op = operationAt(doc, route.path, METHOD_KEYS[route.method]);
      expect(op.operationId).toBe(route.operation?.operationId);
      expect(op.security, route.path).toEqual([]);
      expect(op.tags).toEqual([route.operation?.tag]);
      expect(op.responses[String(route.operation?.status)]).toBeDefined();
      expect(op.responses['429']).toBeDefined();
    }
    const request = operationAt(doc, '/api/v1/auth/password-reset', 'post');
    expect(request.requestBody?.content['application/json']?.schema.required).toEqual(['email']);
    expect(
      resolveResponse(doc, request.responses['202'])?.content?.['application/json']?.schema,
    ).toMatchObject({ properties: { message: { type: 'string' } } });
    const confirm = operationAt(doc, '/api/v1/auth/password-reset/confirm', 'post');
    expect(confirm.requestBody?.content['application/json']?.schema.required).toEqual(['token', 'password']);
    expect(resolveResponse(doc, confirm.responses['400'])?.description).toContain('invalid_reset_token');
    // Pages for people declare no operation.
    expect(doc.paths['/reset-password']).toBeUndefined();
  });

  test('defines the Error envelope with details and room for extra keys', ({ doc }) => {
    const error = doc.components.schemas.Error;
    expect(error).toMatchObject({
      type: 'object',
      required: ['error', 'code'],
      properties: {
        error: { type: 'string' },
        code: { type: 'string' },
        message: { type: 'string' },
        details: {
          type: 'array',
          items: { type: 'object', required: ['field', 'message', 'code'] },
        },
      },
    });
    expect(error?.additionalProperties).not.toBe(false);
  });

  test('holds plain 2020-12 schemas: no $schema dialect and no 3.0 nullable anywhere', ({ doc }) => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain('"$schema"');
    expect(text).not.toContain('"nullable"');
    // Nullable fields are written the 3.1 way.
    expect(text).toContain('{"type":"null"}');
  });
});

function bodySchemaOf(doc: OpenApiDocument, path: string, method: OperationMethod): Record<string, unknown> {
  const schema = operationAt(doc, path, method).requestBody?.content['application/json']?.schema;
  if (!schema) throw new Error(`${method.toUpperCase()} ${path} has no JSON body`);
  return schema;
}

function propertyOf(schema: Record<string, unknown>, name: string): Record<string, unknown> {
  const properties = schema.properties;
  const property =
    typeof properties === 'object' && properties !== null
      ? (properties as Record<string, unknown>)[name]
      : undefined;
  if (typeof property !== 'object' || property === null) throw new Error(`no property ${name}`);
  return property as Record<string, unknown>;
}

describe('the document tells the truth', () => {
  test('describes every tag', ({ doc }) => {
    expect(doc.tags.length).toBeGreaterThan(10);
    for (const tag of doc.tags) expect(tag.description?.trim().length ?? 0, tag.name).toBeGreaterThan(10);
  });

  test("lists every failure a tool declares under that failure's status, naming its code", ({ doc }) => {
    let declared = 0;
    for (const route of ROUTES) {
      const op = operationAt(doc, expectedPath(route.path), METHOD_KEYS[route.method]);
      for (const error of route.tool.errors ?? []) {
        declared++;
        const response = resolveResponse(doc, op.responses[String(ERROR_TABLE[error.code].status)]);
        const where = `${route.method} ${route.path} ${error.code}`;
        expect(response, where).toBeDefined();
        expect(response?.description, where).toContain(error.code);
        expect(errorSchemaRef(doc, response), where).toBe(ERROR_REF);
      }
    }
    expect(declared).toBeGreaterThan(20);
  });

  test('states the server rules for webhook URLs and events in JSON Schema, agreeing with the server', ({
    doc,
  }) => {
    const ajv = createSchemaValidator();
    const body = bodySchemaOf(doc, '/api/v1/webhooks', 'post');
    const url = ajv.compile(propertyOf(body, 'url'));
    const samples = [
      'https://example.com/hook',
      'https://example.com:8443/a/b?c=d#e',
      'HTTPS://EXAMPLE.COM/',
      'http://example.com/hook',
      'https://user:secret@example.com/hook',
      'ftp://example.com/',
      'https://',
      'example.com/hook',
      'not a url',
    ];
    for (const sample of samples) {
      const server = createWebhook.input.safeParse({
        name: 'h',
        url: sample,
        events: ['lead.created'],
      }).success;
      expect(url(sample), sample).toBe(server);
    }
    expect(samples.filter((sample) => url(sample))).toHaveLength(3);

    const events = propertyOf(body, 'events');
    expect(events.items).toMatchObject({ type: 'string', enum: [...SUBSCRIBABLE_EVENTS] });
    expect(events.items).not.toMatchObject({ enum: expect.arrayContaining(['webhook.test']) });
    for (const event of SUBSCRIBABLE_EVENTS) {
      expect(createWebhook.input.safeParse({ name: 'h', url: samples[0], events: [event] }).success).toBe(
        true,
      );
    }

    // PUT needs at least one field besides the path id; the document says so with anyOf.
    const update = ajv.compile(bodySchemaOf(doc, '/api/v1/webhooks/{id}', 'put'));
    expect(update({})).toBe(false);
    expect(update({ is_active: false })).toBe(true);
  });

  test('states sort fields as enums and calendar dates as format date', ({ doc }) => {
    const sort = operationAt(doc, '/api/v1/leads', 'get').parameters?.find((p) => p.name === 'sort');
    const values = sort?.schema.enum;
    expect(Array.isArray(values) && values.length).toBeGreaterThan(2);
    for (const value of Array.isArray(values) ? values : []) {
      expect(listLeads.input.safeParse({ sort: value }).success, String(value)).toBe(true);
    }
    expect(listLeads.input.safeParse({ sort: 'password_hash' }).success).toBe(false);
    // Every sort parameter of every list is an enum, not a free string.
    for (const { path, method, op } of operations(doc)) {
      const param = op.parameters?.find((p) => p.name === 'sort');
      if (param) expect(param.schema.enum, `${method} ${path}`).toBeDefined();
    }
    const close = propertyOf(bodySchemaOf(doc, '/api/v1/opportunities', 'post'), 'expected_close_date');
    expect(JSON.stringify(close)).toContain('"format":"date"');
  });

  test('lists the statuses answered for missing references and conflicts (found by the fuzz)', async ({
    t,
    doc,
  }) => {
    const org = await t.createOrg({ plan: 'enterprise' });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await t.request(method, path, {
        token: org.token,
        ...(body === undefined ? {} : { body }),
      });
      return { status: res.status, body: await json(res) };
    };
    const idOf = (out: { body: Record<string, unknown> }): string => {
      const record = Object.values(out.body).find((v) => typeof v === 'object' && v !== null);
      const id = (record as { _id?: unknown } | undefined)?._id;
      if (typeof id !== 'string') throw new Error(JSON.stringify(out.body));
      return id;
    };
    const missing = 'aaaaaaaaaaaaaaaaaaaaaaaa';
    const lead = idOf(await call('POST', '/api/v1/leads', { name: 'Acme' }));
    const gone = idOf(await call('POST', '/api/v1/leads', { name: 'Gone' }));
    const contact = idOf(await call('POST', '/api/v1/contacts', { lead_id: gone, name: 'Pat' }));
    await call('DELETE', `/api/v1/leads/${gone}`);
    const object = idOf(
      await call('POST', '/api/v1/custom-objects', {
        name: 'Projects',
        fields: [{ key: 'title', label: 'Title', type: 'text' }],
      }),
    );
    await call('POST', `/api/v1/custom-objects/${object}/records`, { values: { title: 'One' } });
    await call('POST', '/api/v1/custom-activity-types', { name: 'Demo' });
    await call('POST', '/api/v1/settings/api-keys', { label: 'CI' });

    const cases: { method: string; path: string; doc: string; body?: unknown; status: number }[] = [
      {
        method: 'POST',
        path: '/api/v1/contacts',
        doc: '/api/v1/contacts',
        body: { lead_id: missing, name: 'X' },
        status: 404,
      },
      {
        method: 'POST',
        path: '/api/v1/opportunities',
        doc: '/api/v1/opportunities',
        body: { lead_id: missing },
        status: 404,
      },
      {
        method: 'POST',
        path: '/api/v1/tasks',
        doc: '/api/v1/tasks',
        body: { lead_id: missing, text: 'Call' },
        status: 404,
      },
      {
        method: 'POST',
        path: '/api/v1/activities',
        doc: '/api/v1/activities',
        body: { lead_id: missing, type: 'note', note: 'Hi' },
        status: 404,
      },
      {
        method: 'POST',
        path: '/api/v1/custom-objects',
        doc: '/api/v1/custom-objects',
        body: { name: 'PROJECTS', fields: [] },
        status: 409,
      },
      {
        method: 'DELETE',
        path: `/api/v1/custom-objects/${object}`,
        doc: '/api/v1/custom-objects/{id}',
        status: 409,
      },
      {
        method: 'POST',
        path: '/api/v1/custom-activity-types',
        doc: '/api/v1/custom-activity-types',
        body: { name: 'demo' },
        status: 409,
      },
      {
        method: 'POST',
        path: '/api/v1/settings/api-keys',
        doc: '/api/v1/settings/api-keys',
        body: { label: 'CI' },
        status: 409,
      },
      {
        method: 'POST',
        path: `/api/v1/trash/${contact}/restore`,
        doc: '/api/v1/trash/{id}/restore',
        status: 409,
      },
    ];
    for (const c of cases) {
      const out = await call(c.method, c.path, c.body);
      const where = `${c.method} ${c.path} ${JSON.stringify(out.body)}`;
      expect(out.status, where).toBe(c.status);
      const op = operationAt(doc, c.doc, METHOD_KEYS[c.method as HttpMethod]);
      expect(Object.keys(op.responses), where).toContain(String(c.status));
    }
    expect(lead).toBeTruthy();
  });
});

describe('GET /docs', () => {
  test('is an HTML page whose scripts and styles all come from this server and are served', async ({ t }) => {
    const res = await t.request('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//);
    const refs = [...html.matchAll(/<(script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)].map((m) => ({
      tag: m[1],
      url: m[2] ?? '',
    }));
    expect(refs.filter((r) => r.tag === 'script').length).toBeGreaterThanOrEqual(2);
    expect(refs.filter((r) => r.tag === 'link').length).toBeGreaterThanOrEqual(1);

    const expectedType: Record<string, RegExp> = {
      css: /^text\/css/,
      js: /^text\/javascript/,
      png: /^image\/png/,
    };
    for (const { url } of refs) {
      expect(url, url).toMatch(/^\/docs\/assets\/[A-Za-z0-9._-]+$/);
      const asset = await t.request('GET', url);
      expect(asset.status, url).toBe(200);
      const extension = url.split('.').pop() ?? '';
      expect(asset.headers.get('content-type'), url).toMatch(expectedType[extension] ?? /^$/);
      expect((await asset.arrayBuffer()).byteLength, url).toBeGreaterThan(100);
    }
  });

  test('starts Swagger UI on the local document', async ({ t }) => {
    const init = await (await t.request('GET', '/docs/assets/docs-init.js')).text();
    expect(init).toContain('"/api/v1/openapi.json"');
    expect(init).not.toMatch(/https?:\/\//);
    const bundle = await (await t.request('GET', '/docs/assets/swagger-ui-bundle.js')).text();
    expect(bundle).toContain('SwaggerUIBundle');
  });

  test('serves no file outside its fixed asset list', async ({ t }) => {
    for (const path of [
      '/docs/assets/package.json',
      '/docs/assets/index.html',
      '/docs/assets/..%2Fpackage.json',
      '/docs/assets/%2E%2E%2F%2E%2E%2Fpackage.json',
    ]) {
      const res = await t.request('GET', path);
      expect(res.status, path).toBe(404);
    }
  });
});

describe('the webhooks section', () => {
  /** The request body schema of one event's delivery. */
  function deliverySchema(doc: OpenApiDocument, event: string): Record<string, unknown> {
    const schema = doc.webhooks[event]?.post?.requestBody?.content['application/json']?.schema;
    if (!schema) throw new Error(`no webhook entry for ${event}`);
    return schema;
  }

  test('describes a POST for every event, webhook.test included, and nothing else', ({ doc }) => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...CATALOGUE.eventNames].sort());
    for (const event of CATALOGUE.eventNames) {
      const operation = doc.webhooks[event]?.post;
      expect(operation?.security, event).toEqual([]);
      expect(operation?.responses, event).toHaveProperty('2XX');
      expect(operation?.parameters?.map((p) => p.name)).toEqual([
        'X-CRM-Event',
        'X-CRM-Signature',
        'X-CRM-Delivery-Id',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
    }
  });

  test('gives the envelope workers/deliver.ts sends: event, org_id, timestamp and data', ({ doc }) => {
    const ajv = createSchemaValidator();
    for (const event of CATALOGUE.eventNames) {
      const schema = deliverySchema(doc, event);
      expect(schema.required, event).toEqual(['event', 'org_id', 'timestamp', 'data']);
      // The envelope alone: the shape of a declared payload is the next test's subject.
      const valid = ajv.compile(withAnyData(schema));
      const body = { event, org_id: 'a'.repeat(24), timestamp: new Date().toISOString(), data: { _id: 'x' } };
      expect(valid(body), event).toBe(true);
      // The schema names its own event: a body of another event does not match it.
      expect(valid({ ...body, event: event === 'lead.created' ? 'lead.updated' : 'lead.created' })).toBe(
        false,
      );
      expect(valid({ event, org_id: body.org_id, timestamp: body.timestamp })).toBe(false);
    }
  });

  test("gives a declared event's payload schema as data: the payloads really written validate, a wrong one does not", async ({
    t,
    doc,
  }) => {
    const ajv = createSchemaValidator();
    // Enterprise: every plan feature an event's area may gate (surveys, estimates) is on.
    const org = await t.createOrg({ plan: 'enterprise' });
    const scope = { t, org };
    const send = async (method: HttpMethod, path: string, body?: Record<string, unknown>) => {
      const res = await t.request(method, `/api/v1${path}`, { token: org.token, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
    };
    // Each area's kit writes its own events (test/fixtures/kit.ts `events`), in registry order.
    for (const kit of KITS) await kit.events?.(scope);
    const rows = await t.services.db.system
      .select({ event: outboxEvents.event, data: outboxEvents.data })
      .from(outboxEvents)
      .where(eq(outboxEvents.orgId, org.orgId));
    // webhook.test never passes through the outbox: the test tool writes it to the delivery log.
    const hookId = await createAt(scope, '/api/v1/webhooks', 'webhook', {
      name: 'Receiver',
      url: 'https://receiver.example/hook',
      events: ['lead.created'],
    });
    await send('POST', `/webhooks/test/${hookId}`);
    const tests = await t.services.db.system
      .select({ event: webhookDeliveries.event, data: webhookDeliveries.data })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.webhookId, hookId));
    // Every event an area emits was written at least once (the reserved ones have no area yet),
    // and each payload matches its event's schema.
    const reserved = Object.keys(reservedCatalogue.events);
    const written = [...rows, ...tests];
    expect(new Set(written.map((r) => r.event))).toEqual(
      new Set(CATALOGUE.eventNames.filter((e) => !reserved.includes(e))),
    );
    for (const row of written) {
      const valid = ajv.compile(deliverySchema(doc, row.event));
      const body = {
        event: row.event,
        org_id: org.orgId,
        timestamp: new Date().toISOString(),
        data: row.data,
      };
      expect(valid(body), `${row.event}: ${JSON.stringify(valid.errors)}`).toBe(true);
      // A payload without its record's id (or, for one naming no record of its own, without its
      // first field) does not match.
      const key = '_id' in row.data ? '_id' : firstRequired(deliverySchema(doc, row.event));
      const { [key]: _left, ...without } = row.data;
      expect(valid({ ...body, data: without }), `${row.event} without ${key}`).toBe(false);
    }
  });
});

/** The first field a delivery's `data` requires. */
function firstRequired(schema: Record<string, unknown>): string {
  const data = (schema.properties as Record<string, { required?: unknown }> | undefined)?.data;
  const [first] = Array.isArray(data?.required) ? data.required : [];
  if (typeof first !== 'string') throw new Error('the payload schema requires no field');
  return first;
}

/** A delivery schema whose `data` is any object, as it was before payloads were declared. */
function withAnyData(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = typeof schema.properties === 'object' ? schema.properties : {};
  return { ...schema, properties: { ...properties, data: { type: 'object' } } };
}
