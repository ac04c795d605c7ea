// The kernel collects the catalogues; it does not keep them. Each area declares in its
// `tools/<area>/catalogue.ts` what it brings (permissions with the tier of role holding them, token
// scope families, MCP toolsets with their descriptions, events with their payload schemas, plan features with their lowest plan) and hands it to `defineArea` as `brings`;
// tools/index.ts calls `buildCatalogue` over the area list and passes the result to whoever needs
// it (the invoke pipeline's role check, global search, API keys, MCP toolset selection). Nothing
// here is filled by an import's side effect.

import type { z } from 'zod';
import {
  buildPlanTable,
  buildRoleTable,
  type Feature,
  type FeaturePlans,
  knownScopes,
  type Permission,
  type PermissionTiers,
  type PlanTable,
  type RoleTable,
  SCOPED_RESOURCE_LABELS,
  SCOPED_RESOURCES,
  type ScopeFamily,
  type Tier,
} from './access.ts';
import { KERNEL_VARIABLES, type Plan } from './config.ts';
import type { EventName, EventSchemas } from './events.ts';
import type { AreaSettings } from './settings.ts';
import { KERNEL_TOOLSETS, type ToolsetName } from './toolsets.ts';

/** What one area brings to the kernel's catalogues; each part optional. */
export interface AreaCatalogue {
  /** Role permissions it introduces, each with the tier of role that holds it (core/access.ts TIERS). */
  permissions?: PermissionTiers;
  /**
   * Token scope families it introduces (`read:<family>`/`write:<family>`), never defaults, each with
   * what it covers in plain words (the OAuth consent page reads "See <words>"). The specification's
   * scoped resources (leads, contacts, ...) are the kernel's: their scopes are the defaults.
   */
  scopes?: Readonly<Record<string, string>>;
  /** MCP toolsets it introduces, each with the one line the server instructions and docs show. */
  toolsets?: Readonly<Record<string, string>>;
  /** The zod payload schema of each event it owns (core/events.ts EventCatalog), by event name. */
  events?: EventSchemas;
  /** The plan features it gates, each with the lowest plan that has it (core/access.ts PLANS). */
  features?: FeaturePlans;
  /** The operator's environment variables only it reads (core/settings.ts `defineSettings`). */
  settings?: AreaSettings<unknown>;
}

/** Every area's declarations, collected. */
export interface Catalogue {
  access: RoleTable;
  /** The plan -> feature table from the features' lowest plans. */
  plans: PlanTable;
  /** The scoped resources, then every family the areas introduce. */
  scopeFamilies: readonly ScopeFamily[];
  /** Every scope that grants something: read/write of each family and the MCP scopes. */
  knownScopes: readonly string[];
  /** What each scope family covers, in plain words, for a person choosing scopes. */
  scopeLabels: ReadonlyMap<ScopeFamily, string>;
  /** Every toolset with its description: the kernel's `core` first, then the areas' in area order. */
  toolsets: ReadonlyMap<ToolsetName, string>;
  /** The toolset names in that order (the order of messages, instructions and the api-keys enum). */
  toolsetNames: readonly [ToolsetName, ...ToolsetName[]];
  /** The areas' declared settings, checked against the environment when a process starts. */
  settings: readonly AreaSettings<unknown>[];
  /** Every event name, in area order (the reserved ones of tools/reserved.ts last). */
  eventNames: readonly EventName[];
  /** The payload schema of every event, in that order. */
  eventSchemas: ReadonlyMap<EventName, z.ZodType<Record<string, unknown>>>;
}

/** What the collector reads of an area: its name (for error messages) and its declaration. */
export interface CatalogueSource {
  name: string;
  brings?: AreaCatalogue;
}

/** Narrows a declared key to a permission name (names are checked by the area's declaration merging). */
function isPermission(declared: PermissionTiers, name: string): name is Permission {
  return Object.hasOwn(declared, name);
}

/** Narrows a declared family name (names are checked by the area's declaration merging). */
function isScopeFamily(declared: Readonly<Record<string, string>>, name: string): name is ScopeFamily {
  return Object.hasOwn(declared, name);
}

/** Narrows a declared event name (names are checked by the area's declaration merging). */
function isEventName(declared: EventSchemas, name: string): name is EventName {
  return Object.hasOwn(declared, name);
}

