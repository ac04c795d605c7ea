// The variables every handler of the HTTP app can read: the request id, and the caller once
// authenticated (http/authenticate.ts sets it on the routes that take a user token).
import type { Context } from 'hono';
import type { AuthContext } from '../core/auth-context.ts';

export interface AppEnv {
  Variables: { requestId: string; auth?: AuthContext };
}

/**
 * The caller the authentication middleware stored. A route that reads it without the middleware in
 * front is a wiring mistake, answered 500 rather than served without a caller.
 */
export function callerOf(c: Context<AppEnv>): AuthContext {
  const auth = c.get('auth');
  if (!auth) throw new Error(`${c.req.method} ${c.req.path} reads the caller but is not authenticated`);
  return auth;
}
