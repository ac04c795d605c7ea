import { defineArea } from '../../core/area.ts';
import { processResetJob, resetCleanup, resetRequestSweep } from './jobs.ts';
import { passwordResetRoutes } from './public.ts';

/**
 * Password reset for people who forgot theirs: public routes only (no tools, no REST route table
 * entries): `POST /api/v1/auth/password-reset` and `/confirm` (on the auth limiter, in the OpenAPI
 * document under `auth`), and the page `/reset-password` of the mail's link. The mail is a row of
 * the kernel's outbox, queued by the area's job (docs/areas/password-reset.md).
 */
export const passwordResetArea = defineArea({
  name: 'password-reset',
  tools: [],
  routes: [],
  tags: {},
  permissions: [],
  events: [],
  toolsets: [],
  publicRoutes: passwordResetRoutes,
  jobs: [processResetJob, resetCleanup.job],
  schedules: [resetCleanup.schedule],
  sweeps: [resetRequestSweep],
});
