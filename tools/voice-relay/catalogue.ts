// What the voice relay area brings to the kernel's catalogues: the role permission to read call
// sessions (core/access.ts) and its operator setting (settings.ts). Its tools use the `telephony`
// scope family and toolset the voice agents area declares (tools/voice-agents/catalogue.ts).
// tools/index.ts collects every area's declaration; the declaration merging below keeps the names
// checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { voiceRelaySettings } from './settings.ts';

export const voiceRelayCatalogue = {
  permissions: {
    // Like the call activities they belong to: everyone in the organization reads them.
    'voice_sessions.view': 'read',
  },
  settings: voiceRelaySettings,
} as const satisfies AreaCatalogue;

type VoiceRelayPermissions = (typeof voiceRelayCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends VoiceRelayPermissions {}
}
