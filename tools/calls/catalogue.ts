// What the calls area brings to the kernel's catalogues: the role permission to read calls
// (core/access.ts). Its tools use the `telephony` scope family and toolset the voice agents area
// declares (tools/voice-agents/catalogue.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const callsCatalogue = {
  permissions: {
    // Like the call activities they become: everyone in the organization reads them.
    'calls.view': 'read',
  },
} as const satisfies AreaCatalogue;

type CallsPermissions = (typeof callsCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends CallsPermissions {}
}
