// What the email area brings to the kernel's catalogues: its role permissions with the tier of role
// that holds each, and its token scope family (core/access.ts), and the MCP toolset it introduces (core/toolsets.ts). It also brings the payload schemas of its events (events.ts). tools/index.ts collects every area's declaration; the
// declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';
import { emailEvents } from './events.ts';

export const emailCatalogue = {
  permissions: {
    'email.view': 'read',
    'email.send': 'write',
  },
  scopes: { email: 'email: connected mailboxes and scheduled mail' },
  toolsets: {
    email:
      "Email and sequences: the caller's connected SMTP accounts (add, verify, read, update, remove), scheduling email to a lead (sent later through the caller's own account, with an optional follow-up task when no reply comes), reading and cancelling scheduled email, and workflows (sequences of email, task and SMS steps with delays): define, activate, pause, enroll leads and unenroll them. Tools that send or enroll preview unless given confirm: true.",
  },
  events: emailEvents,
} as const satisfies AreaCatalogue;

type EmailPermissions = (typeof emailCatalogue)['permissions'];

type EmailScopes = (typeof emailCatalogue)['scopes'];

type EmailToolsets = (typeof emailCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends EmailToolsets {}
}

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends EmailScopes {}
  interface PermissionCatalog extends EmailPermissions {}
}
