// One MCP server instance per HTTP request, bound to the authenticated caller and the toolsets the
// request selected. It only translates: tools/list is the registry filtered by the selection and by
// what the caller may use, tools/call runs the same invoke pipeline as REST, and failures keep the
// meaning ERROR_TABLE gives them. Resources, prompts and completion are served from the areas'
// declarations (mcp/resources.ts, mcp/prompts.ts, mcp/completion.ts); a sending tool may ask the
// person to confirm its preview (mcp/elicitation.ts); on the 2025 eras a call sends log messages at
// the level the caller set (mcp/logging.ts). docs/mcp.md.
import {
  type CacheHint,
  type CallToolResult,
  type InputRequiredResult,
  isInputRequiredResult,
  type Tool as McpTool,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { AppError } from '../core/errors.ts';
import { type CallContext, canSee, invokeTool } from '../core/invoke.ts';
import { mcpSchemasOf } from '../core/json-schema.ts';
import { assertSafeInput } from '../core/safe-input.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../core/schemas.ts';
import type { Services } from '../core/services.ts';
import type { Tool } from '../core/tool.ts';
import { CATALOGUE, findTool, TOOLS } from '../tools/index.ts';
import { registerCompletion } from './completion.ts';
import { canAskToConfirm, confirmDecision } from './elicitation.ts';
import { type Era, loggingCapability, registerLogging, ToolCallLog } from './logging.ts';
import { registerPrompts } from './prompts.ts';
import { registerResources } from './resources.ts';
import { shapedResult } from './results.ts';
import {
  describeSelection,
  disabledBy,
  isEnabled,
  TOOLSETS_HEADER,
  type ToolsetSelection,
} from './toolsets.ts';

export const SERVER_INFO = { name: 'crm-server', version: '0.1.0' };

const TOOLS_PER_TOOLSET = new Map<string, number>();
for (const tool of TOOLS) {
  // Fails at startup, not at a caller's request, when a tool names a toolset nobody described.
  if (!CATALOGUE.toolsetNames.some((name) => name === tool.toolset)) {
    throw new Error(`Tool ${tool.name} names an unknown toolset "${tool.toolset}"`);
  }
  TOOLS_PER_TOOLSET.set(tool.toolset, (TOOLS_PER_TOOLSET.get(tool.toolset) ?? 0) + 1);
}

const TOOLSET_LINES = CATALOGUE.toolsetNames
  .map((name) => `- ${name} (${TOOLS_PER_TOOLSET.get(name) ?? 0} tools): ${CATALOGUE.toolsets.get(name)}`)
  .join('\n');

const READ_ONLY_NOTE =
  ' The connection is read-only (its URL ends in /readonly): only tools that change nothing are listed.';

/** The server instructions: how the CRM works for a model, and which toolsets this connection has. */
function buildInstructions(selection: ToolsetSelection): string {
  return [
    "A multi-tenant sales CRM: leads and the records around them, the organization's users and API " +
      "keys. Everything you do happens inside the caller's organization. Call get_me first: it names " +
      'your organization, role, plan features and token scopes. The tool list shows only tools you may ' +
      'use. Records are identified by 24-character hexadecimal `_id`s.',
    `List tools are paged: they take \`page\` (from 1) and \`limit\` (usually default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}) and return ` +
      '`total`, `page`, `limit` and `totalPages`; a note after the JSON says when there is a next page. ' +
      'Prefer `search` and filters over reading every page. A read whose result is over about 20,000 ' +
      'tokens is cut and comes back as an error with advice on narrowing the call; a write that succeeded ' +
      'always reports success, its result shortened when too large (a note says so): never repeat it.',
    'Failures come back as error results whose text is a JSON envelope with `error`, `code` and, for ' +
      'invalid input, `details` naming each field.',
    `Tools come in toolsets. This connection has: ${describeSelection(selection)} (get_me is always ` +
      `listed).${selection.readOnly ? READ_ONLY_NOTE : ''} All toolsets:\n` +
      TOOLSET_LINES,
    `To use another toolset, the connection must enable it: the HTTP header ${TOOLSETS_HEADER} with a ` +
      'comma-separated list (for example `core,admin`) or `all`; for a client that cannot set headers, ' +
      "the same list in the URL (`/mcp/x/core,admin`); or the API key's saved `toolsets` " +
      '(update_api_key). The header wins over the URL, the URL over the key. Calling a tool whose toolset ' +
      'is not enabled returns a `tool_not_enabled` error naming the toolset; ask the user to enable it. ' +
      'Toolsets never grant anything: scopes, role and plan still decide what you may use.',
  ].join('\n\n');
}

/** The selection as a cache key: its toolset names in catalogue order, and whether it is read-only. */
function selectionKey(selection: ToolsetSelection): string {
  return `${describeSelection(selection)}${selection.readOnly ? '|read-only' : ''}`;
}

const instructionsBySelection = new Map<string, string>();

/** The instructions for a selection, built once per selection (there are finitely many). */
function instructionsFor(selection: ToolsetSelection): string {
  const key = selectionKey(selection);
  let instructions = instructionsBySelection.get(key);
  if (instructions === undefined) {
    instructions = buildInstructions(selection);
    instructionsBySelection.set(key, instructions);
  }
  return instructions;
}

const listings = new WeakMap<Tool, McpTool>();

/**
 * The tool as tools/list shows it; built once per tool from the compact JSON Schemas (every byte
 * is paid for in each conversation, docs/mcp.md "Tool list size"). The title is the tool's own
 * `title` only: `annotations.title` is its older place and would repeat it.
 */
function listingOf(tool: Tool): McpTool {
  let listing = listings.get(tool);
  if (!listing) {
    const schemas = mcpSchemasOf(tool);
    listing = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: schemas.input,
      outputSchema: schemas.output,
      annotations: { ...tool.annotations },
    };
    listings.set(tool, listing);
  }
  return listing;
}

