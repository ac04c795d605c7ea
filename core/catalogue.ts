// The kernel collects the catalogues; it does not keep them. Each area declares in its
// `tools/<area>/catalogue.ts` what it brings (permissions with the tier of role holding them, ...)
// and hands it to `defineArea` as `brings`; tools/index.ts calls `buildCatalogue` over the area
// list and passes the result to whoever needs it (the invoke pipeline's role check, the users
// area's role listing). Nothing here is filled by an import's side effect.
import {
  buildRoleTable,
  type Permission,
  type PermissionTiers,
  type RoleTable,
  type Tier,
} from './access.ts';

/** What one area brings to the kernel's catalogues; each part optional. */
export interface AreaCatalogue {
  /** Role permissions it introduces, each with the tier of role that holds it (core/access.ts TIERS). */
  permissions?: PermissionTiers;
}

/** Every area's declarations, collected. */
export interface Catalogue {
  access: RoleTable;
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

/**
 * The catalogues from the areas' declarations, in area order. A name declared by two areas is a
 * mistake the type check may not catch (same tier twice merges silently), so it throws here.
 */
export function buildCatalogue(areas: readonly CatalogueSource[]): Catalogue {
  const tiers = new Map<Permission, Tier>();
  const declaredBy = new Map<string, string>();
  for (const area of areas) {
    const permissions = area.brings?.permissions ?? {};
    for (const [name, tier] of Object.entries(permissions)) {
      if (!isPermission(permissions, name)) continue;
      const other = declaredBy.get(name);
      if (other !== undefined && other !== area.name) {
        throw new Error(`Permission ${name} is declared by both ${other} and ${area.name}`);
      }
      declaredBy.set(name, area.name);
      tiers.set(name, tier);
    }
  }
  return { access: buildRoleTable(tiers) };
}
