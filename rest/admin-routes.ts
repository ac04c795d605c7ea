// The operator's admin API under /admin/v1, guarded by CRM_ADMIN_TOKEN. Without that token the
// routes are not mounted at all, so every /admin path is an ordinary 404 and reveals nothing.
// Translation only; the operations live in core/admin.ts.
import type { Hono } from 'hono';
import {
  createOauthToken,
  createOrganization,
  revokeOauthToken,
  showOrganization,
  updateOrganization,
} from '../core/admin.ts';
import { bearerToken, hashToken, safeEqual } from '../core/auth/tokens.ts';
import { AppError } from '../core/errors.ts';
import type { Services } from '../core/services.ts';
import { limitFailedAuthentication } from '../http/authenticate.ts';
import { readJsonObject } from '../http/body.ts';
import type { AppEnv } from '../http/env.ts';
import { ADMIN_OPENAPI_PATH, adminOpenApiDocument } from './admin-openapi.ts';

/** `features` are the plan table's (tools/index.ts CATALOGUE): the ones an operator may switch off. */
export function mountAdminRoutes(app: Hono<AppEnv>, services: Services, features: readonly string[]): void {
  const { adminToken } = services.config;
  if (!adminToken) return;
  // Hashes have one length, so the comparison takes the same time whatever the length of the guess.
  const expected = hashToken(adminToken);
  const db = services.db;

  app.use('/admin/*', async function requireAdmin(c, next) {
    await limitFailedAuthentication(c, services, async () => {
      const token = bearerToken(c.req.header('authorization'));
      if (!safeEqual(hashToken(token), expected)) throw new AppError('invalid_token');
    });
    await next();
  });

  app.get(ADMIN_OPENAPI_PATH, (c) => c.json(adminOpenApiDocument(features)));
  app.post('/admin/v1/organizations', async (c) => {
    const result = await createOrganization(db, await readJsonObject(c));
    services.logger.info({ organizationId: result.organization._id }, 'admin: organization created');
    return c.json(result, 201);
  });
  app.get('/admin/v1/organizations/:id', async (c) => c.json(await showOrganization(db, c.req.param('id'))));
  app.patch('/admin/v1/organizations/:id', async (c) => {
    const result = await updateOrganization(db, c.req.param('id'), await readJsonObject(c), features);
    services.logger.info(
      {
        organizationId: result.organization._id,
        plan: result.organization.plan,
        status: result.organization.status,
      },
      'admin: organization updated',
    );
    return c.json(result);
  });
  app.post('/admin/v1/oauth-tokens', async (c) => {
    const result = await createOauthToken(db, await readJsonObject(c));
    services.logger.info({ oauthTokenId: result.oauth_token._id }, 'admin: OAuth token issued');
    return c.json(result, 201);
  });
  app.delete('/admin/v1/oauth-tokens/:id', async (c) => {
    const result = await revokeOauthToken(db, c.req.param('id'));
    services.logger.info({ oauthTokenId: c.req.param('id') }, 'admin: OAuth token revoked');
    return c.json(result);
  });
}
