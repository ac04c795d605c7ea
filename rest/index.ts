// The REST adapter as one sub-app: the route table (METHOD path -> tool) under /api/v1, the
// public auth routes, the operator's admin API, the disk store's signed file links and the OpenAPI
// document with its docs page.
// Translation only: every rule lives in core/ and tools/; the HTTP root (http/app.ts) mounts it.
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  invokeIdempotent,
  parseIdempotencyKey,
} from '../core/idempotency.ts';
import { type CallContext, invokeTool } from '../core/invoke.ts';
import { fileOutputSchema, type Route } from '../core/route.ts';
import type { Services } from '../core/services.ts';
import { checkSettings } from '../core/settings.ts';
import { readJsonObject } from '../http/body.ts';
import { type AppEnv, callerOf } from '../http/env.ts';
import { enforceLimit } from '../http/rate-limit.ts';
import { CATALOGUE, ROUTES } from '../tools/index.ts';
import { mountAdminRoutes } from './admin-routes.ts';
import { mountAuthRoutes } from './auth-routes.ts';
import { mountFileRoutes } from './file-routes.ts';
import { DOCS_PATH, mountOpenApi, OPENAPI_PATH } from './openapi.ts';
import { mountPublicPages } from './public-pages.ts';

/**
 * Query parameters that would carry a credential in a URL. Only the Authorization header is ever
 * read, so such a token is never used: the request is answered as the header alone decides (401
 * without one). The parameters are dropped before the query reaches a tool, so a token is neither
 * stored nor echoed in a validation error.
 */
const TOKEN_QUERY_PARAMS = new Set(['access_token', 'token', 'api_key', 'apikey', 'key', 'bearer']);

function queryWithoutTokens(c: Context): Record<string, string> {
  return Object.fromEntries(Object.entries(c.req.query()).filter(([name]) => !TOKEN_QUERY_PARAMS.has(name)));
}

function restHandler(route: Route, services: Services) {
  return async function handleRoute(c: Context<AppEnv>): Promise<Response> {
    const auth = callerOf(c);
    // Only a POST creates or acts; every other method is idempotent by itself and ignores the header.
    const key =
      route.method === 'POST' ? parseIdempotencyKey(c.req.header(IDEMPOTENCY_KEY_HEADER)) : undefined;
    // Per-user limits of a route (bulk, messaging) stack on the per-IP limit already counted.
    for (const name of route.limits) await enforceLimit(c, services, name, `user:${auth.userId}`);
    const body = route.method === 'GET' ? {} : await readJsonObject(c);
    const input = route.input({ params: c.req.param(), query: queryWithoutTokens(c), body });
    const call: CallContext = {
      auth,
      surface: 'rest',
      requestId: c.get('requestId'),
      access: CATALOGUE.access,
      plans: CATALOGUE.plans,
    };
    const statusOf = (output: unknown): 200 | 201 => route.statusOf?.(output) ?? route.status;
    if (key === undefined) {
      const output = await invokeTool(route.tool, input, call, services);
      if (route.file) return fileResponse(c, output, route.status);
      return c.json(output, statusOf(output));
    }
    // The one place REST runs a keyed request: core/idempotency.ts claims the key, keeps the answer
    // with the tool's changes and answers a repeat with the kept one.
    const answer = await invokeIdempotent(
      route.tool,
      { key, method: route.method, path: c.req.path, input },
      call,
      services,
      (output) => (route.file ? route.status : statusOf(output)),
    );
    if (answer.replayed) c.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    const status = contentfulStatus(answer.status);
    if (route.file && status < 400) return fileResponse(c, JSON.parse(answer.json), route.status);
    c.header('content-type', 'application/json');
    return c.body(answer.json, status);
  };
}

/** A kept status as Hono's type for statuses that carry a body (every status the pipeline keeps). */
function contentfulStatus(status: number): ContentfulStatusCode {
  if (!isContentfulStatus(status)) throw new Error(`kept status ${status} cannot carry a body`);
  return status;
}

function isContentfulStatus(status: number): status is ContentfulStatusCode {
  return Number.isInteger(status) && status >= 200 && status <= 599 && ![204, 205, 304].includes(status);
}

/** A file route's answer: the bytes, their media type, and a download name (ASCII, quoted). */
function fileResponse(c: Context<AppEnv>, output: unknown, status: 200 | 201): Response {
  const file = fileOutputSchema.parse(output);
  if (file.content_base64 === undefined) throw new Error('a file route tool returned no content over REST');
  const bytes = Buffer.from(file.content_base64, 'base64');
  const filename = file.filename.replace(/[^A-Za-z0-9._-]/g, '_');
  c.header('content-type', file.content_type);
  c.header('content-disposition', `attachment; filename="${filename}"`);
  c.header('content-length', String(bytes.length));
  return c.body(new Uint8Array(bytes), status);
}

export interface RestAppOptions {
  /**
   * Authenticates the caller (http/authenticate.ts). It goes on each tool route itself, not on
   * /api/v1/*: the public auth routes take no token, and an unknown path or a wrong method must
   * still answer 404 or 405 rather than 401.
   */
  authenticate: MiddlewareHandler<AppEnv>;
}

export function createRestApp(services: Services, options: RestAppOptions): Hono<AppEnv> {
  // The areas' own variables, checked when the server is built (core/settings.ts).
  checkSettings(services.config, CATALOGUE.settings);
  const rest = new Hono<AppEnv>();
  // The root says where things are, for someone who opens the server's address in a browser.
  rest.get('/', (c) =>
    c.json({
      name: 'CRM API',
      docs: DOCS_PATH,
      openapi: OPENAPI_PATH,
      rest: '/api/v1',
      mcp: '/mcp',
      health: '/healthz',
    }),
  );
  mountOpenApi(rest);
  mountAuthRoutes(rest, services);
  mountAdminRoutes(rest, services, CATALOGUE.plans.features);
  mountFileRoutes(rest, services);
  mountPublicPages(rest, services);
  for (const route of ROUTES) {
    rest.on(route.method, `/api/v1${route.path}`, options.authenticate, restHandler(route, services));
  }
  return rest;
}
