// A 2025-era `tools/call` answered in plain JSON without the SDK's per-request server and transport.
// Served statelessly, every such call meets a fresh SDK Server and transport that never saw the
// client's initialize: building and tearing them down, validating the message twice and the result
// once with zod, and the close that rejects nothing but builds an error with a stack, cost more CPU
// than the tool's own database work (docs/scaling.md "What one request costs"). For the one shape
// that is the bulk of the traffic (a single call, no `_meta`, from a client that takes JSON, with
// no log level set) this module gives the same answer byte for byte through the same tool dispatch
// (answerToolCall, mcp/server.ts). Everything else, and every request the SDK would refuse, still
// goes to the SDK (mcp/http.ts), so its answers and error bodies stay its own.
// test/mcp-direct-call.test.ts compares the two paths.
import {
  type CallToolResult,
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { CallContext } from '../core/invoke.ts';
import type { Services } from '../core/services.ts';
import { ToolCallLog } from './logging.ts';
import { jsonTextOf } from './results.ts';
import { answerToolCall } from './server.ts';
import type { ToolsetSelection } from './toolsets.ts';

/** A `tools/call` the direct answer serves: its JSON-RPC id, the tool's name and its arguments. */
export interface DirectCall {
  id: string | number;
  name: string;
  arguments: Record<string, unknown>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasOnlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

const MESSAGE_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS: ReadonlySet<string> = new Set(['name', 'arguments']);

/**
 * The 2025-era revisions the SDK's transport accepts in `MCP-Protocol-Version`. The first revision of
 * the new era, 2026-07-28, is served by the SDK only: a request naming it is never answered here.
 */
const LEGACY_VERSIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < '2026-07-28');

/**
 * The call, when the request is one the SDK would serve on its 2025-era path, accept in its
 * transport and hand its server unchanged; else undefined, and the SDK serves it. The caller
 * (mcp/http.ts) has already checked what is not about the message: a POST with a JSON body, a
 * client that takes JSON, and no log level set. The SDK classifies a request 2025-era
 * (isLegacyRequest) when its params carry no `_meta` envelope and its `MCP-Protocol-Version` is not
 * a 2026 revision: both hold for what this accepts. What is checked mirrors the transport
 * (WebStandardStreamableHTTPServerTransport.handlePostRequest): an Accept naming both JSON and SSE
 * (its 406 otherwise), a supported `MCP-Protocol-Version` or none (its 400 otherwise); and the
 * message is only the fields its schemas would pass through untouched (no `_meta`, no task, an id
 * its schema takes, `arguments` an object without a `__proto__` key a copy would turn into a
 * prototype).
 */
export function directToolCall(request: Request, body: unknown): DirectCall | undefined {
  const accept = request.headers.get('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  const version = request.headers.get('mcp-protocol-version');
  if (version !== null && !LEGACY_VERSIONS.includes(version)) return undefined;
  if (!isPlainObject(body) || !hasOnlyKeys(body, MESSAGE_KEYS)) return undefined;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || method !== 'tools/call') return undefined;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  if (!isPlainObject(params) || !hasOnlyKeys(params, PARAMS_KEYS)) return undefined;
  const { name, arguments: args = {} } = params;
  if (typeof name !== 'string' || !isPlainObject(args) || Object.hasOwn(args, '__proto__')) return undefined;
  return { id, name, arguments: args };
}

/** Who calls and through which toolsets. */
export interface DirectCallSeat {
  call: CallContext;
  services: Services;
  selection: ToolsetSelection;
}

/**
 * The result as the SDK writes it: its keys in the order of its result schema (it answers with what
 * the schema parsed: `_meta`, `content`, `structuredContent`, `isError`, then any other key), each
 * value as JSON.stringify writes it. The structured content is usually the output whose JSON
 * shapedResult already wrote as the first text (mcp/results.ts jsonTextOf): that text is reused, the
 * same bytes without serialising the output twice.
 */
function resultJson(result: CallToolResult): string {
  const { _meta, content, structuredContent, isError, ...rest } = result;
  const parts: string[] = [];
  if (_meta !== undefined) parts.push(`"_meta":${JSON.stringify(_meta)}`);
  parts.push(`"content":${JSON.stringify(content)}`);
  if (structuredContent !== undefined) {
    const known = structuredContent !== null ? jsonTextOf(structuredContent) : undefined;
    parts.push(`"structuredContent":${known ?? JSON.stringify(structuredContent)}`);
  }
  if (isError !== undefined) parts.push(`"isError":${JSON.stringify(isError)}`);
  for (const [key, value] of Object.entries(rest)) {
    if (value !== undefined) parts.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
  }
  return `{${parts.join(',')}}`;
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** The JSON-RPC error the SDK's protocol layer writes for a thrown error (its -32002 is -32602 on the 2025 wire). */
function errorAnswer(id: string | number, err: ProtocolError): Response {
  const code = err.code === -32002 ? ProtocolErrorCode.InvalidParams : err.code;
  return Response.json(
    {
      jsonrpc: '2.0',
      id,
      error: { code, message: err.message, ...(err.data !== undefined && { data: err.data }) },
    },
    { status: 200, headers: JSON_HEADERS },
  );
}

/** Answers the call: the JSON-RPC result, or the JSON-RPC error the SDK would write. */
export async function answerDirectly(direct: DirectCall, seat: DirectCallSeat): Promise<Response> {
  const { call, services } = seat;
  let result: Awaited<ReturnType<typeof answerToolCall>>;
  try {
    result = await answerToolCall(direct.name, direct.arguments, {
      ...seat,
      openLog: (toolName) => ToolCallLog.silent(toolName, call, services),
    });
  } catch (err) {
    if (err instanceof ProtocolError) return errorAnswer(direct.id, err);
    // answerToolCall turns every failure of the tool into a ProtocolError; anything else is a bug here.
    services.logger.error({ err, requestId: call.requestId }, 'MCP direct tool call failed');
    return errorAnswer(
      direct.id,
      new ProtocolError(ProtocolErrorCode.InternalError, `Internal error (request id ${call.requestId})`, {
        request_id: call.requestId,
      }),
    );
  }
  // Only a client that declared elicitation is asked to confirm (answerToolCall needs the SDK server
  // to know it); a 2025-era call served statelessly has declared nothing, so this is never reached.
  if (isInputRequiredResult(result)) {
    return errorAnswer(direct.id, new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error'));
  }
  return new Response(`{"result":${resultJson(result)},"jsonrpc":"2.0","id":${JSON.stringify(direct.id)}}`, {
    status: 200,
    headers: JSON_HEADERS,
  });
}
