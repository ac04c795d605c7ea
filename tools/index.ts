// The registry: the one list of areas. Every other list - tools, REST routes, OpenAPI tags, trash
// types, owned records, lead children, search sources, state machines, jobs, schedules, sweeps - is
// derived from it here, so adding an area is its folder and one line below (docs/architecture.md).
// Areas that consume a registry or hooks are factories in the list, built from what the others
// declare (core/area-list.ts).
import { type Area, collect, type PublicRoute, toolMap } from '../core/area.ts';
import { type AreaEntry, buildAreaList } from '../core/area-list.ts';
import type { Catalogue, CatalogueSource } from '../core/catalogue.ts';
import {
  checkSchedules,
  type JobRegistry,
  type Relay,
  registerJobs,
  type Schedule,
  type Sweep,
} from '../core/jobs.ts';
import { kernelBackground } from '../core/kernel-jobs.ts';
import type { Prompt } from '../core/prompts.ts';
import type { RecordResource } from '../core/resources.ts';
import type { Route } from '../core/route.ts';
import type { SocketRoute } from '../core/sockets.ts';
import { checkMachineEvents, type StateMachine } from '../core/state-machine.ts';
import type { Tool } from '../core/tool.ts';
import type { TrashType } from '../core/trash.ts';
import { activitiesArea } from './activities/index.ts';
import { apiKeysCatalogue } from './api-keys/catalogue.ts';
import { createApiKeysArea } from './api-keys/index.ts';
import { createAvatarsArea } from './avatars/index.ts';
import { callsArea } from './calls/index.ts';
import { createConnectedAccountsArea } from './connected-accounts/index.ts';
import { outboxAccounts } from './connected-accounts/outbox.ts';
import { createContactsArea } from './contacts/index.ts';
import { conversationMemoryArea } from './conversation-memory/index.ts';
import { createCustomActivityTypesArea } from './custom-activity-types/index.ts';
import { customObjectsArea } from './custom-objects/index.ts';
import type { EmailHooks } from './email/hooks.ts';
import { createEmailArea } from './email/index.ts';
import { estimatesArea } from './estimates/index.ts';
import { filesArea } from './files/index.ts';
import { forecastArea } from './forecast/index.ts';
import { createInvoicesArea } from './invoices/index.ts';
import { knowledgeBaseArea } from './knowledge-base/index.ts';
import { leadHealthArea } from './lead-health/index.ts';
import { createLeadsArea } from './leads/index.ts';
import { createMeArea } from './me/index.ts';
import { messagesArea } from './messages/index.ts';
import { oauthCatalogue } from './oauth/catalogue.ts';
import { createOauthArea } from './oauth/index.ts';
import { opportunitiesArea } from './opportunities/index.ts';
import { passwordResetArea } from './password-reset/index.ts';
import { phoneNumbersArea } from './phone-numbers/index.ts';
import { projectTemplatesArea } from './project-templates/index.ts';
import { projectsArea } from './projects/index.ts';
import { proposalsArea } from './proposals/index.ts';
import { reservedCatalogue } from './reserved.ts';
import { createSearchArea } from './search/index.ts';
import { smartViewsArea } from './smart-views/index.ts';
import { surveysArea } from './surveys/index.ts';
import { tasksArea } from './tasks/index.ts';
import { telephonyArea } from './telephony/index.ts';
import { createTrashArea } from './trash/index.ts';
import { createUsersArea } from './users/index.ts';
import { voiceAgentsArea } from './voice-agents/index.ts';
import { voiceRelayArea } from './voice-relay/index.ts';
import { webhooksCatalogue } from './webhooks/catalogue.ts';
import { createWebhooksArea } from './webhooks/index.ts';
import { workflowsArea } from './workflows/index.ts';

/**
 * Every area, in the order tools are listed (MCP tools/list, the manifest, the OpenAPI document).
 * The factories are built from what the other areas declare (core/area-list.ts): leads from the
 * lead children and conversion hooks, contacts and custom activity types from the hooks of the
 * areas whose records name them, search, users and trash from the registries of the record areas,
 * the API keys and webhooks from the whole catalogue (toolsets and scopes, event names), me from
 * its plan table (read when called), connected accounts from the inbound-mail hooks, email
 * from the sent-email hooks (read when a mail is recorded: workflows come after it).
 */
