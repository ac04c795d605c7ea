// Which toolsets an MCP request works with. The X-MCP-Toolsets header wins, then the API key's
// stored setting, then the default (core). The selection only narrows what canSee() already allows:
// a tool outside it is hidden from tools/list and refused by tools/call, a tool inside it still
// needs the caller's scopes, role permission and plan feature.
import type { AuthContext } from '../core/auth-context.ts';
import { AppError } from '../core/errors.ts';
import type { Tool } from '../core/tool.ts';
import { DEFAULT_TOOLSETS, type ToolsetName } from '../core/toolsets.ts';
import { CATALOGUE } from '../tools/index.ts';

/** Every toolset the areas declare, in catalogue order. */
const TOOLSET_NAMES = CATALOGUE.toolsetNames;

function isToolset(name: string): name is ToolsetName {
  return TOOLSET_NAMES.some((known) => known === name);
}

export const TOOLSETS_HEADER = 'X-MCP-Toolsets';
/** The header value selecting every toolset. */
const ALL_TOOLSETS = 'all';
/** The most tools the default selection may list to any caller; a test holds the registry to it. */
export const DEFAULT_TOOL_BUDGET = 40;
/** Listed whatever the selection: get_me is where a model learns who it is and what it may do. */
const ALWAYS_ENABLED: ReadonlySet<string> = new Set(['get_me']);

export type ToolsetSelection = ReadonlySet<ToolsetName>;

function invalidHeader(message: string): AppError {
  return new AppError('validation_failed', {
    message,
    details: [{ field: TOOLSETS_HEADER, message, code: 'invalid_toolset' }],
    extra: { valid_toolsets: [...TOOLSET_NAMES, ALL_TOOLSETS] },
  });
}

/** Parses `core,admin` or `all` (case and spaces ignored); an unknown or missing name is a 400. */
export function parseToolsetsHeader(value: string): ToolsetSelection {
  const names = value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name.length > 0);
  const valid = `Valid toolsets: ${TOOLSET_NAMES.join(', ')}, or ${ALL_TOOLSETS}.`;
  if (names.length === 0) throw invalidHeader(`${TOOLSETS_HEADER} names no toolset. ${valid}`);
  const selected = new Set<ToolsetName>();
  for (const name of names) {
    if (name === ALL_TOOLSETS) return new Set(TOOLSET_NAMES);
    if (!isToolset(name)) throw invalidHeader(`Unknown toolset "${name}" in ${TOOLSETS_HEADER}. ${valid}`);
    selected.add(name);
  }
  return selected;
}

/** The header if sent, else the API key's non-empty setting, else the default. */
export function selectToolsets(auth: AuthContext, header: string | undefined): ToolsetSelection {
  if (header !== undefined) return parseToolsetsHeader(header);
  // A stored name that no longer exists is skipped rather than locking the key out of MCP.
  const stored = (auth.toolsets ?? []).filter(isToolset);
  return new Set(stored.length > 0 ? stored : DEFAULT_TOOLSETS);
}

export function isEnabled(tool: Tool, selection: ToolsetSelection): boolean {
  return ALWAYS_ENABLED.has(tool.name) || (isToolset(tool.toolset) && selection.has(tool.toolset));
}

/** The selection in registry order, for messages and instructions. */
export function describeSelection(selection: ToolsetSelection): string {
  return TOOLSET_NAMES.filter((name) => selection.has(name)).join(', ');
}
