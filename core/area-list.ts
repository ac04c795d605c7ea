// The one list of areas (tools/index.ts) and how it is built. An entry is an area, or a factory
// for an area that is built from what the others declare (the hooks it runs, the registries it
// serves). A factory names the registries it adds entries to (`provides`), so the builder knows
// which factories to build first without building all of them: a factory asking for `leadChildren`
// builds the factories that provide `leadChildren`, and no other. Every list is collected over the
// whole list in its order, the asking area left out, so no hand-kept partial list decides what a
// factory sees (docs/architecture.md "The registry").
import { type Area, type AreaHooks, type AreaRegistries, collect } from './area.ts';
import { buildCatalogue, type Catalogue, type CatalogueSource } from './catalogue.ts';

/** What a factory is built with. */
export interface AreaListView {
  /** The entries of one registry over every other area of the list, in list order. */
  collect<K extends keyof AreaRegistries>(key: K): AreaRegistries[K][];
  /** The catalogue of the whole list (core/catalogue.ts); builds every other entry first. */
  catalogue(): Catalogue;
}

/** `A` is the type of the area it builds, kept so the built list keeps each area's tool types. */
export interface AreaFactory<A extends Area = Area> {
  /** The name of the area it builds. */
  name: string;
  /** The registries its area adds entries to; building checks it adds to no other. */
  provides: readonly (keyof AreaRegistries)[];
  /**
   * Its catalogue entries, when it needs the whole catalogue to be built (tools/api-keys, the
   * webhooks' event list): the catalogue takes them at their word instead of building the area, so
   * two such factories can each be built from it. Its area must bring these very entries.
   */
  brings?: Area['brings'];
  build(list: AreaListView): A;
}

export type AreaEntry = Area | AreaFactory;

/** The area an entry is, or the one it builds. */
export type BuiltArea<E extends AreaEntry> = E extends AreaFactory<infer A> ? A : E;

function isFactory(entry: AreaEntry): entry is AreaFactory {
  return 'build' in entry;
}

/** The registries an area adds entries to. */
function registriesOf(area: Area): string[] {
  const hooks: AreaHooks = area;
  return Object.entries(hooks)
    .filter(([, value]) => Array.isArray(value) && value.length > 0)
    .map(([key]) => key);
}

const REGISTRY_KEYS: ReadonlySet<string> = new Set<keyof AreaRegistries>([
  'trashTypes',
  'ownedRecords',
  'leadChildren',
  'searchSources',
  'stateMachines',
  'leadConverted',
  'publicRoutes',
  'emailReceived',
  'contactMoving',
  'customActivityTypeChanging',
  'replyTargets',
  'accountRemoved',
  'emailSent',
  'enrollTargets',
  'jobs',
  'schedules',
  'sweeps',
  'relays',
]);

/**
 * Builds every entry in list order; a factory's questions build the entries they need first. A
 * factory that needs itself (through another factory's question) throws, as does one whose area
 * adds to a registry it did not name in `provides`, is named otherwise than its entry, or brings
 * other entries than its factory declared. `reserved` joins the catalogue after the areas: what
 * the specification names for areas not built yet (tools/reserved.ts).
 */
export function buildAreaList<const E extends readonly AreaEntry[]>(
  entries: E,
  reserved: readonly CatalogueSource[] = [],
): { areas: BuiltArea<E[number]>[]; catalogue: Catalogue } {
  const built: (Area | undefined)[] = entries.map((entry) => (isFactory(entry) ? undefined : entry));
  const building = new Set<number>();
  let catalogue: Catalogue | undefined;

  const resolve = (i: number): Area => {
    const done = built[i];
    if (done) return done;
    const entry = entries[i];
    if (!entry || !isFactory(entry)) throw new Error(`no area list entry ${i}`);
    if (building.has(i)) throw new Error(`Area ${entry.name} is needed to build itself`);
    building.add(i);
    const area = entry.build(viewFor(i));
    building.delete(i);
    if (area.name !== entry.name) throw new Error(`Factory ${entry.name} built area ${area.name}`);
    if (entry.brings !== undefined && area.brings !== entry.brings)
      throw new Error(`Area ${area.name} brings other catalogue entries than its factory declares`);
    const undeclared = registriesOf(area).filter(
      (key) => REGISTRY_KEYS.has(key) && !entry.provides.some((name) => name === key),
    );
    if (undeclared.length > 0)
      throw new Error(`Area ${area.name} adds to ${undeclared.join(', ')}, not named in its provides`);
    built[i] = area;
    return area;
  };

  const viewFor = (self: number): AreaListView => ({
    collect(key) {
      const areas: Area[] = [];
      entries.forEach((entry, i) => {
        if (i === self) return;
        if (!isFactory(entry)) areas.push(entry);
        else if (entry.provides.includes(key)) areas.push(resolve(i));
      });
      return collect(areas, key);
    },
    catalogue() {
      if (catalogue) return catalogue;
      const areas = entries.map((entry, i) =>
        isFactory(entry) && (i === self || entry.brings !== undefined)
          ? { name: entry.name, brings: entry.brings }
          : resolve(i),
      );
      const whole = buildCatalogue([...areas, ...reserved]);
      catalogue = whole;
      return whole;
    },
  });

  const areas = entries.map((_, i) => resolve(i));
  // Entry i resolves to itself or to what its factory built (checked above to be named as the
  // entry), which is BuiltArea of that entry; the index-by-index resolution is beyond the types.
  const typed = areas as BuiltArea<E[number]>[];
  return { areas: typed, catalogue: catalogue ?? buildCatalogue([...areas, ...reserved]) };
}
