// Which toolsets an MCP request works with. The X-MCP-Toolsets header wins, then the URL
// (`/mcp/x/{toolsets}`, for clients that cannot set headers), then the API key's stored setting,
// then the default (core). A `/readonly` suffix on any MCP URL keeps the connection to read tools,
// whatever chose the toolsets. The selection only narrows what canSee() already allows: a tool
// outside it is hidden from tools/list and refused by tools/call, a tool inside it still needs the
// caller's scopes, role permission and plan feature.
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

/** The toolsets a connection works with; `readOnly` when its URL ends in `/readonly`. */
export interface ToolsetSelection extends ReadonlySet<ToolsetName> {
  readonly readOnly?: boolean;
}

/** Where a toolset list came from, as error messages and details name it. */
interface ToolsetSource {
  /** How a message names the source: `X-MCP-Toolsets` or `the URL`. */
  label: string;
  /** The `field` of the error details. */
  field: string;
}

const HEADER_SOURCE: ToolsetSource = { label: TOOLSETS_HEADER, field: TOOLSETS_HEADER };
/** The path segment of `/mcp/x/{toolsets}`. */
const URL_SOURCE: ToolsetSource = { label: 'the URL', field: 'toolsets' };

function invalidToolsets(message: string, source: ToolsetSource): AppError {
  return new AppError('validation_failed', {
    message,
    details: [{ field: source.field, message, code: 'invalid_toolset' }],
    extra: { valid_toolsets: [...TOOLSET_NAMES, ALL_TOOLSETS] },
  });
}

/** Parses `core,admin` or `all` (case and spaces ignored); an unknown or missing name is a 400. */
function parseToolsets(value: string, source: ToolsetSource): Set<ToolsetName> {
  const names = value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name.length > 0);
  const valid = `Valid toolsets: ${TOOLSET_NAMES.join(', ')}, or ${ALL_TOOLSETS}.`;
  if (names.length === 0) throw invalidToolsets(`${source.label} names no toolset. ${valid}`, source);
  const selected = new Set<ToolsetName>();
  for (const name of names) {
    if (name === ALL_TOOLSETS) return new Set(TOOLSET_NAMES);
    if (!isToolset(name)) {
      throw invalidToolsets(`Unknown toolset "${name}" in ${source.label}. ${valid}`, source);
    }
    selected.add(name);
  }
  return selected;
}

/** Parses the X-MCP-Toolsets header: `core,admin` or `all`. */
export function parseToolsetsHeader(value: string): ToolsetSelection {
  return parseToolsets(value, HEADER_SOURCE);
}

/** What the URL of an MCP request selects: `/mcp/x/{toolsets}` and a `/readonly` suffix. */
export interface UrlSelection {
  /** The `{toolsets}` segment as sent (percent-decoding already applied), if the URL has one. */
  toolsets?: string | undefined;
  readOnly: boolean;
}

/**
 * The header if sent, else the URL's toolsets, else the API key's non-empty setting, else the
 * default; read-only when the URL says so, whichever of them chose.
 */
export function selectToolsets(
  auth: AuthContext,
  header: string | undefined,
  url: UrlSelection = { readOnly: false },
): ToolsetSelection {
  let names: Set<ToolsetName>;
  if (header !== undefined) names = parseToolsets(header, HEADER_SOURCE);
  else if (url.toolsets !== undefined) names = parseToolsets(url.toolsets, URL_SOURCE);
  else {
    // A stored name that no longer exists is skipped rather than locking the key out of MCP.
    const stored = (auth.toolsets ?? []).filter(isToolset);
    names = new Set(stored.length > 0 ? stored : DEFAULT_TOOLSETS);
  }
  return url.readOnly ? Object.assign(names, { readOnly: true }) : names;
}

/** A tool that changes nothing: what a read-only connection keeps. */
function isReadTool(tool: Tool): boolean {
  return tool.access.kind === 'read';
}

export function isEnabled(tool: Tool, selection: ToolsetSelection): boolean {
  if (selection.readOnly && !isReadTool(tool)) return false;
  return ALWAYS_ENABLED.has(tool.name) || (isToolset(tool.toolset) && selection.has(tool.toolset));
}

/** Why a tool the caller could use is not enabled here: the connection is read-only, or its toolset is off. */
export function disabledBy(tool: Tool, selection: ToolsetSelection): 'read_only' | 'toolset' | undefined {
  if (isEnabled(tool, selection)) return undefined;
  return selection.readOnly && !isReadTool(tool) ? 'read_only' : 'toolset';
}

/** The selection in registry order, for messages and instructions. */
export function describeSelection(selection: ToolsetSelection): string {
  return TOOLSET_NAMES.filter((name) => selection.has(name)).join(', ');
}
