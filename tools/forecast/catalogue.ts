// What the forecast area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const forecastCatalogue = {
  permissions: {
    // Forecast accuracy: a management report, for managers and up.
    'forecast.view': 'manage',
  },
} as const satisfies AreaCatalogue;

type ForecastPermissions = (typeof forecastCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends ForecastPermissions {}
}
