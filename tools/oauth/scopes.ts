// The scopes an OAuth client may ask for, in the words the consent page shows. The scopes are the
// catalogue's (core/access.ts: `read:<family>`, `write:<family>` of every family, and `mcp:read`,
// `mcp:write`); each family's plain words come from its declaration (the kernel's scoped resources in
// core/access.ts, an area's in its catalogue.ts `scopes`), so a new area brings its own.
import type { ScopeFamily } from '../../core/access.ts';
import type { TokenResource } from '../../core/auth-context.ts';

const MCP_LABELS: Readonly<Record<string, string>> = {
  'mcp:read': 'Use the CRM from an AI assistant (MCP), reading only',
  'mcp:write': 'Use the CRM from an AI assistant (MCP), reading and making changes',
};

/** One scope in plain words: "See leads (your prospects and clients)"; a family without words by its name. */
export function scopeLabel(scope: string, families: ReadonlyMap<ScopeFamily, string>): string {
  const mcp = MCP_LABELS[scope];
  if (mcp) return mcp;
  const [kind, family = ''] = scope.split(':');
  const what = [...families].find(([name]) => name === family)?.[1] ?? family;
  if (kind === 'read') return `See ${what}`;
  if (kind === 'write') return `Create, change and delete ${what}`;
  return scope;
}

/** The scopes a client gets when it asks for none: MCP use for /mcp, the default key scopes for the API. */
export function defaultScopes(resource: TokenResource, defaults: readonly string[]): string[] {
  return resource === 'mcp' ? ['mcp:read', 'mcp:write'] : [...defaults];
}

/** A space-separated `scope` parameter as a list without repeats (empty or absent: none). */
export function parseScopeParam(value: string | undefined | null): string[] {
  if (!value) return [];
  return [...new Set(value.split(' ').filter((s) => s.length > 0))];
}
