// One MCP server instance per HTTP request, bound to the authenticated caller. It only translates:
// tools/list is the registry filtered by what the caller may use, tools/call runs the same invoke
// pipeline as REST, and failures keep the meaning ERROR_TABLE gives them.
import {
  type CallToolResult,
  type Tool as McpTool,
  ProtocolError,
  ProtocolErrorCode,
  Server,
} from '@modelcontextprotocol/server';
import { AppError } from '../core/errors.ts';
import { type CallContext, canSee, invokeTool } from '../core/invoke.ts';
import type { Services } from '../core/services.ts';
import type { Tool } from '../core/tool.ts';
import { findTool, TOOLS } from '../tools/index.ts';
import { jsonSchemasOf } from './schemas.ts';

export const SERVER_INFO = { name: 'crm-server', version: '0.1.0' };

export const INSTRUCTIONS =
  "A multi-tenant sales CRM (leads and the records around them, the organization's users and API " +
  "keys). Everything you do happens inside the caller's organization. Call get_me first: it names " +
  'your organization, role, plan features and token scopes, and the tool list already shows only ' +
  'what you may use. Records are identified by 24-character hexadecimal `_id`s. List tools are paged: ' +
  'they take `page` (from 1) and `limit` and return `total` and `totalPages`; ask for the next page ' +
  'while page < totalPages. Failures come back as error results whose text is a JSON envelope with ' +
  '`error`, `code` and, for invalid input, `details` naming each field.';

const listings = new WeakMap<Tool, McpTool>();

/** The tool as tools/list shows it; built once per tool from the precomputed JSON Schemas. */
export function listingOf(tool: Tool): McpTool {
  let listing = listings.get(tool);
  if (!listing) {
    const schemas = jsonSchemasOf(tool);
    listing = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: schemas.input,
      outputSchema: schemas.output,
      annotations: { title: tool.title, ...tool.annotations },
    };
    listings.set(tool, listing);
  }
  return listing;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function successResult(tool: Tool, output: unknown): CallToolResult {
  // Output schemas are object schemas (checked in schemas.ts) and invokeTool parsed the output.
  if (!isRecord(output)) throw new Error(`Tool ${tool.name} returned a non-object output`);
  return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
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

export function createCrmServer(call: CallContext, services: Services): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
  });

  server.setRequestHandler('tools/list', () => ({
    tools: TOOLS.filter((tool) => canSee(tool, call)).map(listingOf),
  }));

  server.setRequestHandler('tools/call', async (request) => {
    const tool = findTool(request.params.name);
    if (!tool) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    }
    let output: unknown;
    try {
      output = await invokeTool(tool, request.params.arguments ?? {}, call, services);
    } catch (err) {
      return failureResult(tool, err, call, services);
    }
    return server.projectCallToolResult(successResult(tool, output), listingOf(tool).outputSchema);
  });

  return server;
}