/**
 * Everything canSee reads of a caller on the MCP surface: the role, the plan and the features the
 * organization switched off, and which MCP scope the token holds (on /mcp a tool needs mcp:read or
 * mcp:write by its kind, whatever its family); a session holds no scope limit.
 */
function accessKey(call: CallContext): string {
  const { role, plan, disabledFeatures, scopes } = call.auth;
  const mcpScopes =
    scopes === null ? 'session' : ['mcp:read', 'mcp:write'].filter((s) => scopes.includes(s)).join(' ');
  return JSON.stringify([role, plan, [...disabledFeatures].sort(), mcpScopes]);
}

/** Tool lists by role/plan table, then by selection and access key; few distinct keys exist, so the bound is loose. */
const toolLists = new WeakMap<CallContext['access'], Map<string, McpTool[]>>();
const MAX_CACHED_LISTS = 512;

/**
 * The tools/list answer for a caller and a toolset selection, built once per (selection, access)
 * key: every MCP request builds a new server, and the list only depends on those.
 */
export function toolListFor(call: CallContext, selection: ToolsetSelection): McpTool[] {
  if (call.surface !== 'mcp') throw new Error('toolListFor serves the MCP surface only');
  let lists = toolLists.get(call.access);
  if (!lists) {
    lists = new Map();
    toolLists.set(call.access, lists);
  }
  const key = `${selectionKey(selection)}|${accessKey(call)}`;
  let list = lists.get(key);
  if (!list) {
    list = TOOLS.filter((tool) => isEnabled(tool, selection) && canSee(tool, call)).map(listingOf);
    // A bound against an unforeseen variety of keys (each plan and feature mix is one): drop the oldest.
    if (lists.size >= MAX_CACHED_LISTS) {
      const oldest = lists.keys().next();
      if (!oldest.done) lists.delete(oldest.value);
    }
    lists.set(key, list);
  }
  return list;
}

/**
 * Domain errors become `isError` results carrying the REST envelope, so a model can read and act on
 * them; errors that happen outside a tool's meaning are JSON-RPC errors. An unknown failure never
 * shows its cause: the caller gets a request id and the log gets the details.
 */
function failureResult(tool: Tool, err: unknown, call: CallContext, services: Services): CallToolResult {
  if (err instanceof AppError && err.code !== 'internal') {
    const form = err.mcpForm;
    if (form.kind === 'tool_error') {
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(err.body) }] };
    }
    throw new ProtocolError(form.code, err.body.error, err.body);
  }
  // invokeTool has already logged an internal AppError with its cause; anything else is new here.
  if (!(err instanceof AppError)) {
    services.logger.error({ err, tool: tool.name, requestId: call.requestId }, 'MCP tool call failed');
  }
  throw new ProtocolError(ProtocolErrorCode.InternalError, `Internal error (request id ${call.requestId})`, {
    request_id: call.requestId,
  });
}

/** A tool the caller may use but that this connection has not enabled: read-only, or its toolset is off. */
function notEnabled(tool: Tool, selection: ToolsetSelection): AppError {
  const enabled = CATALOGUE.toolsetNames.filter((name) => selection.has(name));
  if (disabledBy(tool, selection) === 'read_only') {
    return new AppError('tool_not_enabled', {
      message:
        `${tool.name} changes data, and this connection is read-only (its URL ends in /readonly). ` +
        'Connect without /readonly to use it.',
      extra: { toolset: tool.toolset, enabled_toolsets: enabled, read_only: true },
    });
  }
  return new AppError('tool_not_enabled', {
    message:
      `${tool.name} belongs to the "${tool.toolset}" toolset, which this connection has not enabled ` +
      `(enabled: ${enabled.join(', ')}). Enable it with the ${TOOLSETS_HEADER} header, for example ` +
      `"${TOOLSETS_HEADER}: ${[...enabled, tool.toolset].join(',')}", or in the API key's toolsets setting.`,
    extra: { toolset: tool.toolset, enabled_toolsets: enabled },
  });
}

