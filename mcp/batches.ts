// JSON-RPC batches at /mcp. MCP allowed batch arrays only up to revision 2025-03-26; 2025-06-18
// removed them. A batch is refused with -32600 where the revision in force no longer allows it,
// and where it does, every message in it counts against the per-key MCP limit, so a batch can
// never carry more calls than the same calls sent one by one.
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION } from '@modelcontextprotocol/server';

/** The last revision whose JSON-RPC layer accepted batches (the 2025-06-18 changelog removes them). */
const LAST_BATCHING_REVISION = '2025-03-26';
const REVISION = /^\d{4}-\d{2}-\d{2}$/;

export type BatchVerdict = { ok: true; messages: number } | { ok: false; revision: string };

/** Revisions are dates, so they compare as strings; anything else names no batching revision. */
function allowsBatches(revision: string): boolean {
  return REVISION.test(revision) && revision <= LAST_BATCHING_REVISION;
}

function initializeVersionOf(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== 'initialize' || typeof params !== 'object' || params === null) return undefined;
  const version = (params as { protocolVersion?: unknown }).protocolVersion;
  return typeof version === 'string' ? version : undefined;
}

/**
 * How many messages a parsed body holds, or the revision that forbids its batch. The revision in
 * force is what the MCP-Protocol-Version header names and what an initialize inside the batch asks
 * for; without either, the specification has a server assume 2025-03-26.
 */
export function judgeBatch(body: unknown, protocolVersionHeader: string | undefined): BatchVerdict {
  if (!Array.isArray(body)) return { ok: true, messages: 1 };
  const claimed = [protocolVersionHeader?.trim(), ...body.map(initializeVersionOf)].filter(
    (v): v is string => v !== undefined && v !== '',
  );
  const revisions = claimed.length > 0 ? claimed : [DEFAULT_NEGOTIATED_PROTOCOL_VERSION];
  const forbidding = revisions.find((revision) => !allowsBatches(revision));
  if (forbidding !== undefined) return { ok: false, revision: forbidding };
  return { ok: true, messages: Math.max(1, body.length) };
}

/** The JSON-RPC answer to a batch the revision forbids: -32600 Invalid Request, HTTP 400. */
export function batchRejection(revision: string): Response {
  return Response.json(
    {
      jsonrpc: '2.0',
      error: {
        code: -32600,
        message:
          `Invalid Request: JSON-RPC batches are not allowed in protocol revision ${revision} ` +
          `(only up to ${LAST_BATCHING_REVISION}); send one message per request`,
      },
      id: null,
    },
    { status: 400 },
  );
}
