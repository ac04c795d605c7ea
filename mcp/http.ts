// The /mcp endpoint: Origin and Host checks, bearer authentication (the middleware http/ hands in,
// http/authenticate.ts), the MCP entry scope and the toolset selection (X-MCP-Toolsets header, the
// URL, or the key's setting), then the official SDK's createMcpHandler serving both protocol eras
// (2025 stateless and 2026-07-28) from a fresh server per request. The same endpoint also answers
// at `/mcp/x/{toolsets}` and with a `/readonly` suffix (MCP_PATHS), through the same handlers.
// There are no sessions. A 401 names the protected resource metadata (http/authenticate.ts) and a
// token without an MCP scope gets a 403 whose challenge names the scope (RFC 6750
// insufficient_scope); the OAuth discovery documents and the authorization server are the oauth
// area's public routes (tools/oauth/).
import {
  type AuthInfo,
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  type McpServerFactory,
  validateHostHeader,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { holdsScope } from '../core/access.ts';
import type { AuthContext } from '../core/auth-context.ts';
import type { Config } from '../core/config.ts';
import { AppError } from '../core/errors.ts';
import type { CallContext } from '../core/invoke.ts';
import type { Logger } from '../core/logger.ts';
import type { Services } from '../core/services.ts';
import { type AppEnv, callerOf } from '../http/env.ts';
import { errorResponse } from '../http/errors.ts';
import { enforceLimit } from '../http/rate-limit.ts';
import { CATALOGUE } from '../tools/index.ts';
import { batchRejection, judgeBatch } from './batches.ts';
import { answerDirectly, directToolCall } from './direct-call.ts';
import { invalidInitializeResponse } from './initialize.ts';
import { createCrmServer } from './server.ts';
import { selectToolsets, TOOLSETS_HEADER, type ToolsetSelection, type UrlSelection } from './toolsets.ts';

export const MCP_PATH = '/mcp';
const READ_ONLY_SUFFIX = '/readonly';
/**
 * Every URL of the endpoint: toolsets in the path for clients that cannot set headers, and a
 * `/readonly` suffix on any of them (docs/mcp.md "Toolsets"). One handler chain serves them all.
 */
const MCP_PATHS = [
  MCP_PATH,
  `${MCP_PATH}${READ_ONLY_SUFFIX}`,
  `${MCP_PATH}/x/:toolsets`,
  `${MCP_PATH}/x/:toolsets${READ_ONLY_SUFFIX}`,
];

/** What the request's URL selects (Hono has percent-decoded the `{toolsets}` segment). */
function urlSelectionOf(c: Context<AppEnv>): UrlSelection {
  return { toolsets: c.req.param('toolsets'), readOnly: c.req.path.endsWith(READ_ONLY_SUFFIX) };
}

/** Either scope opens the endpoint; which tools a token then sees is decided per tool. */
const MCP_ENTRY_SCOPES = ['mcp:read', 'mcp:write'];

const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];
const LOOPBACK_LISTEN = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

/**
 * The Host names /mcp answers to, or undefined when any is fine. A server on loopback answers only
 * to its own names (plus MCP_ALLOWED_HOSTS): a page whose DNS name an attacker re-points at
 * 127.0.0.1 (DNS rebinding) sends its own name as Host and is refused.
 */
function allowedMcpHostnames(config: Config): string[] | undefined {
  if (LOOPBACK_LISTEN.test(config.host)) return [...LOOPBACK_HOSTNAMES, ...config.mcpAllowedHosts];
  return config.mcpAllowedHosts.length > 0 ? config.mcpAllowedHosts : undefined;
}

/**
 * The browser origins /mcp accepts. MCP_ALLOWED_ORIGINS when set; else the server's own loopback
 * origins (http://localhost:PORT, http://127.0.0.1:PORT, http://[::1]:PORT): a page the server itself
 * serves on this machine, such as a local inspector, is not another site. docs/mcp.md "Origins".
 */
function allowedMcpOrigins(config: Config): string[] {
  if (config.mcpAllowedOrigins.length > 0) return config.mcpAllowedOrigins;
  // URL.origin drops a default port, as a browser's Origin header does (http://localhost for port 80).
  return LOOPBACK_HOSTNAMES.map((hostname) => new URL(`http://${hostname}:${config.port}`).origin);
}

/**
 * Middleware refusing, before the token is looked at, a browser Origin that is not allowed (a
 * page on another site must not drive the endpoint with a user's token) and a Host /mcp does not
 * answer to.
 */