/** Narrows a declared feature name (names are checked by the area's declaration merging). */
function isFeature(declared: FeaturePlans, name: string): name is Feature {
  return Object.hasOwn(declared, name);
}

/** Narrows a declared toolset name (names are checked by the area's declaration merging). */
function isToolsetName(declared: Readonly<Record<string, string>>, name: string): name is ToolsetName {
  return Object.hasOwn(declared, name);
}

/** Who declared each name of one kind, so a name declared by two areas throws. */
function owners(kind: string, kernel: readonly string[]) {
  const declaredBy = new Map<string, string>(kernel.map((name) => [name, 'the kernel']));
  return {
    /** Records `area` as the declarer of `name` (true), or throws when another one declared it. */
    claim(name: string, area: string): true {
      const other = declaredBy.get(name);
      if (other !== undefined && other !== area) {
        throw new Error(`${kind} ${name} is declared by both ${other} and ${area}`);
      }
      declaredBy.set(name, area);
      return true;
    },
  };
}

/**
 * The catalogues from the areas' declarations, in area order. A name declared by two areas is a
 * mistake the type check may not catch (same tier twice merges silently), so it throws here.
 */
export function buildCatalogue(areas: readonly CatalogueSource[]): Catalogue {
  const tiers = new Map<Permission, Tier>();
  const families: ScopeFamily[] = [...SCOPED_RESOURCES];
  const scopeLabels = new Map<ScopeFamily, string>(
    SCOPED_RESOURCES.map((r) => [r, SCOPED_RESOURCE_LABELS[r]]),
  );
  const toolsets = new Map<ToolsetName, string>([['core', KERNEL_TOOLSETS.core]]);
  const eventSchemas = new Map<EventName, z.ZodType<Record<string, unknown>>>();
  const lowest = new Map<Feature, Plan>();
  // Who declared each name, by kind: the kernel's own entries first.
  const permissionOf = owners('Permission', []);
  const familyOf = owners('Scope family', SCOPED_RESOURCES);
  const toolsetOf = owners('Toolset', [...toolsets.keys()]);
  const eventOf = owners('Event', []);
  const featureOf = owners('Feature', []);
  const variableOf = owners('Setting', KERNEL_VARIABLES);
  const settings: AreaSettings<unknown>[] = [];
  for (const area of areas) {
    const features = area.brings?.features ?? {};
    for (const [name, plan] of Object.entries(features)) {
      if (isFeature(features, name) && featureOf.claim(name, area.name)) lowest.set(name, plan);
    }
    const events = area.brings?.events ?? {};
    for (const [name, schema] of Object.entries(events)) {
      if (isEventName(events, name) && eventOf.claim(name, area.name)) eventSchemas.set(name, schema);
    }
    const declaredToolsets = area.brings?.toolsets ?? {};
    for (const [name, description] of Object.entries(declaredToolsets)) {
      if (isToolsetName(declaredToolsets, name) && toolsetOf.claim(name, area.name))
        toolsets.set(name, description);
    }
    const scopes = area.brings?.scopes ?? {};
    for (const [family, label] of Object.entries(scopes)) {
      if (isScopeFamily(scopes, family) && familyOf.claim(family, area.name) && !families.includes(family)) {
        families.push(family);
        scopeLabels.set(family, label);
      }
    }
    const declared = area.brings?.settings;
    if (declared) {
      for (const { name } of declared.variables) variableOf.claim(name, area.name);
      settings.push(declared);
    }
    const permissions = area.brings?.permissions ?? {};
    for (const [name, tier] of Object.entries(permissions)) {
      if (isPermission(permissions, name) && permissionOf.claim(name, area.name)) tiers.set(name, tier);
    }
  }
  const [first, ...rest] = toolsets.keys();
  if (first === undefined) throw new Error('No toolset declared');
  return {
    access: buildRoleTable(tiers),
    plans: buildPlanTable(lowest),
    scopeFamilies: families,
    knownScopes: knownScopes(families),
    scopeLabels,
    toolsets,
    toolsetNames: [first, ...rest],
    eventNames: [...eventSchemas.keys()],
    eventSchemas,
    settings,
  };
}
