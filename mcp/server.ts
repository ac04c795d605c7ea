// One MCP server instance per HTTP request, bound to the authenticated caller and the toolsets the
// request selected. It only translates: tools/list is the registry filtered by the selection and by
// what the caller may use, tools/call runs the same invoke pipeline as REST, and failures keep the
// meaning ERROR_TABLE gives them.
import {
  type CallToolResult,
  type Tool as McpTool,
  ProtocolError,
  ProtocolErrorCode,
  Server,
} from '@modelcontextprotocol/server';
import { AppError } from '../core/errors.ts';
import { type CallContext, canSee, invokeTool } from '../core/invoke.ts';
import { mcpSchemasOf } from '../core/json-schema.ts';
import { assertSafeInput } from '../core/safe-input.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../core/schemas.ts';
import type { Services } from '../core/services.ts';
import type { Tool } from '../core/tool.ts';
import { CATALOGUE, findTool, TOOLS } from '../tools/index.ts';
import { successResult } from './results.ts';
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
function instructionsFor(selection: ToolsetSelection): string {
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
  return { tools: TOOLS.filter((tool) => isEnabled(tool, selection) && canSee(tool, call)).map(listingOf) };
}

export function createCrmServer(call: CallContext, services: Services, selection: ToolsetSelection): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: instructionsFor(selection),
  });

  server.setRequestHandler('tools/list', () => listedTools(call, selection));

  server.setRequestHandler('tools/call', async (request) => {
    const tool = findTool(request.params.name);
    if (!tool) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    }
    // Only a tool the caller could otherwise use says "enable its toolset": for any other, the
    // pipeline's own refusal (scope, permission, plan) is the useful answer.
    if (!isEnabled(tool, selection) && canSee(tool, call)) {
      return failureResult(tool, notEnabled(tool, selection), call, services);
    }
    let output: unknown;
    try {
      // The same input guard as REST bodies, before the pipeline: NUL, lone surrogates, depth, 1e309.
      assertSafeInput(request.params.arguments ?? {});
      output = await invokeTool(tool, request.params.arguments ?? {}, call, services);
    } catch (err) {
      return failureResult(tool, err, call, services);
    }
    return server.projectCallToolResult(successResult(tool, output), listingOf(tool).outputSchema);
  });

  return server;
}
