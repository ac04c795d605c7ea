// What the messages area brings to the kernel's catalogues: its role permissions with the tier of
// role that holds each (core/access.ts), and the payloads of the events it emits (events.ts). Its
// tools use the `telephony` scope family and toolset the voice agents area declares for the whole
// telephony feature (tools/voice-agents/catalogue.ts). tools/index.ts collects every area's
// declaration; the declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { messagesEvents } from './events.ts';

export const messagesCatalogue = {
  permissions: {
    // Everyone reads the conversation on a lead; sending is a write (it costs the organization).
    'messages.view': 'read',
    'messages.send': 'write',
  },
  events: messagesEvents,
} as const satisfies AreaCatalogue;

type MessagesPermissions = (typeof messagesCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends MessagesPermissions {}
}
