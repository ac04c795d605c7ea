// The OpenAPI 3.1 document: the auth operations, the operations the areas' public routes declare
// (core/area.ts PublicRoute.operation), the route table's operations, the tags the areas describe and
// the shared components.
import { createRequire } from 'node:module';
import { z } from 'zod';
import { SESSION_TTL_SECONDS } from '../../core/auth/jwt.ts';
import type { Route } from '../../core/route.ts';
import { TAG_DESCRIPTIONS as AREA_TAG_DESCRIPTIONS, PUBLIC_ROUTES } from '../../tools/index.ts';
import { authOperations, publicRouteOperations } from './auth-operations.ts';
import { errorEnvelopeSchema, RATE_LIMIT_HEADERS, SHARED_RESPONSES, schemaOf } from './components.ts';
import { toolOperation } from './paths.ts';
import type { OpenApiDocument, OperationMethod, OperationObject, PathItemObject } from './types.ts';
import { type WebhookEvent, webhookItems } from './webhooks.ts';

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
  auth: 'Sign up, log in, refresh a session and reset a forgotten password. These routes need no token.',
  ...AREA_TAG_DESCRIPTIONS,
};

const packageJson = z.object({ version: z.string() });

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  return packageJson.parse(require('../../package.json')).version;
}

/**
 * Builds the OpenAPI 3.1 document of the public auth routes, the areas' public routes that declare
 * an operation, the given REST route table and the webhook deliveries of the given events.
 */
export function buildOpenApiDocument(
  routes: readonly Route[],
  events: readonly WebhookEvent[],
): OpenApiDocument {
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

  for (const { path, method, operation } of authOperations()) add(path, method, operation);
  // The areas' public API routes that declare an operation (the password reset), beside the auth routes.
  for (const { path, method, operation } of publicRouteOperations(PUBLIC_ROUTES))
    add(path, method, operation);
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
    webhooks: webhookItems(events),
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
