// What the forecast area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const forecastCatalogue = {
  permissions: {
    // Forecast accuracy: a management report, for managers and up.
    'forecast.view': 'manage',
  },
  // The plan feature its tools need, with the lowest plan that has it (core/access.ts PLANS).
  features: { forecasting: 'pro' },
} as const satisfies AreaCatalogue;

type ForecastPermissions = (typeof forecastCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends ForecastPermissions {}
}

type ForecastFeatures = (typeof forecastCatalogue)['features'];

declare module '../../core/access.ts' {
  interface FeatureCatalog extends ForecastFeatures {}
}
