// The registry: the list of areas. Every other list - tools, REST routes, OpenAPI tags, trash types,
// owned records, lead children, search sources, state machines - is derived from it here, so adding
// an area is its folder and one line below (docs/architecture.md). Areas that consume a registry
// (leads, search, users, trash) are built from what the others declare.
import { type Area, collect, type PublicRoute } from '../core/area.ts';
import type { Route } from '../core/route.ts';
import type { StateMachine } from '../core/state-machine.ts';
import type { Tool } from '../core/tool.ts';
import type { TrashType } from '../core/trash.ts';
import { activitiesArea } from './activities/index.ts';
import { apiKeysArea } from './api-keys/index.ts';
import { createConnectedAccountsArea } from './connected-accounts/index.ts';
import { contactsArea } from './contacts/index.ts';
import { conversationMemoryArea } from './conversation-memory/index.ts';
import { customActivityTypesArea } from './custom-activity-types/index.ts';
import { customObjectsArea } from './custom-objects/index.ts';
import { emailArea } from './email/index.ts';
import { estimatesArea } from './estimates/index.ts';
import { filesArea } from './files/index.ts';
import { forecastArea } from './forecast/index.ts';
import { invoicesArea } from './invoices/index.ts';
import { leadHealthArea } from './lead-health/index.ts';
import { createLeadsArea } from './leads/index.ts';
import { meArea } from './me/index.ts';
import { opportunitiesArea } from './opportunities/index.ts';
import { projectTemplatesArea } from './project-templates/index.ts';
import { projectsArea } from './projects/index.ts';
import { proposalsArea } from './proposals/index.ts';
import { createSearchArea } from './search/index.ts';
import { smartViewsArea } from './smart-views/index.ts';
import { tasksArea } from './tasks/index.ts';
import { createTrashArea } from './trash/index.ts';
import { createUsersArea } from './users/index.ts';
import { webhooksArea } from './webhooks/index.ts';
import { workflowsArea } from './workflows/index.ts';

/** Areas that need nothing from the others, in no particular order. */
const SELF_CONTAINED: readonly Area[] = [
  meArea,
  contactsArea,
  opportunitiesArea,
  invoicesArea,
  projectsArea,
  projectTemplatesArea,
  proposalsArea,
  activitiesArea,
  customActivityTypesArea,
  tasksArea,
  conversationMemoryArea,
  leadHealthArea,
  smartViewsArea,
  customObjectsArea,
  apiKeysArea,
  webhooksArea,
  emailArea,
  workflowsArea,
];

const leadsArea = createLeadsArea(
  collect(SELF_CONTAINED, 'leadChildren'),
  collect(SELF_CONTAINED, 'leadConverted'),
);

// Inbound mail runs the emailReceived hooks of the self-contained areas (a reply cancels a follow-up,
// stops a sequence).
const connectedAccountsArea = createConnectedAccountsArea(collect(SELF_CONTAINED, 'emailReceived'));

/** Every area that holds records, in registry order (the order of lists, docs and the trash). */
const RECORD_AREAS: readonly Area[] = [
  meArea,
  leadsArea,
  contactsArea,
  opportunitiesArea,
  invoicesArea,
  projectsArea,
  projectTemplatesArea,
  proposalsArea,
  activitiesArea,
  customActivityTypesArea,
  tasksArea,
  conversationMemoryArea,
  leadHealthArea,
  smartViewsArea,
  customObjectsArea,
];

/** Every area, in the order tools are listed (MCP tools/list, the manifest, the OpenAPI document). */
export const AREAS: readonly Area[] = [
  ...RECORD_AREAS,
  createSearchArea(collect(RECORD_AREAS, 'searchSources')),
  createUsersArea(collect(RECORD_AREAS, 'ownedRecords')),
  apiKeysArea,
  createTrashArea(collect(RECORD_AREAS, 'trashTypes')),
  webhooksArea,
  forecastArea,
  estimatesArea,
  connectedAccountsArea,
  emailArea,
  filesArea,
  workflowsArea,
];

export const TOOLS: readonly Tool[] = AREAS.flatMap((area) => area.tools);

/** The REST route table: METHOD path -> tool, every area's in area order. */
export const ROUTES: readonly Route[] = AREAS.flatMap((area) => area.routes);

/** Trashable record types; the trash tools and the purge job read this list. */
export const TRASH_TYPES: readonly TrashType[] = collect(AREAS, 'trashTypes');

/** Public pages outside /api/v1 (no user token), mounted by the REST sub-app under the per-IP public limit. */
export const PUBLIC_ROUTES: readonly PublicRoute[] = collect(AREAS, 'publicRoutes');

/** Every declared status machine (core/state-machine.ts); docs and test/ports/state-machine.test.ts walk this list. */
export const STATE_MACHINES: readonly StateMachine[] = collect(AREAS, 'stateMachines');

/** OpenAPI tag -> description, from the areas that introduce each tag. */
export const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = Object.fromEntries(
  AREAS.flatMap((area) => Object.entries(area.tags)),
);

export function findTool(name: string): Tool | undefined {
  return TOOLS.find((t) => t.name === name);
}

/**
 * Folders under tools/ that are shared business kits, not areas: no defineArea, no tools of their
 * own; areas build on them (tools/documents: what invoices, estimates and proposals share).
 */
export const KITS: readonly string[] = ['documents'];
