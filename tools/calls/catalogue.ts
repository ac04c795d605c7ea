// What the calls area brings to the kernel's catalogues: the role permissions to read calls and to
// monitor them (core/access.ts), and the plan feature call monitoring needs. Its tools use the
// `telephony` scope family and toolset the voice agents area declares
// (tools/voice-agents/catalogue.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const callsCatalogue = {
  permissions: {
    // Like the call activities they become: everyone in the organization reads them.
    'calls.view': 'read',
    // Listening in on a colleague's call: managers, admins and owners.
    'calls.monitor': 'manage',
  },
  // The plan feature of call monitoring, with the lowest plan that has it (core/access.ts PLANS).
  features: { call_monitoring: 'enterprise' },
} as const satisfies AreaCatalogue;

type CallsPermissions = (typeof callsCatalogue)['permissions'];
type CallsFeatures = (typeof callsCatalogue)['features'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends CallsPermissions {}
  interface FeatureCatalog extends CallsFeatures {}
}
