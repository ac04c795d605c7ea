// What the phone numbers area brings to the kernel's catalogues: its role permissions with the tier of
// role that holds each (core/access.ts). Its token scope family `telephony` and its MCP toolset
// `telephony` are declared by the voice agents area (tools/voice-agents/catalogue.ts), which it uses.
// tools/index.ts collects every area's declaration; the declaration merging below keeps the names
// checked at compile time. No events: the specification's catalogue names none for phone numbers.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const phoneNumbersCatalogue = {
  permissions: {
    // Like voice agents: everyone reads, managers and up change them (a number is the organization's line).
    'phone_numbers.view': 'read',
    'phone_numbers.create': 'manage',
    'phone_numbers.edit': 'manage',
    'phone_numbers.delete': 'manage',
  },
} as const satisfies AreaCatalogue;

type PhoneNumbersPermissions = (typeof phoneNumbersCatalogue)['permissions'];

declare module '../../core/access.ts' {
  interface PermissionCatalog extends PhoneNumbersPermissions {}
}