const AREA_LIST = [
  { name: 'me', provides: [], build: (list) => createMeArea(() => list.catalogue().plans) },
  {
    name: 'leads',
    provides: ['trashTypes', 'ownedRecords', 'searchSources'],
    build: (list) => createLeadsArea(list.collect('leadChildren'), list.collect('leadConverted')),
  },
  {
    name: 'contacts',
    provides: ['trashTypes', 'leadChildren', 'searchSources'],
    build: (list) => createContactsArea(list.collect('contactMoving')),
  },
  opportunitiesArea,
  {
    // Projects bill their time on invoices: invoices ask them about a project an invoice names.
    name: 'invoices',
    provides: ['stateMachines', 'jobs', 'schedules'],
    build: (list) => createInvoicesArea(list.collect('invoiceProjects')),
  },
  projectsArea,
  projectTemplatesArea,
  proposalsArea,
  activitiesArea,
  {
    name: 'custom-activity-types',
    provides: [],
    build: (list) => createCustomActivityTypesArea(list.collect('customActivityTypeChanging')),
  },
  tasksArea,
  conversationMemoryArea,
  leadHealthArea,
  smartViewsArea,
  customObjectsArea,
  {
    name: 'search',
    provides: [],
    build: (list) => createSearchArea(list.collect('searchSources'), () => list.catalogue().access),
  },
  { name: 'users', provides: [], build: (list) => createUsersArea(list.collect('ownedRecords')) },
  {
    name: 'api-keys',
    provides: [],
    brings: apiKeysCatalogue,
    build: (list) => createApiKeysArea(list.catalogue()),
  },
  {
    name: 'trash',
    provides: ['jobs', 'schedules'],
    build: (list) => createTrashArea(list.collect('trashTypes')),
  },
  {
    name: 'webhooks',
    provides: ['jobs', 'sweeps', 'relays'],
    brings: webhooksCatalogue,
    build: (list) => createWebhooksArea(list.catalogue().eventNames),
  },
  {
    name: 'oauth',
    provides: ['publicRoutes', 'jobs', 'schedules'],
    brings: oauthCatalogue,
    build: (list) => createOauthArea(list.catalogue()),
  },
  forecastArea,
  estimatesArea,
  {
    name: 'connected-accounts',
    provides: ['publicRoutes'],
    build: (list) =>
      createConnectedAccountsArea({
        emailReceived: list.collect('emailReceived'),
        replyTargets: list.collect('replyTargets'),
        accountRemoved: list.collect('accountRemoved'),
      }),
  },
  {
    name: 'email',
    provides: ['stateMachines', 'emailReceived', 'replyTargets', 'accountRemoved', 'jobs', 'sweeps'],
    build: (list) =>
      createEmailArea({
        emailSent: () => list.collect('emailSent'),
        enrollTargets: () => list.collect('enrollTargets'),
      }),
  },
  filesArea,
  workflowsArea,
  passwordResetArea,
  surveysArea,
  {
    name: 'avatars',
    provides: ['publicRoutes', 'jobs', 'schedules'],
    build: (list) => createAvatarsArea(() => list.catalogue().access),
  },
  knowledgeBaseArea,
  telephonyArea,
  voiceAgentsArea,
  phoneNumbersArea,
  voiceRelayArea,
  messagesArea,
  callsArea,
] as const satisfies readonly AreaEntry[];

/**
 * What the specification names for areas not built yet (events a subscription may list, plan
 * features), collected after the areas: an area built later moves its entries into its folder.
 */
export const RESERVED: CatalogueSource = { name: 'reserved (tools/reserved.ts)', brings: reservedCatalogue };

const BUILT = buildAreaList(AREA_LIST, [RESERVED]);

/**
 * What the areas bring to the kernel's catalogues (the role table from their permissions' tiers,
 * scope families, toolsets, events), and RESERVED after them, collected once and passed to the
 * surfaces and factories that need it. The API keys area (the toolsets a key may select, the known
 * scopes) and the webhooks area (the events a subscription may list) are built from it, so they
 * join by their declarations; test/areas.test.ts checks the result equals the catalogue of AREAS.
 */
export const CATALOGUE: Catalogue = BUILT.catalogue;

/** Every area, in the order tools are listed (MCP tools/list, the manifest, the OpenAPI document). */
export const AREAS: readonly Area[] = BUILT.areas;

/**
 * What the email area's sender runs on a sent or failed email and asks about an
 * `enroll_in_workflow_id` (tools/workflows declares them), for tests that call the sender directly.
 */
export const EMAIL_HOOKS: EmailHooks = {
  emailSent: () => collect(AREAS, 'emailSent'),
  enrollTargets: () => collect(AREAS, 'enrollTargets'),
};

