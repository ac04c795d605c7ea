import type { RoleTable } from '../../core/access.ts';
import { defineArea } from '../../core/area.ts';
import { avatarsCatalogue } from './catalogue.ts';
import { avatarsCleanup } from './jobs.ts';
import { avatarPublicRoutes } from './public.ts';
import { avatarRoutes } from './routes.ts';
import { avatarTools } from './tools.ts';

/**
 * Avatars: a user's picture and the organization's logo, uploaded straight to storage through a
 * signed link, checked (size, leading bytes) on confirmation, and served at a stable public URL
 * that redirects to a short-lived download link. Built with a getter of the role table (the
 * catalogue), which the tools read when called to check `users.edit`.
 */
export function createAvatarsArea(roles: () => RoleTable) {
  const [createUploadUrl, confirm, remove] = avatarTools(roles);
  return defineArea({
    name: 'avatars',
    tools: [createUploadUrl, confirm, remove],
    routes: avatarRoutes({ createUploadUrl, confirm, remove }),
    // Its routes lie under /files, whose tag the files area introduces.
    tags: {},
    brings: avatarsCatalogue,
    permissions: ['users.edit'],
    events: [],
    toolsets: ['avatars'],
    publicRoutes: avatarPublicRoutes,
    jobs: [avatarsCleanup.job],
    schedules: [avatarsCleanup.schedule],
  });
}
