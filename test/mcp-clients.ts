// The official MCP clients of both protocol eras behind one small interface, and a real HTTP server
// for the app, so MCP tests talk to /mcp exactly as an assistant does.
import { serve } from '@hono/node-server';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { TestContext } from './helpers.ts';

// The clients' result types differ between SDK generations; the tests read results through these.
export const listResult = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      title: z.string().optional(),
      description: z.string().optional(),
      inputSchema: z.record(z.string(), z.unknown()),
      outputSchema: z.record(z.string(), z.unknown()).optional(),
      annotations: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
});
export const callResult = z.object({
  isError: z.boolean().optional(),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
});
export type CallResult = z.infer<typeof callResult>;

export const envelope = z.looseObject({
  error: z.string(),
  code: z.string(),
  message: z.string().optional(),
  details: z.array(z.object({ field: z.string(), message: z.string(), code: z.string() })).optional(),
});

/** The error envelope carried by the first text item of an error result. */
export function envelopeOf(result: CallResult) {
  const text = result.content.find((c) => c.type === 'text')?.text;
  return envelope.parse(JSON.parse(text ?? 'null'));
}

/** The text items of a result, in order. */
export function textsOf(result: CallResult): string[] {
  return result.content.flatMap((c) => (c.type === 'text' && c.text !== undefined ? [c.text] : []));
}

export interface Connection {
  protocolVersion: string | undefined;
  instructions: string | undefined;
  listTools(): Promise<z.infer<typeof listResult>>;
  callTool(name: string, args: Record<string, unknown>): Promise<CallResult>;
  // Resources, prompts and completion, answered as the client returned them (tests parse them).
  listResources(cursor?: string): Promise<unknown>;
  listResourceTemplates(): Promise<unknown>;
  readResource(uri: string): Promise<unknown>;
  listPrompts(): Promise<unknown>;
  getPrompt(name: string, args: Record<string, string>): Promise<unknown>;
  complete(params: CompleteParams): Promise<unknown>;
  close(): Promise<void>;
}

export interface CompleteParams {
  ref: { type: 'ref/resource'; uri: string } | { type: 'ref/prompt'; name: string };
  argument: { name: string; value: string };
}

export interface Era {
  label: string;
  version: RegExp;
  connect(url: URL, headers: Record<string, string>): Promise<Connection>;
}

const clientInfo = { name: 'crm-mcp-test', version: '1.0.0' };

/** The 2.x client, which speaks either era depending on its negotiation mode. */
function clientEra(label: string, version: RegExp, mode: VersionNegotiationMode): Era {
  return {
    label,
    version,
    async connect(url, headers) {
      const client = new ModernClient(clientInfo, { versionNegotiation: { mode } });
      await client.connect(new ModernTransport(url, { requestInit: { headers } }));
      return {
        protocolVersion: client.getNegotiatedProtocolVersion(),
        instructions: client.getInstructions(),
        listTools: async () => listResult.parse(await client.listTools()),
        callTool: async (name, args) => callResult.parse(await client.callTool({ name, arguments: args })),
        listResources: (cursor) => client.listResources(cursor === undefined ? {} : { cursor }),
        listResourceTemplates: () => client.listResourceTemplates(),
        readResource: (uri) => client.readResource({ uri }),
        listPrompts: () => client.listPrompts(),
        getPrompt: (name, args) => client.getPrompt({ name, arguments: args }),
        complete: (params) => client.complete(params),
        close: () => client.close(),
      };
    },
  };
}

export const ERAS: Era[] = [
  {
    label: '2025 era, @modelcontextprotocol/sdk 1.x client',
    version: /^2025-/,
    async connect(url, headers) {
      const client = new LegacyClient(clientInfo);
      const transport = new LegacyTransport(url, { requestInit: { headers } });
      await client.connect(transport);
      return {
        protocolVersion: transport.protocolVersion,
        instructions: client.getInstructions(),
        listTools: async () => listResult.parse(await client.listTools()),
        callTool: async (name, args) => callResult.parse(await client.callTool({ name, arguments: args })),
        listResources: (cursor) => client.listResources(cursor === undefined ? {} : { cursor }),
        listResourceTemplates: () => client.listResourceTemplates(),
        readResource: (uri) => client.readResource({ uri }),
        listPrompts: () => client.listPrompts(),
        getPrompt: (name, args) => client.getPrompt({ name, arguments: args }),
        complete: (params) => client.complete(params),
        close: () => client.close(),
      };
    },
  },
  clientEra('2025 era, @modelcontextprotocol/client 2.x', /^2025-/, 'legacy'),
  clientEra('2026-07-28 era, @modelcontextprotocol/client 2.x', /^2026-07-28$/, { pin: '2026-07-28' }),
];

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Serves the test app on a local port; returns the /mcp URL and a function that stops the server. */
export async function serveMcp(t: TestContext): Promise<{ url: URL; stop: () => Promise<void> }> {
  const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 });
  // Idle keep-alive sockets outlive the client's (undici keeps them about 4 s against Node's 5 s):
  // on a loaded machine the server could otherwise close one just as the client reuses it, and the
  // request fails with ECONNRESET. The client closes first; stop() closes what is left.
  if ('keepAliveTimeout' in server) server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
  return {
    url: new URL(`http://127.0.0.1:${address.port}/mcp`),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      }),
  };
}

/**
 * A file-scoped fixture serving the file's app for MCP clients, stopped after the file's last test:
 * `test.extend('mcpUrl', { scope: 'file' }, serveMcpForFile)`; its value is the /mcp URL.
 */
export async function serveMcpForFile(
  { t }: { t: TestContext },
  { onCleanup }: { onCleanup: (cleanup: () => Promise<void>) => void },
): Promise<URL> {
  const { url, stop } = await serveMcp(t);
  onCleanup(stop);
  return url;
}

/** A raw JSON-RPC POST, for the HTTP behaviour in front of the protocol. */
export function postMcp(
  url: URL,
  headers: Record<string, string>,
  body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' },
) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const logMessage = z.object({
  level: z.string(),
  logger: z.string().optional(),
  data: z.looseObject({ event: z.string(), tool: z.string() }),
});
export type LogMessage = z.infer<typeof logMessage>;

export interface LoggingClient {
  client: LegacyClient;
  /** Every notifications/message received, in order. */
  messages: LogMessage[];
  close(): Promise<void>;
}

/** The official 2025 client (SDK 1.x), recording the log messages (docs/mcp.md "Logging") it receives. */
export async function connectLoggingClient(
  url: URL,
  headers: Record<string, string>,
): Promise<LoggingClient> {
  const messages: LogMessage[] = [];
  const client = new LegacyClient(clientInfo);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    messages.push(logMessage.parse(notification.params));
  });
  await client.connect(new LegacyTransport(url, { requestInit: { headers } }));
  return { client, messages, close: () => client.close() };
}