/** The tools/list result: the selection's tools the caller may use, as listed. */
export function listedTools(call: CallContext, selection: ToolsetSelection): { tools: McpTool[] } {
  return { tools: toolListFor(call, selection) };
}

/**
 * Cache hints of the 2026-07-28 results (`ttlMs`, `cacheScope`; the 2025 revisions have none). Every
 * list depends on the caller (tools on scopes, role, plan and toolsets; prompts and templates on
 * what they may read; the discovery's instructions name the connection's toolsets), so every one is
 * `private`. The lists change only with a role, plan or key change: five minutes. Records change at
 * any time: resources/list and resources/read are stale at once.
 */
const LIST_TTL_MS = 5 * 60_000;
const CACHE_HINTS = {
  'server/discover': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
  'tools/list': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
  'prompts/list': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
  'resources/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
} as const satisfies Record<string, CacheHint>;

/** What one tools/call needs besides the tool's name and arguments. */
export interface ToolCallSeat {
  call: CallContext;
  services: Services;
  selection: ToolsetSelection;
  /** The log messages of the call, once its tool is known (mcp/logging.ts). */
  openLog: (toolName: string) => ToolCallLog;
  /**
   * The SDK server the call came through, when there is one: it knows whether this request's client
   * can be asked to confirm a sending tool's preview (mcp/elicitation.ts), and projects the result
   * for the request's era. Without it (mcp/direct-call.ts: a 2025-era call, served statelessly) no
   * client capability is known, so nobody is asked; and the 2025 projection changes nothing here,
   * since it only wraps structured content that is not an object, and a tool's output is always an
   * object (a z.object, checked by invokeTool) advertised with an object schema (core/json-schema.ts).
   */
  via?: { server: Server; ctx: ServerContext };
}

/**
 * One tools/call: the tool by name, the toolset check, the invoke pipeline with the input guard,
 * the confirmation where the client can be asked, the result shaped for a model, and its log
 * messages. Domain failures are `isError` results; anything else is thrown as a ProtocolError.
 */
export async function answerToolCall(
  name: string,
  args: Record<string, unknown>,
  seat: ToolCallSeat,
): Promise<CallToolResult | InputRequiredResult> {
  const { call, services, selection, via } = seat;
  const tool = findTool(name);
  if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  const log = seat.openLog(tool.name);

  const respond = async (): Promise<CallToolResult | InputRequiredResult> => {
    // Only a tool the caller could otherwise use says "enable its toolset": for any other, the
    // pipeline's own refusal (scope, permission, plan) is the useful answer.
    if (!isEnabled(tool, selection) && canSee(tool, call)) {
      return failureResult(tool, notEnabled(tool, selection), call, services);
    }
    const run = async (
      input: Record<string, unknown>,
    ): Promise<{ ok: true; output: unknown } | { ok: false; failure: CallToolResult }> => {
      try {
        // The same input guard as REST bodies, before the pipeline: NUL, lone surrogates, depth, 1e309.
        assertSafeInput(input);
        return { ok: true, output: await invokeTool(tool, input, call, services) };
      } catch (err) {
        return { ok: false, failure: failureResult(tool, err, call, services) };
      }
    };
    let ran = await run(args);
    // A sending tool that only previewed, on a client that can ask the person: ask (mcp/elicitation.ts).
    if (ran.ok && tool.sends && args.confirm !== true && via && canAskToConfirm(via.server)) {
      const decision = confirmDecision(ran.output, via.ctx);
      if (decision.kind === 'ask') return decision.result;
      if (decision.kind === 'send') ran = await run({ ...args, confirm: true });
    }
    if (!ran.ok) return ran.failure;
    const shaped = shapedResult(tool, ran.output);
    await log.succeeded(tool, ran.output, shaped.cut);
    return via
      ? via.server.projectCallToolResult(shaped.result, listingOf(tool).outputSchema)
      : shaped.result;
  };

  let result: CallToolResult | InputRequiredResult;
  try {
    result = await respond();
  } catch (err) {
    await log.finished(await log.failed(err));
    throw err;
  }
  await log.finished(isInputRequiredResult(result) ? 'success' : result);
  return result;
}

export function createCrmServer(
  call: CallContext,
  services: Services,
  selection: ToolsetSelection,
  era: Era,
): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
      prompts: { listChanged: false },
      completions: {},
      ...loggingCapability(era),
    },
    instructions: instructionsFor(selection),
    cacheHints: CACHE_HINTS,
  });

  server.setRequestHandler('tools/list', () => listedTools(call, selection));

  server.setRequestHandler('tools/call', (request, ctx) =>
    answerToolCall(request.params.name, request.params.arguments ?? {}, {
      call,
      services,
      selection,
      openLog: (toolName) => ToolCallLog.forRequest(era, toolName, call, services, ctx),
      via: { server, ctx },
    }),
  );

  registerLogging(server, era, call, services);
  registerResources(server, call, services);
  registerPrompts(server, call, services);
  registerCompletion(server, call, services);
  return server;
}
