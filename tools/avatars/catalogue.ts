// What the avatars area brings to the kernel's catalogues: its MCP toolset (core/toolsets.ts). It
// declares no permission and no scope family of its own: the tools check `users.edit` and sit in
// the `users` family (docs/decisions.md "Avatars"). tools/index.ts collects every area's
// declaration; the declaration merging below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const avatarsCatalogue = {
  toolsets: {
    // Not `admin`: any user, a viewer too, may set their own avatar.
    avatars:
      "Pictures: upload and confirm a user's avatar (your own; another user's with users.edit) or the organization's logo (owner).",
  },
} as const satisfies AreaCatalogue;

type AvatarsToolsets = (typeof avatarsCatalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends AvatarsToolsets {}
}
