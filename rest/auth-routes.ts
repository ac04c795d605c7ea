// The public auth routes: signup, login and refresh need no bearer token. Translation only; the
// rules live in core/auth/sessions.ts.
import type { Hono } from 'hono';
import { login, refresh, signup } from '../core/auth/sessions.ts';
import type { Services } from '../core/services.ts';
import { readJsonObject } from '../http/body.ts';
import type { AppEnv } from '../http/env.ts';

export function mountAuthRoutes(app: Hono<AppEnv>, services: Services): void {
  app.post('/api/v1/auth/signup', async (c) => c.json(await signup(services, await readJsonObject(c)), 201));
  app.post('/api/v1/auth/login', async (c) => c.json(await login(services, await readJsonObject(c)), 200));
  app.post('/api/v1/auth/refresh', async (c) =>
    c.json(await refresh(services, await readJsonObject(c)), 200),
  );
}
