// Dynamic client registration (RFC 7591), which MCP clients still use where a Client ID Metadata
// Document is not available. Anonymous: anyone may register, so each address is held to a budget
// (REGISTRATION_LIMIT below), and a registration never used within 24 hours is deleted by the
// daily cleanup (jobs.ts). Public clients (`token_endpoint_auth_method: none`) get no secret;
// confidential ones get a secret shown once and kept hashed.
import { z } from 'zod';
import type { PublicRequest, PublicRoute } from '../../core/area.ts';
import { hashToken } from '../../core/auth/tokens.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { AreaLimit } from '../../core/rate-limits.ts';
import type { Services } from '../../core/services.ts';
import type { OauthCatalogue } from './authorize.ts';
import { newClientCredentials, redirectUrisField } from './clients.ts';
import { parseScopeParam } from './scopes.ts';
import { oauthClients } from './tables.ts';

const registration = z.looseObject({
  redirect_uris: redirectUrisField,
  client_name: z.string().trim().min(1).max(200).optional(),
  token_endpoint_auth_method: z
    .enum(['none', 'client_secret_basic', 'client_secret_post'])
    .default('client_secret_basic'),
  grant_types: z
    .array(z.enum(['authorization_code', 'refresh_token']))
    .default(['authorization_code', 'refresh_token']),
  response_types: z.array(z.literal('code')).default(['code']),
  scope: z.string().max(2000).optional(),
  logo_uri: z.string().url().max(2000).optional(),
  client_uri: z.string().url().max(2000).optional(),
});

function json(body: unknown, status: number, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  });
}

function refused(error: string, description: string): Response {
  return json({ error, error_description: description }, 400);
}

/** Anonymous registrations per IP: 20 an hour, this area's own budget (core/rate-limits.ts AreaLimit). */
const REGISTRATION_LIMIT: AreaLimit = {
  name: 'oauth_register',
  points: 20,
  duration: 3600,
  message: 'Too many client registrations from this address, please try again later.',
};

async function register(
  request: PublicRequest,
  services: Services,
  catalogue: OauthCatalogue,
): Promise<Response> {
  const now = new Date();
  if (services.rateLimits) {
    const outcome = await services.rateLimits.consumeRule(REGISTRATION_LIMIT, `ip:${request.ip}`);
    if (!outcome.allowed) {
      return json(
        { error: 'too_many_requests', error_description: 'Too many client registrations from this address' },
        429,
        { 'retry-after': String(outcome.resetSeconds) },
      );
    }
  }
  let body: Record<string, unknown>;
  try {
    body = await request.body();
  } catch (err) {
    if (err instanceof AppError)
      return refused('invalid_client_metadata', err.body.message ?? err.body.error);
    throw err;
  }
  const parsed = registration.safeParse(body);
  if (!parsed.success) {
    const redirect = parsed.error.issues.some((i) => i.path[0] === 'redirect_uris');
    return refused(
      redirect ? 'invalid_redirect_uri' : 'invalid_client_metadata',
      parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; '),
    );
  }
  const input = parsed.data;
  const scopes = parseScopeParam(input.scope);
  const unknown = scopes.find((s) => !catalogue.knownScopes.includes(s));
  if (unknown !== undefined) return refused('invalid_client_metadata', `unknown scope ${unknown}`);
  const { clientId, secret } = newClientCredentials();
  const confidential = input.token_endpoint_auth_method !== 'none';
  const name = input.client_name ?? 'Unnamed app';
  await services.db.system.insert(oauthClients).values({
    id: newId(now),
    orgId: null,
    clientId,
    source: 'dcr',
    name,
    redirectUris: input.redirect_uris,
    scopes: scopes.length > 0 ? scopes : null,
    secretHash: confidential ? hashToken(secret) : null,
    logoUri: input.logo_uri ?? null,
    clientUri: input.client_uri ?? null,
    registeredIp: request.ip,
    createdAt: now,
    updatedAt: now,
  });
  return json(
    {
      client_id: clientId,
      client_id_issued_at: Math.floor(now.getTime() / 1000),
      ...(confidential && { client_secret: secret, client_secret_expires_at: 0 }),
      client_name: name,
      redirect_uris: input.redirect_uris,
      grant_types: input.grant_types,
      response_types: input.response_types,
      token_endpoint_auth_method: input.token_endpoint_auth_method,
      ...(scopes.length > 0 && { scope: scopes.join(' ') }),
      ...(input.logo_uri && { logo_uri: input.logo_uri }),
      ...(input.client_uri && { client_uri: input.client_uri }),
    },
    201,
  );
}

export function registerRoutes(catalogue: OauthCatalogue): PublicRoute[] {
  return [
    {
      method: 'POST',
      path: '/oauth/register',
      handle: (request, services) => register(request, services, catalogue),
    },
  ];
}
