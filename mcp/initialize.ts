// An `initialize` with invalid params. The SDK validates it inside its request dispatch and, for a
// handler registered without schemas (the Server's own initialize), throws a plain Error whose
// message is the raw zod issue list, which goes out as -32603 Internal error. The least invasive
// fix that uses only public SDK API is to validate the message here, with the SDK's own schema
// (specTypeSchemas.InitializeRequest), before handing the request to the SDK, and answer the
// JSON-RPC -32602 Invalid params the specification calls for, with a short message.
//
// Only the 2025 eras have an initialize. The 2026-07-28 revision removed the method, and the SDK
// answers it there with 404 and -32601 Method not found; so the check applies only to a request the
// SDK itself routes to its 2025-era serving (isLegacyRequest, the SDK's own era decision from the
// `MCP-Protocol-Version` header and the per-request `_meta` envelope), never to a 2026-07-28 one.
import { isLegacyRequest, specTypeSchemas } from '@modelcontextprotocol/server';

const MAX_ISSUES = 3;

interface Issue {
  message: string;
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined;
}

function describeIssue(issue: Issue): string {
  const path = (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

async function initializeIssues(
  request: Request,
  message: unknown,
): Promise<{ id: string | number; problems: string } | undefined> {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const { method, id } = message as { method?: unknown; id?: unknown };
  if (method !== 'initialize' || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
  // A 2026-07-28 initialize is the SDK's to answer (404, -32601): the method does not exist there.
  if (!(await isLegacyRequest(request, message))) return undefined;
  const result = specTypeSchemas.InitializeRequest['~standard'].validate(message);
  if (result instanceof Promise) return undefined; // The schemas are synchronous; never expected.
  if (!result.issues) return undefined;
  const problems = result.issues.slice(0, MAX_ISSUES).map(describeIssue).join('; ');
  return { id, problems };
}

/**
 * The -32602 answer to an invalid 2025-era initialize, or undefined when the body is anything else
 * (a 2026-07-28 initialize included). `body` is the request's JSON body, already parsed.
 */
export async function invalidInitializeResponse(
  request: Request,
  body: unknown,
): Promise<Response | undefined> {
  const invalid = await initializeIssues(request, body);
  if (!invalid) return undefined;
  return Response.json(
    {
      jsonrpc: '2.0',
      error: { code: -32602, message: `Invalid params for initialize: ${invalid.problems}` },
      id: invalid.id,
    },
    { status: 400 },
  );
}
