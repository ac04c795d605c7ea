// What the project-templates area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each (core/access.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const projectTemplatesCatalogue = {
  permissions: {
    // Project templates (the onboarding checklist among them) are workspace settings managers keep.
    'settings.project_templates.manage': 'manage',
  },
} as const satisfies AreaCatalogue;

type ProjectTemplatesPermissions = (typeof projectTemplatesCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends ProjectTemplatesPermissions {}
}