function guardOriginAndHost(config: Config, logger: Logger): MiddlewareHandler<AppEnv> {
  const allowedHostnames = allowedMcpHostnames(config);
  const allowedOrigins = allowedMcpOrigins(config);
  return async function guardOriginAndHostHandler(c, next) {
    const origin = c.req.header('origin');
    if (origin !== undefined && !allowedOrigins.includes(origin)) {
      return c.json({ error: 'Forbidden', code: 'forbidden', message: 'Origin not allowed' }, 403);
    }
    if (allowedHostnames) {
      const host = c.req.header('host') ?? new URL(c.req.url).host;
      const verdict = validateHostHeader(host, allowedHostnames);
      if (!verdict.ok) {
        return errorResponse(c, new AppError('forbidden', { message: 'Host not allowed' }), logger);
      }
    }
    return next();
  };
}

/** A body whose bytes are not UTF-8: refused before the SDK would decode it leniently (U+FFFD). */
const NOT_UTF8 = Symbol('not UTF-8');

/** A POST's JSON body, read once, and the request to hand the SDK with it. */
interface PeekedBody {
  /** The parsed body; undefined when there is none to parse (not a JSON POST, empty, unparseable). */
  parsed: unknown;
  /** The request for the SDK: the original, or a copy with the same bytes when the SDK must read them. */
  request: Request;
}

/**
 * The JSON body of a POST, read once, straight from the connection (@hono/node-server's fast path,
 * where a clone would tee a stream). The SDK is handed the parsed body and never reads it again.
 * When there is nothing it can be handed (an empty or unparseable body), it gets a request carrying
 * the same bytes, so its own answer (-32700...) is unchanged. Bytes that are not UTF-8 are NOT_UTF8:
 * a lenient decoder would put U+FFFD in their place and a tool would store what the caller never
 * sent (REST refuses them too, http/body.ts).
 */
async function peekJsonBody(request: Request): Promise<PeekedBody | typeof NOT_UTF8> {
  if (request.method !== 'POST' || !isJsonContentType(request.headers.get('content-type'))) {
    return { parsed: undefined, request };
  }
  const bytes = await request.arrayBuffer();
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return NOT_UTF8;
  }
  if (text.length > 0) {
    try {
      return { parsed: JSON.parse(text), request };
    } catch {
      // The SDK answers unparseable bodies with its own -32700, from the bytes below.
    }
  }
  return {
    parsed: undefined,
    request: new Request(request.url, { method: 'POST', headers: request.headers, body: bytes }),
  };
}

/** Whether an Accept header takes a plain JSON answer (application/json, or any type). */
function acceptsJson(accept: string | null): boolean {
  if (accept === null) return false;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]?.trim().toLowerCase();
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  });
}

/** One JSON-RPC request (not a batch, not a notification or response): what a plain JSON answer can carry. */
function isSingleRequest(body: unknown): boolean {
  return (
    typeof body === 'object' && body !== null && !Array.isArray(body) && 'method' in body && 'id' in body
  );
}

/**
 * Serves one 2025-era request statelessly, as the SDK's legacy fallback does, but on a transport
 * that answers with one JSON body instead of an SSE stream (`enableJsonResponse`): one write of the
 * answer where a stream takes its headers, an event and an end, and no stream to watch for its
 * teardown. Only for requests that send nothing before their result (mountMcp decides): in JSON
 * mode the transport drops notifications.
 */
async function serveLegacyAsJson(
  factory: McpServerFactory,
  request: Request,
  authInfo: AuthInfo,
  parsedBody: unknown,
): Promise<Response> {
  const server = await factory({ era: 'legacy', authInfo, requestInfo: request });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { authInfo, parsedBody });
  } finally {
    void transport.close().catch(() => {});
    void server.close().catch(() => {});
  }
}

/** The SDK hands the factory the AuthInfo object given to fetch(); this maps it back to the caller. */
function authInfoFor(auth: AuthContext): AuthInfo {
  return {
    token: auth.credentialId ?? `session:${auth.userId}`,
    clientId: auth.userId,
    scopes: auth.scopes ? [...auth.scopes] : [],
  };
}

export interface McpAppOptions {
  /**
   * Authenticates the caller (http/authenticate.ts), with the per-IP failure budget and the 401
   * challenge. It runs after the Origin and Host checks: a refused page or host learns nothing
   * about its token, and spends no budget.
   */
  authenticate: MiddlewareHandler<AppEnv>;
}

/** The MCP surface as a sub-app of the HTTP root: `/mcp` and its toolset and read-only paths (MCP_PATHS). */
export function createMcpApp(services: Services, options: McpAppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  mountMcp(app, services, options);
  return app;
}

