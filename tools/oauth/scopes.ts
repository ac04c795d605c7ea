// The scopes an OAuth client may ask for, in the words the consent page shows. The scopes are the
// catalogue's (core/access.ts: `read:<family>`, `write:<family>` of every family, and `mcp:read`,
// `mcp:write`); this table names each family in plain words next to them. A family an area adds
// later without a label here is shown by its name.
import type { ScopeFamily } from '../../core/access.ts';
import type { TokenResource } from '../../core/auth-context.ts';

/** What each scope family covers, as a person reads it on the consent page. */
const SCOPE_FAMILY_LABELS: Readonly<Record<ScopeFamily, string>> = {
  leads: 'leads (your prospects and clients)',
  contacts: 'contacts of your leads',
  opportunities: 'deals in your pipeline',
  invoices: 'invoices and payments',
  proposals: 'proposals',
  projects: 'projects and logged time',
  settings: 'your API keys',
  custom_objects: 'custom objects and their records',
  email: 'email: connected mailboxes and scheduled mail',
  users: "your organization's users",
  webhooks: 'webhook subscriptions and deliveries',
  oauth: 'OAuth apps and installations',
};

const MCP_LABELS: Readonly<Record<string, string>> = {
  'mcp:read': 'Use the CRM from an AI assistant (MCP), reading only',
  'mcp:write': 'Use the CRM from an AI assistant (MCP), reading and making changes',
};

function isFamily(name: string): name is ScopeFamily {
  return Object.hasOwn(SCOPE_FAMILY_LABELS, name);
}

/** One scope in plain words: "See leads (your prospects and clients)". */
export function scopeLabel(scope: string): string {
  const mcp = MCP_LABELS[scope];
  if (mcp) return mcp;
  const [kind, family = ''] = scope.split(':');
  const what = isFamily(family) ? SCOPE_FAMILY_LABELS[family] : family;
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
