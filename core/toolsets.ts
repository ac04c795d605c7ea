// MCP toolsets: named groups of tools. A model works best with a short tool list, so an MCP
// connection lists only the `core` toolset unless the caller asks for more (X-MCP-Toolsets header or
// the API key's `toolsets` setting). Selecting a toolset never grants a tool: scopes, role
// permissions and plan features still decide. Every tool names one of these in `toolset`; a new
// area of tools either fits an existing description (everyday record work belongs in core, as long
// as the default list stays within its budget) or adds a row here.

export const TOOLSET_NAMES = [
  'core',
  'sales',
  'views',
  'customization',
  'admin',
  'settings',
  'webhooks',
  'billing',
  'projects',
  'email',
] as const;
export type ToolsetName = (typeof TOOLSET_NAMES)[number];

/** One line per toolset, for the server instructions and the docs. */
export const TOOLSETS: Readonly<Record<ToolsetName, string>> = {
  core: "Everyday CRM work: get_me, search_crm across records, leads (search, read, create, update, convert, bulk changes), contacts, opportunities, logging activities and reading a lead's timeline, tasks (create, complete, the caller's open tasks), lead health and conversation memory, a client's onboarding progress, running smart views, reading the organization's users, and the trash. Listed by default.",
  sales:
    'The rest of the sales records: deleting contacts, opportunities, activities and tasks, reading and editing single activities, listing every task, snoozing tasks, editing conversation memory, and forecast accuracy (needs a plan with forecasting).',
  views:
    'Smart views (saved lead filters): create, list, read, update and delete them. Running one is in core.',
  customization:
    'Custom objects (definitions and their records) and custom activity types (definitions). Needs a plan with custom objects or custom activity types.',
  admin: 'User management for owners and admins: create, update, deactivate, reactivate and delete users.',
  settings: "The caller's own API keys: create, list, update (label, toolsets), revoke and rotate.",
  webhooks:
    'Webhook subscriptions of the organization (create, list, read, update, delete, send a test) and their delivery log (read, replay). Needs a plan with webhooks.',
  billing:
    'Money and documents sent to customers. Invoices: list, read, create, update and delete drafts, finalize (gap-free numbers), send (mails the PDF), the PDF, record payments, void and mark uncollectible. Estimates (needs a plan with estimates): the same plus accept, decline and convert to an invoice. Proposals: draft, send (a public link to accept or decline), expire, and suggested discovery questions. Tools that send to a customer preview unless given confirm: true.',
  projects:
    "Projects and time: projects (list, read, create, update, delete), time entries (list, read, log, update, delete), invoicing a project's unbilled time into a draft invoice and its invoicing report, and project templates (list, read, create, update, delete, apply to a lead). Needs a plan with projects.",
  email:
    "Email and sequences: the caller's connected SMTP accounts (add, verify, read, update, remove), scheduling email to a lead (sent later through the caller's own account, with an optional follow-up task when no reply comes), reading and cancelling scheduled email, and workflows (sequences of email, task and SMS steps with delays): define, activate, pause, enroll leads and unenroll them. Tools that send or enroll preview unless given confirm: true.",
};

/** What an MCP connection lists when neither the header nor the key selects anything. */
export const DEFAULT_TOOLSETS: readonly ToolsetName[] = ['core'];

export function isToolset(name: string): name is ToolsetName {
  return TOOLSET_NAMES.some((known) => known === name);
}