function mountMcp(app: Hono<AppEnv>, services: Services, options: McpAppOptions): void {
  const { config, logger } = services;
  const callers = new WeakMap<AuthInfo, { call: CallContext; selection: ToolsetSelection }>();

  const factory: McpServerFactory = ({ authInfo, era }) => {
    const caller = authInfo ? callers.get(authInfo) : undefined;
    if (!caller) throw new Error('An MCP request reached the SDK without an authenticated caller');
    // The SDK's own era decision (isLegacyRequest): logging exists on the 2025 eras only (mcp/logging.ts).
    return createCrmServer(caller.call, services, caller.selection, era);
  };
  const handler = createMcpHandler(factory, {
    onerror: (err) => logger.warn({ err }, 'MCP request rejected or failed in the transport'),
  });

  /**
   * A 2025-era request gets one plain JSON body when its client takes JSON and nothing can be sent
   * before its result: one request, not a batch, and no MCP log level set for the credential (log
   * messages travel in the stream, mcp/logging.ts); the 2025 revisions have no elicitation here
   * (mcp/elicitation.ts). The 2026-07-28 leg already answers JSON unless a message precedes the result.
   */
  const logLevelOf = (auth: AuthContext) =>
    services.logLevels.get(auth.credentialId ?? `user:${auth.userId}`);
  const answersInJson = async (request: Request, parsedBody: unknown, auth: AuthContext): Promise<boolean> =>
    request.method === 'POST' &&
    isSingleRequest(parsedBody) &&
    acceptsJson(request.headers.get('accept')) &&
    (await isLegacyRequest(request, parsedBody)) &&
    (await logLevelOf(auth)) === null;

  const guard = guardOriginAndHost(config, logger);
  const serveMcp = async (c: Context<AppEnv>) => {
    const auth = callerOf(c);
    const peeked = await peekJsonBody(c.req.raw);
    if (peeked === NOT_UTF8) {
      return c.json(
        {
          jsonrpc: '2.0',
          error: { code: -32700, message: 'Parse error: the request body is not valid UTF-8' },
          id: null,
        },
        400,
      );
    }
    const { parsed: parsedBody, request } = peeked;
    const batch = judgeBatch(parsedBody, c.req.header('mcp-protocol-version'));
    if (!batch.ok) return batchRejection(batch.revision);

    // 120 messages per minute per API key (per user for sessions), each message of a batch counted;
    // MCP calls never count toward the REST 300.
    try {
      await enforceLimit(c, services, 'mcp', auth.credentialId ?? `user:${auth.userId}`, batch.messages);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'rate_limited') throw err;
      return c.json({ jsonrpc: '2.0', error: { code: -32000, message: err.body.error }, id: null }, 429);
    }

    if (auth.scopes !== null && !holdsScope(auth.scopes, MCP_ENTRY_SCOPES)) {
      // RFC 6750 section 3.1: the scope to ask for, so an OAuth client can step up.
      c.header(
        'WWW-Authenticate',
        `Bearer error="insufficient_scope", scope="mcp:read", resource_metadata="${config.publicBaseUrl}/.well-known/oauth-protected-resource/mcp"`,
      );
      return errorResponse(
        c,
        new AppError('scope_missing', {
          error: 'Token lacks required scope: mcp:read',
          extra: { required_scope: 'mcp:read' },
        }),
        logger,
      );
    }

    const invalidInitialize = await invalidInitializeResponse(request, parsedBody);
    if (invalidInitialize) return invalidInitialize;

    // A misspelt toolset is a configuration error worth a clear 400, not a silently shorter tool list.
    let selection: ToolsetSelection;
    try {
      selection = selectToolsets(auth, c.req.header(TOOLSETS_HEADER), urlSelectionOf(c));
    } catch (err) {
      return errorResponse(c, err, logger);
    }

    const call: CallContext = {
      auth,
      surface: 'mcp',
      requestId: c.get('requestId'),
      access: CATALOGUE.access,
      plans: CATALOGUE.plans,
    };
    // The common call answered by the server itself (mcp/direct-call.ts), under answersInJson's
    // conditions: directToolCall's shape (no `_meta`, a 2025-era version or none) is one the SDK
    // classifies 2025-era, so its classification is not asked for.
    if (config.mcpDirectCalls && acceptsJson(request.headers.get('accept'))) {
      const direct = directToolCall(request, parsedBody);
      if (direct && (await logLevelOf(auth)) === null)
        return answerDirectly(direct, { call, services, selection });
    }
    if (await answersInJson(request, parsedBody, auth)) {
      const authInfo = authInfoFor(auth);
      callers.set(authInfo, { call, selection });
      return serveLegacyAsJson(factory, request, authInfo, parsedBody);
    }
    const authInfo = authInfoFor(auth);
    callers.set(authInfo, { call, selection });
    return handler.fetch(request, { authInfo, ...(parsedBody !== undefined && { parsedBody }) });
  };
  for (const path of MCP_PATHS) app.all(path, guard, options.authenticate, serveMcp);
}
