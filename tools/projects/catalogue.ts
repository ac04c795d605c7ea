// What the projects area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts), and the MCP toolset it introduces (core/toolsets.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const projectsCatalogue = {
  permissions: {
    'projects.view': 'read',
    'projects.create': 'write',
    'projects.edit': 'write',
    'projects.delete': 'manage',
  },
  toolsets: {
    projects:
      "Projects and time: projects (list, read, create, update, delete), time entries (list, read, log, update, delete), invoicing a project's unbilled time into a draft invoice and its invoicing report, and project templates (list, read, create, update, delete, apply to a lead). Needs a plan with projects.",
  },
  // The plan feature its tools need, with the lowest plan that has it (core/access.ts PLANS).
  features: { projects: 'pro' },
} as const satisfies AreaCatalogue;

type ProjectsPermissions = (typeof projectsCatalogue)['permissions'];

type ProjectsToolsets = (typeof projectsCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends ProjectsToolsets {}
}

declare module '../../core/access.ts' {
  interface PermissionCatalog extends ProjectsPermissions {}
}

type ProjectsFeatures = (typeof projectsCatalogue)['features'];

declare module '../../core/access.ts' {
  interface FeatureCatalog extends ProjectsFeatures {}
}
