// An `initialize` with invalid params. The SDK validates it inside its request dispatch and, for a
// handler registered without schemas (the Server's own initialize), throws a plain Error whose
// message is the raw zod issue list, which goes out as -32603 Internal error. The least invasive
// fix that uses only public SDK API is to validate the message here, with the SDK's own schema
// (specTypeSchemas.InitializeRequest), before handing the request to the SDK, and answer the
// JSON-RPC -32602 Invalid params the specification calls for, with a short message.
import { specTypeSchemas } from '@modelcontextprotocol/server';

const MAX_ISSUES = 3;

interface Issue {
  message: string;
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined;
}

function describeIssue(issue: Issue): string {
  const path = (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

function initializeIssues(message: unknown): { id: string | number; problems: string } | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const { method, id } = message as { method?: unknown; id?: unknown };
  if (method !== 'initialize' || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
  const result = specTypeSchemas.InitializeRequest['~standard'].validate(message);
  if (result instanceof Promise) return undefined; // The schemas are synchronous; never expected.
  if (!result.issues) return undefined;
  const problems = result.issues.slice(0, MAX_ISSUES).map(describeIssue).join('; ');
  return { id, problems };
}

/** The -32602 answer to an invalid initialize, or undefined when the body is anything else. */
export function invalidInitializeResponse(body: unknown): Response | undefined {
  const invalid = initializeIssues(body);
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
