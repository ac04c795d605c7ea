import { defineArea } from '../../core/area.ts';
import { fileRoutes } from './routes.ts';
import { fileTools } from './tools.ts';

/**
 * Files: signed links to upload a file straight to the store, under a key the server chooses inside
 * the caller's organization (store.ts), and the check that a key handed back is one of those.
 */
export const filesArea = defineArea({
  name: 'files',
  tools: fileTools,
  routes: fileRoutes,
  tags: {
    files:
      'Files: signed links to upload a file straight to storage, under a key of your organization: an email attachment (`upload-url`), or the picture of a user or the organization (`avatar/upload-url`, then `avatar/confirm`; the avatars area).',
  },
  permissions: ['email.send'],
  events: [],
  toolsets: ['email'],
});
