// What the oauth area brings to the kernel's catalogues: its role permissions (owners and admins
// manage the organization's OAuth apps; everyone sees and revokes their own
// installations), its token scope family and its operator setting (settings.ts). Its tools join the `admin` toolset of the users area.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { oauthSettings } from './settings.ts';

export const oauthCatalogue = {
  permissions: {
    'oauth.apps.manage': 'admin',
    'oauth.installations.view_own': 'read',
  },
  scopes: { oauth: 'OAuth apps and installations' },
  settings: oauthSettings,
} as const satisfies AreaCatalogue;

type OauthPermissions = (typeof oauthCatalogue)['permissions'];

type OauthScopes = (typeof oauthCatalogue)['scopes'];

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends OauthScopes {}
  interface PermissionCatalog extends OauthPermissions {}
}
