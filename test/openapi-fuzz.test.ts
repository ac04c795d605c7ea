// Locks in that the OpenAPI document tells the truth: a schema-derived fuzz over every operation never gets a 5xx, only statuses the operation lists, and 2xx/4xx bodies matching the document.
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { describe, expect } from 'vitest';
import type { OpenApiDocument, OperationObject, ParameterObject } from '../rest/openapi.ts';
import { fileTest } from './fixtures/file-test.ts';
import { loadKits } from './fixtures/load-kits.ts';
import { json, type TestContext } from './helpers.ts';
import {
  asParameterText,
  bodyText,
  createSchemaValidator,
  edgeValue,
  type GenerationContext,
  type IdPool,
  invalidObject,
  isRecord,
  type JsonSchema,
  pickId,
  Rng,
  validValue,
} from './openapi-fuzz-inputs.ts';

const SEED = 0x9e3779b9;
/** Requests per operation; with ~90 operations this is a few thousand requests. */
const ROUNDS = 40;

interface Operation {
  path: string;
  method: string;
  op: OperationObject;
}

interface SentRequest {
  method: string;
  url: string;
  token: 'owner' | 'pat';
  body?: string;
  contentType?: string;
  /** The path parameter values, to forget ids a successful DELETE removed. */
  pathValues: string[];
}

/** The file's context, its document, and the two callers the fuzz sends as. */
interface FuzzScope {
  t: TestContext;
  doc: OpenApiDocument;
  ownerToken: string;
  patToken: string;
}

const ids: IdPool = new Map();

const KITS = await loadKits();

/** Pool names for paths whose static part is not the resource, as the areas' kits declare them. */
const POOL_ALIASES = new Map(KITS.flatMap((kit) => Object.entries(kit.fuzz?.pools ?? {})));

const ajv = createSchemaValidator();
const validators = new Map<unknown, ValidateFunction>();

