// What the voice agents area brings to the kernel's catalogues: its role permissions with the tier of
// role that holds each (core/access.ts), the token scope family `telephony` (declared here for the
// whole telephony feature: phone numbers, voice agents, messages and call monitoring) and the MCP
// toolset `telephony` (core/toolsets.ts) the phone numbers and later telephony areas use too.
// tools/index.ts collects every area's declaration; the declaration merging below keeps the names
// checked at compile time. No events: the specification's catalogue names none for voice agents.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const voiceAgentsCatalogue = {
  permissions: {
    // Like the organization's other set-up records: everyone reads, managers and up change them
    // (an agent speaks for the organization on its phone numbers).
    'voice_agents.view': 'read',
    'voice_agents.create': 'manage',
    'voice_agents.edit': 'manage',
    'voice_agents.delete': 'manage',
  },
  // What the family covers, in the words the OAuth consent page shows a person ("See …").
  scopes: { telephony: 'phone numbers, voice agents, messages and call monitoring' },
  toolsets: {
    telephony:
      'Telephony: phone numbers and the voice agents that answer them (list, read, create, update, delete), messages and call monitoring.',
  },
} as const satisfies AreaCatalogue;

type VoiceAgentsPermissions = (typeof voiceAgentsCatalogue)['permissions'];

type VoiceAgentsScopes = (typeof voiceAgentsCatalogue)['scopes'];

type VoiceAgentsToolsets = (typeof voiceAgentsCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends VoiceAgentsToolsets {}
}

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends VoiceAgentsScopes {}
  interface PermissionCatalog extends VoiceAgentsPermissions {}
}
