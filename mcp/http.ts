import type { Hono } from 'hono';
import type { Services } from '../core/services.ts';
import type { AppEnv } from '../rest/app.ts';

export function mountMcp(_app: Hono<AppEnv>, _services: Services): void {}