function validatorFor(schema: JsonSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

function operationsOf(d: OpenApiDocument): Operation[] {
  return Object.entries(d.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
}

/** The static part of a path up to a point, the key ids are pooled under: `/webhooks/{id}/deliveries` -> `webhooks/deliveries`. */
function poolKey(segments: readonly string[]): string {
  const key = segments.filter((s) => !s.startsWith('{')).join('/');
  return POOL_ALIASES.get(key) ?? key;
}

function resourceSegments(path: string): string[] {
  return path.replace(/^\/api\/v1\//, '').split('/');
}

/** Remembers the ids of records a successful answer shows, under the operation's resource. */
function collectIds(path: string, body: unknown): void {
  const key = poolKey(resourceSegments(path));
  const add = (value: unknown): void => {
    if (!isRecord(value)) return;
    // Records carry `_id`; API keys carry `id`.
    const id = typeof value._id === 'string' ? value._id : value.id;
    if (typeof id !== 'string') return;
    const set = ids.get(key) ?? new Set<string>();
    // Bounded so the pool keeps favouring recent (still existing) records.
    if (set.size < 60) set.add(id);
    ids.set(key, set);
  };
  if (!isRecord(body)) return;
  for (const value of Object.values(body)) {
    if (Array.isArray(value)) for (const item of value) add(item);
    else add(value);
  }
}

function paramValue(param: ParameterObject, path: string, gen: GenerationContext, valid: boolean): unknown {
  if (!valid) return edgeValue(param.schema, gen);
  if (param.in === 'path' && param.schema.pattern === '^[0-9a-fA-F]{24}$') {
    const segments = resourceSegments(path);
    const at = segments.indexOf(`{${param.name}}`);
    return pickId(gen, poolKey(segments.slice(0, at)));
  }
  return validValue(param.schema, gen, param.name);
}

/**
 * Percent-encodes like encodeURIComponent, except that a lone UTF-16 surrogate (which
 * encodeURIComponent refuses) is sent as the bytes a lenient encoder would produce (%ED%A0%80 for
 * U+D800), so the server's strict URL decoding is fuzzed too.
 */
function encodePathValue(text: string): string {
  return text.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|[^\ud800-\udfff]+|[\ud800-\udbff][\udc00-\udfff]/g,
    (part) => {
      const unit = part.charCodeAt(0);
      if (part.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
        const bytes = [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)];
        return bytes.map((b) => `%${b.toString(16).toUpperCase()}`).join('');
      }
      return encodeURIComponent(part);
    },
  );
}

function buildRequest(entry: Operation, gen: GenerationContext): SentRequest {
  const { rng } = gen;
  const valid = rng.chance(0.6);
  const params = entry.op.parameters ?? [];
  // An invalid request breaks one thing; the rest stays valid.
  const broken = valid ? -1 : rng.int(-1, params.length - 1);

  let url = entry.path;
  const pathValues: string[] = [];
  const query = new URLSearchParams();
  params.forEach((param, index) => {
    // The Idempotency-Key header (test/idempotency.test.ts locks it in) is left out: a fuzzed
    // request is never a retry.
    if (param.in === 'header') return;
    const value = paramValue(param, entry.path, gen, index !== broken);
    if (param.in === 'path') {
      pathValues.push(asParameterText(value));
      url = url.replace(`{${param.name}}`, encodePathValue(asParameterText(value)));
    } else if (param.required || index === broken || rng.chance(0.5)) {
      query.set(param.name, asParameterText(value));
    }
  });
  if (!valid && broken === -1 && entry.method === 'get' && rng.chance(0.5)) {
    query.set(`unknown_${rng.int(0, 99)}`, 'x');
  }
  const search = query.toString();
  const request: SentRequest = {
    method: entry.method.toUpperCase(),
    url: search ? `${url}?${search}` : url,
    token: rng.chance(0.1) ? 'pat' : 'owner',
    pathValues,
  };

  const schema = entry.op.requestBody?.content['application/json']?.schema;
  if (entry.method !== 'get' && schema) {
    const bodyValid = valid || broken !== -1;
    const value = bodyValid ? validValue(schema, gen) : invalidObject(schema, gen);
    request.body = bodyText(value, rng);
    request.contentType = 'application/json';
    if (!bodyValid && rng.chance(0.1)) request.body = rng.pick(['{"unterminated": ', '[1,2', 'not json']);
    if (!bodyValid && rng.chance(0.05)) request.contentType = 'text/plain';
  }
  return request;
}

async function send(fuzz: FuzzScope, request: SentRequest): Promise<Response> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${request.token === 'owner' ? fuzz.ownerToken : fuzz.patToken}`,
  };
  if (request.contentType) headers['content-type'] = request.contentType;
  return fuzz.t.app.request(request.url, { method: request.method, headers, body: request.body });
}

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'enterprise' }).extend(
  'fuzz',
  { scope: 'file' },
  async ({ t, org }): Promise<FuzzScope> => {
    // The narrow key belongs to another user, so the owner's fuzzed key routes cannot revoke it.
    const admin = await t.createUser(org.orgId, 'admin');
    const patToken = (await t.createPat(org.orgId, admin.userId, ['read:leads'])).token;
    const doc = await json<OpenApiDocument>(await t.request('GET', '/api/v1/openapi.json'));
    return { t, doc, ownerToken: org.token, patToken };
  },
);

// Real records of every kind, so valid paths and references also hit existing rows: each area's
// kit seeds its own, in registry order (an area finds the records of those it depends on pooled).
// Seeded in a hook, under its own minute rather than the test's time.
test.beforeAll(async ({ fuzz, org }) => {
  const { t, ownerToken } = fuzz;
  const seed = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await t.request('POST', path, { token: ownerToken, body });
    const out = await json(res);
    expect(res.status, `${path}: ${JSON.stringify(out)}`).toBeLessThan(300);
    collectIds(path, out);
    return out;
  };
  const firstId = (out: Record<string, unknown>): string => {
    const record = Object.values(out).find(isRecord);
    if (!record || typeof record._id !== 'string') throw new Error(`no record in ${JSON.stringify(out)}`);
    return record._id;
  };
  const pooled = (resource: string): string => {
    const [first] = ids.get(resource) ?? [];
    if (first === undefined) throw new Error(`no ${resource} seeded before it is needed`);
    return first;
  };
  for (const kit of KITS) {
    await kit.fuzz?.seed?.({ t, token: ownerToken, seed, collect: collectIds, firstId, pooled });
  }
  // Each kit's tenancy victims are records its `/:id` routes address, of the owner's organization:
  // pooled too, so a record only a hook or a job creates (a call, a message) is reachable by id.
  for (const kit of KITS) {
    for (const [prefix, make] of Object.entries(kit.victims)) {
      const victim = await make({ t, org });
      collectIds(`/api/v1${prefix}`, { record: { _id: victim.id } });
    }
  }
}, 60_000);

describe('schema-derived fuzz over every operation of the OpenAPI document', () => {
  test('never answers 5xx, answers only listed statuses, and bodies match the document', async ({ fuzz }) => {
    const { doc } = fuzz;
    const rng = new Rng(SEED);
    const gen: GenerationContext = { rng, ids };
    const operations = operationsOf(doc);
    // One example per kind of failure (operation, status, code), so a finding reads as one line.
    const failures = new Map<string, string>();
    const fail = (label: string, status: number, body: unknown, text: string): void => {
      const code = isRecord(body) && typeof body.code === 'string' ? body.code : '';
      const key = `${label} -> ${status} ${code}`;
      if (!failures.has(key)) failures.set(key, text);
    };
    const seen = new Map<string, Set<number>>();
    let requests = 0;

    // Round-robin over the operations, so deletions early on do not starve the later ones of records.
    for (let round = 0; round < ROUNDS; round++) {
      for (const entry of operations) {
        const request = buildRequest(entry, gen);
        const res = await send(fuzz, request);
        requests++;
        const text = await res.text();
        const where = `${request.method} ${request.url} [${request.token}] body=${(request.body ?? '').slice(0, 300)}`;
        // A file route answers its bytes (a PDF) with the media type the document lists; the rest is JSON.
        const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
        const isJson = mediaType === 'application/json';
        const body: unknown = text === '' || !isJson ? undefined : JSON.parse(text);
        const label = `${entry.method.toUpperCase()} ${entry.path}`;
        const statuses = seen.get(label) ?? new Set<number>();
        statuses.add(res.status);
        seen.set(label, statuses);

        if (res.status >= 500) {
          fail(label, res.status, body, `${where} -> ${text.slice(0, 300)}`);
          continue;
        }
        const response = entry.op.responses[String(res.status)];
        if (!response) {
          fail(`${label} undocumented`, res.status, body, `${where} -> ${text.slice(0, 300)}`);
          continue;
        }
        if (res.status < 300 && text !== '' && !isJson) {
          const listed = 'content' in response ? Object.keys(response.content ?? {}) : [];
          if (!listed.includes(mediaType))
            fail(`${label} media type outside the document`, res.status, body, `${where} -> ${mediaType}`);
          continue;
        }
        const schema =
          res.status < 300
            ? 'content' in response
              ? response.content?.['application/json']?.schema
              : undefined
            : doc.components.schemas.Error;
        if (!schema) continue;
        const validate = validatorFor(schema);
        if (!validate(body)) {
          fail(
            `${label} body outside the document`,
            res.status,
            body,
            `${where} -> ${ajv.errorsText(validate.errors)} ${text.slice(0, 300)}`,
          );
          continue;
        }
        if (res.status < 300) collectIds(entry.path, body);
        // A deleted record's id would only lead later requests to 404s.
        if (res.status < 300 && entry.method === 'delete') {
          for (const set of ids.values()) for (const value of request.pathValues) set.delete(value);
        }
      }
    }

    console.info(`openapi fuzz: ${requests} requests over ${operations.length} operations (seed ${SEED})`);
    expect(requests).toBeGreaterThanOrEqual(3000);
    expect(Object.fromEntries(failures)).toEqual({});
    // Valid requests do get through: most operations saw a success at least once.
    const succeeded = [...seen.values()].filter((s) => [...s].some((status) => status < 300)).length;
    const neverSucceeded = [...seen].filter(([, statuses]) => ![...statuses].some((status) => status < 300));
    console.info(
      `operations without a success this run: ${neverSucceeded.map(([label]) => label).join(', ')}`,
    );
    expect(succeeded).toBeGreaterThan(operations.length * 0.7);
  }, 120_000);
});
