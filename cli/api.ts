// A tool called through a running server's REST API (/api/v1), as `crm tools call` and `crm keys
// create` do: the tool's route from the registry, path parameters from the input, the rest of the
// input as the query string (GET) or the JSON body, and the token's user acting.
import type { Route } from '../core/route.ts';
import { DEFAULT_URL, type HttpAnswer, httpCall, parseBaseUrl, UsageError } from './remote.ts';

/** The --url and --token options of every command that talks to a running server. */
export const remoteOptions: { url: { type: 'string' }; token: { type: 'string' } } = {
  url: { type: 'string' },
  token: { type: 'string' },
};

export interface Remote {
  base: URL;
  token: string | undefined;
}

export function resolveRemote(values: { url?: string | undefined; token?: string | undefined }): Remote {
  const base = parseBaseUrl(values.url ?? (process.env.CRM_URL || DEFAULT_URL));
  const token = values.token ?? process.env.CRM_TOKEN;
  return { base, token: token || undefined };
}

/** Sends one request to the server's REST API (/api/v1). */
function apiRequest(
  remote: Remote,
  method: string,
  path: string,
  options: { query?: URLSearchParams; body?: Record<string, unknown> } = {},
): Promise<HttpAnswer> {
  return httpCall({ ...remote, method, path: `/api/v1${path}`, ...options });
}

async function toolRoute(name: string): Promise<Route> {
  // Every area loads here (their routes are declared beside their tools), so only when needed.
  const { ROUTES, TOOLS } = await import('../tools/index.ts');
  if (!TOOLS.some((t) => t.name === name)) {
    throw new UsageError(`unknown tool "${name}" (see crm tools list)`);
  }
  const found = ROUTES.find((r) => r.tool.name === name);
  if (!found) throw new UsageError(`tool "${name}" has no REST route; call it over MCP`);
  return found;
}

/** A query-string value; objects cannot be expressed in one. */
function queryValue(name: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) {
    return value.map(String).join(',');
  }
  throw new UsageError(`--input field "${name}" cannot be sent in a GET query string (use a scalar)`);
}

/** Calls `name` through its REST route: path parameters from the input, the rest as query or body. */
export async function callTool(
  remote: Remote,
  name: string,
  input: Record<string, unknown>,
): Promise<HttpAnswer> {
  const found = await toolRoute(name);
  const rest: Record<string, unknown> = { ...input };
  const path = found.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, param: string) => {
    const value = rest[param];
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new UsageError(`--input needs "${param}" for ${found.method} /api/v1${found.path}`);
    }
    delete rest[param];
    return encodeURIComponent(String(value));
  });
  if (found.method === 'GET') {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(rest)) {
      if (value !== undefined && value !== null) query.set(key, queryValue(key, value));
    }
    return apiRequest(remote, 'GET', path, { query });
  }
  return apiRequest(remote, found.method, path, Object.keys(rest).length > 0 ? { body: rest } : {});
}
