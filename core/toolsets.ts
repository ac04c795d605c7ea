// MCP toolsets: named groups of tools. A model works best with a short tool list, so an MCP
// connection lists only the `core` toolset unless the caller asks for more (X-MCP-Toolsets header or
// the API key's `toolsets` setting). Selecting a toolset never grants a tool: scopes, role
// permissions and plan features still decide. Every tool names one in `toolset`. The kernel keeps
// only `core`, the default; an area that brings a toolset declares it with its one-line
// description in `tools/<area>/catalogue.ts` (everyday record work belongs in core, as long as the
// default list stays within its budget).

/** The kernel's own toolset: the default list. */
export const KERNEL_TOOLSETS = {
  core: "Everyday CRM work: get_me, search_crm across records, leads (search, read, create, update, convert, bulk changes), contacts, opportunities, logging activities and reading a lead's timeline, tasks (create, complete, the caller's open tasks), lead health and conversation memory, a client's onboarding progress, running smart views, reading the organization's users, and the trash. Listed by default.",
} as const;

type KernelToolsets = typeof KERNEL_TOOLSETS;

/**
 * Every toolset and its description. The kernel's entry is here; each area adds its own by
 * declaration merging beside its declaration, so toolset names stay checked at compile time.
 */
export interface ToolsetCatalog extends KernelToolsets {}
export type ToolsetName = keyof ToolsetCatalog & string;

/** What an MCP connection lists when neither the header nor the key selects anything. */
export const DEFAULT_TOOLSETS: readonly ToolsetName[] = ['core'];