export const TOOLS: readonly Tool[] = AREAS.flatMap((area) => area.tools);

/**
 * Every tool by its public name, each typed as declared (literal name, its own schemas): the very
 * instances TOOLS holds, which the test fixtures read as `TOOL` (test/fixtures/tools.ts).
 */
export const TOOL_BY_NAME = toolMap(BUILT.areas);

/** The REST route table: METHOD path -> tool, every area's in area order. */
export const ROUTES: readonly Route[] = AREAS.flatMap((area) => area.routes);

/** Trashable record types; the trash tools and the purge job read this list. */
export const TRASH_TYPES: readonly TrashType[] = collect(AREAS, 'trashTypes');

/** Public pages outside /api/v1 (no user token), mounted by the REST sub-app under the per-IP public limit. */
export const PUBLIC_ROUTES: readonly PublicRoute[] = collect(AREAS, 'publicRoutes');

/** The areas' WebSockets (core/sockets.ts), answered by rest/public-sockets.ts on the HTTP server. */
export const SOCKET_ROUTES: readonly SocketRoute[] = collect(AREAS, 'socketRoutes');

/** Every declared status machine (core/state-machine.ts); docs and test/ports/state-machine.test.ts walk this list. */
export const STATE_MACHINES: readonly StateMachine[] = collect(AREAS, 'stateMachines');
checkMachineEvents(STATE_MACHINES, CATALOGUE.eventNames);

/** OpenAPI tag -> description, from the areas that introduce each tag. */
export const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = Object.fromEntries(
  AREAS.flatMap((area) => Object.entries(area.tags)),
);

// Background work: the kernel's (the mail outbox sends through the connected accounts) and every
// area's, collected like the other registries. workers/runtime.ts runs them; the queues get JOBS.
const KERNEL = kernelBackground(outboxAccounts);

/** Every declared job by name; a job declared twice throws here, when the module loads. */
export const JOBS: JobRegistry = registerJobs([...KERNEL.jobs, ...collect(AREAS, 'jobs')]);

/** The repeatable runs (daily jobs, the trash purge); each names a job of JOBS, or loading throws. */
export const SCHEDULES: readonly Schedule[] = [...KERNEL.schedules, ...collect(AREAS, 'schedules')];
checkSchedules(JOBS, SCHEDULES);

/** What the runtime's sweeper loop runs: each wakes due rows of its own whose job was lost. */
export const SWEEPS: readonly Sweep[] = [...KERNEL.sweeps, ...collect(AREAS, 'sweeps')];

/** What the runtime's relay loop runs (the outbox to webhook deliveries). */
export const RELAYS: readonly Relay[] = collect(AREAS, 'relays');

/** The record types readable as MCP resources, every area's in area order (core/resources.ts). */
export const RESOURCES: readonly RecordResource[] = AREAS.flatMap((area) => area.resources ?? []);

/** The MCP prompts, every area's in area order (core/prompts.ts). */
export const PROMPTS: readonly Prompt[] = AREAS.flatMap((area) => area.prompts ?? []);

// Checked when the registry loads: one collection or prompt name each, and every tool a prompt reads
// is a read tool that exists, so a renamed tool fails here and not at a caller's request.
for (const [kind, names] of [
  ['resource collection', RESOURCES.map((resource) => resource.collection)],
  ['prompt', PROMPTS.map((prompt) => prompt.name)],
] as const) {
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) throw new Error(`The ${kind} ${twice} is declared twice`);
}
for (const prompt of PROMPTS) {
  for (const name of [...prompt.reads, ...(prompt.optionalReads ?? [])]) {
    const tool = TOOLS.find((t) => t.name === name);
    if (tool?.access.kind !== 'read')
      throw new Error(`Prompt ${prompt.name} reads ${name}, which is no read tool`);
  }
  for (const collection of Object.values(prompt.recordArguments ?? {})) {
    if (!RESOURCES.some((resource) => resource.collection === collection)) {
      throw new Error(
        `Prompt ${prompt.name} completes ids of ${collection}, which is no resource collection`,
      );
    }
  }
}

export function findTool(name: string): Tool | undefined {
  return TOOLS.find((t) => t.name === name);
}

/**
 * Folders under tools/ that are shared business kits, not areas: no defineArea, no tools of their
 * own; areas build on them (tools/documents: what invoices, estimates and proposals share).
 */
export const KITS: readonly string[] = ['documents'];
