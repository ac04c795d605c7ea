import type { Hono } from 'hono';
import type { Services } from '../core/services.ts';
import type { AppEnv } from './app.ts';

export function mountAdminRoutes(_app: Hono<AppEnv>, _services: Services): void {}
