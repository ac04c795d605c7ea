// Authentication at the HTTP root, once per request, for both surfaces. The middleware reads the
// Authorization header, authenticates it through core/auth/authenticate.ts and stores the caller in
// the context, where REST and MCP read it (`callerOf`, http/env.ts); neither surface authenticates
// on its own. http/app.ts builds it with each surface's options and hands it to the sub-app, which
// places it on exactly the routes that take a user token and after the checks that must answer
// first (MCP's Origin and Host checks), so an unknown path or a wrong method still answers 404 or
// 405, never 401. The per-IP budget of failed authentications lives here too; the admin token guard
// (rest/admin-routes.ts) spends the same budget.
import type { Context, MiddlewareHandler } from 'hono';
import { authenticate } from '../core/auth/authenticate.ts';
import type { TokenResource } from '../core/auth-context.ts';
import { AppError } from '../core/errors.ts';
import type { Services } from '../core/services.ts';
import type { AppEnv } from './env.ts';
import { recordOutcome, refusal, requestIp } from './rate-limit.ts';

/**
 * The challenge a 401 on /mcp carries (RFC 9728 section 5.1): where the protected resource's
 * metadata is, from which an MCP client discovers the authorization server.
 */
export function bearerChallenge(publicBaseUrl: string): string {
  return `Bearer resource_metadata="${publicBaseUrl}/.well-known/oauth-protected-resource/mcp"`;
}

export interface AuthenticateOptions {
  /** Spend the per-IP budget of failed authentications on a failure, and refuse once it is spent. */
  limitFailures: boolean;
  /**
   * The WWW-Authenticate value a 401 carries; none when absent. A presented token that failed adds
   * `error="invalid_token"` (RFC 6750 section 3.1).
   */
  challenge?: string;
  /** The resource these routes are (RFC 8707): an OAuth token issued for the other one is refused. */
  resource: TokenResource;
}

/**
 * Runs `verify` under the per-IP budget of failed authentications: once an address has spent it,
 * the request is refused with 429 before its token is even looked at, so guessing stops; every 401
 * for a presented credential spends one point (a request without any is not a guess, and MCP
 * clients send one to discover that a token is needed). Successes cost nothing, and the budget is
 * per address, so callers elsewhere holding valid tokens are never blocked by someone else's
 * guessing.
 */
export async function limitFailedAuthentication<T>(
  c: Context,
  services: Services,
  verify: () => Promise<T>,
): Promise<T> {
  const limits = services.rateLimits;
  if (!limits) return verify();
  const key = `ip:${requestIp(c, services.config.trustProxyHops)}`;
  const state = await limits.peek('auth_failures', key);
  if (!state.allowed) {
    recordOutcome(c, state);
    throw refusal(state);
  }
  try {
    return await verify();
  } catch (err) {
    if (err instanceof AppError && err.status === 401 && err.code !== 'authentication_required')
      recordOutcome(c, await limits.consume('auth_failures', key));
    throw err;
  }
}

/**
 * Middleware authenticating the caller's bearer token and storing the AuthContext as `auth`.
 * A failure is thrown to the root's error handler (401, 403 for an inactive organization, 429 once
 * the budget is spent), with the challenge header on a 401 when one is configured. Errors of later
 * handlers pass through untouched: they never get the challenge.
 */
export function authenticateCaller(
  services: Services,
  options: AuthenticateOptions,
): MiddlewareHandler<AppEnv> {
  const { limitFailures, challenge, resource } = options;
  if (typeof limitFailures !== 'boolean') throw new TypeError('authenticateCaller needs limitFailures');
  if (challenge !== undefined && !challenge.startsWith('Bearer ')) {
    throw new TypeError(`authenticateCaller needs a Bearer challenge, got ${JSON.stringify(challenge)}`);
  }

  return async function authenticateCallerHandler(c, next) {
    const verify = () => authenticate(c.req.header('authorization'), services, new Date(), resource);
    try {
      c.set('auth', limitFailures ? await limitFailedAuthentication(c, services, verify) : await verify());
    } catch (err) {
      if (challenge && err instanceof AppError && err.status === 401) {
        const presented = err.code !== 'authentication_required';
        c.header(
          'WWW-Authenticate',
          presented ? challenge.replace(/^Bearer /, 'Bearer error="invalid_token", ') : challenge,
        );
      }
      throw err;
    }
    await next();
  };
}
