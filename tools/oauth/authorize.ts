// The authorization endpoint (OAuth 2.1 code flow): GET /oauth/authorize checks the request and
// shows the sign-in form; POST /oauth/authorize takes the sign-in (the same check as
// POST /api/v1/auth/login, under the same per-IP budget) and then the consent. Until the client and
// its exact redirect URI are known, every error is a page (never a redirect: no open redirect);
// after that, errors go back to the client as RFC 6749 `error` parameters with `state` and `iss`
// (RFC 9207). PKCE S256 is required. The request lives in oauth_pending_requests between the
// steps, bound to the browser by a CSRF cookie whose value every form also carries.

import { randomBytes } from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import type { ScopeFamily } from '../../core/access.ts';
import type { PublicRequest, PublicRoute } from '../../core/area.ts';
import { verifyCredentials } from '../../core/auth/sessions.ts';
import { hashToken, safeEqual } from '../../core/auth/tokens.ts';
import type { TokenResource } from '../../core/auth-context.ts';
import { organizations, users } from '../../core/db/schema.ts';
import { AppError } from '../../core/errors.ts';
import { htmlResponse } from '../../core/html-page.ts';
import { newId } from '../../core/ids.ts';
import type { Services } from '../../core/services.ts';
import { ClientProblem, type ClientRow, resolveClient, sourceLabel } from './clients.ts';
import { CODE_TTL_SECONDS, resourceOf, resourceUrl } from './grants.ts';
import { type ClientView, type ConsentChoice, consentPage, errorPage, signInPage } from './page.ts';
import { defaultScopes, parseScopeParam, scopeLabel } from './scopes.ts';
import { oauthClients, oauthCodes, oauthInstallations, oauthPendingRequests } from './tables.ts';

const AUTHORIZE_PATH = '/oauth/authorize';
const CSRF_COOKIE = 'crm_oauth_csrf';
const PENDING_TTL_MS = 15 * 60 * 1000;
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const RANDOM_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** What the authorization endpoint needs of the catalogue (tools/index.ts builds it first). */
export interface OauthCatalogue {
  knownScopes: readonly string[];
  defaultScopes: readonly string[];
  /** What each scope family covers, in plain words (each declared beside its family). */
  scopeLabels: ReadonlyMap<ScopeFamily, string>;
  toolsets: ReadonlyMap<string, string>;
}

type PendingRow = typeof oauthPendingRequests.$inferSelect;

function randomValue(): string {
  return randomBytes(32).toString('base64url');
}

function cookieOf(request: Request, name: string): string | undefined {
  const header = request.headers.get('cookie') ?? '';
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

function csrfCookie(value: string, base: string): string {
  const secure = base.startsWith('https://') ? '; Secure' : '';
  return `${CSRF_COOKIE}=${value}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=900${secure}`;
}

/** The redirect back to the client with `params`, `state` and `iss`; the URI's own query is kept. */
function redirectBack(
  redirectUri: string,
  params: Record<string, string>,
  state: string | null,
  issuer: string,
): Response {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  if (state !== null) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer);
  return new Response(null, { status: 302, headers: { location: url.href, 'cache-control': 'no-store' } });
}

function clientView(client: ClientRow, redirectUri: string): ClientView {
  return { name: client.name, source: sourceLabel(client), redirectHost: new URL(redirectUri).host };
}

function page(status: number, message: string): Response {
  return htmlResponse(errorPage(status, message));
}

/** A single-valued query parameter; a repeated one is refused (RFC 6749 section 3.1). */
function single(params: URLSearchParams, name: string): string | undefined | 'repeated' {
  const all = params.getAll(name);
  if (all.length > 1) return 'repeated';
  return all[0];
}

/** The scopes asked for, checked against the catalogue and what the client may ask; or an error text. */
function requestedScopes(
  raw: string | undefined,
  client: ClientRow,
  resource: TokenResource,
  catalogue: OauthCatalogue,
): string[] | { error: string } {
  const asked = parseScopeParam(raw);
  const allowed = client.scopes;
  let scopes = asked;
  if (scopes.length === 0) {
    const defaults = defaultScopes(resource, catalogue.defaultScopes);
    scopes = allowed ? defaults.filter((s) => allowed.includes(s)) : defaults;
    if (scopes.length === 0 && allowed) scopes = [...allowed];
  }
  const unknown = scopes.find((s) => !catalogue.knownScopes.includes(s));
  if (unknown !== undefined) return { error: `unknown scope ${unknown}` };
  const beyond = allowed ? scopes.find((s) => !allowed.includes(s)) : undefined;
  if (beyond !== undefined) return { error: `the client may not ask for scope ${beyond}` };
  if (scopes.length === 0) return { error: 'no scope to grant' };
  return scopes;
}

export function authorizeRoutes(catalogue: OauthCatalogue): PublicRoute[] {
  return [
    {
      method: 'GET',
      path: AUTHORIZE_PATH,
      handle: (request, services) => start(request, services, catalogue),
    },
    {
      method: 'POST',
      path: AUTHORIZE_PATH,
      handle: (request, services) => answer(request, services, catalogue),
    },
  ];
}

/** GET: checks the request; shows the sign-in form, an error page, or redirects an error to a trusted URI. */
async function start(
  request: PublicRequest,
  services: Services,
  catalogue: OauthCatalogue,
): Promise<Response> {
  const now = new Date();
  const base = services.config.publicBaseUrl;
  const params = new URL(request.raw.url).searchParams;
  const clientId = single(params, 'client_id');
  const redirectUri = single(params, 'redirect_uri');
  if (clientId === 'repeated' || redirectUri === 'repeated') {
    return page(400, 'The request repeats client_id or redirect_uri.');
  }
  let client: ClientRow;
  try {
    client = await resolveClient(clientId ?? '', services, now);
  } catch (err) {
    if (err instanceof ClientProblem) return page(400, err.message);
    throw err;
  }
  if (redirectUri === undefined) return page(400, 'The request names no redirect_uri.');
  if (!client.redirectUris.includes(redirectUri)) {
    return page(400, 'The redirect_uri is not one this client registered.');
  }

  // From here the redirect URI is trusted: errors go back to the client.
  const stateParam = single(params, 'state');
  const state = stateParam === undefined || stateParam === 'repeated' ? null : stateParam;
  const fail = (error: string, description: string) =>
    redirectBack(redirectUri, { error, error_description: description }, state, base);
  const names = ['response_type', 'code_challenge', 'code_challenge_method', 'resource', 'scope', 'state'];
  const repeated = names.find((n) => single(params, n) === 'repeated');
  if (repeated) return fail('invalid_request', `the parameter ${repeated} is repeated`);
  if (params.get('response_type') !== 'code') {
    return fail(
      'unsupported_response_type',
      'only the authorization code flow (response_type=code) is supported',
    );
  }
  const challenge = params.get('code_challenge');
  if (!challenge || params.get('code_challenge_method') !== 'S256') {
    return fail('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256');
  }
  if (!CODE_CHALLENGE.test(challenge))
    return fail('invalid_request', 'code_challenge must be 43 base64url characters');
  const resource = resourceOf(base, params.get('resource'));
  if (!resource) {
    return fail(
      'invalid_target',
      `resource must be ${resourceUrl(base, 'mcp')} or ${resourceUrl(base, 'api')}`,
    );
  }
  const scopes = requestedScopes(params.get('scope') ?? undefined, client, resource, catalogue);
  if (!Array.isArray(scopes)) return fail('invalid_scope', scopes.error);

  const existing = cookieOf(request.raw, CSRF_COOKIE);
  const csrf = existing && RANDOM_VALUE.test(existing) ? existing : randomValue();
  const handle = randomValue();
  const db = services.db.system;
  await db.delete(oauthPendingRequests).where(lt(oauthPendingRequests.expiresAt, now));
  await db.insert(oauthPendingRequests).values({
    id: newId(now),
    handleHash: hashToken(handle),
    csrfHash: hashToken(csrf),
    clientRef: client.id,
    redirectUri,
    state,
    codeChallenge: challenge,
    resource,
    scopes,
    expiresAt: new Date(now.getTime() + PENDING_TTL_MS),
    createdAt: now,
  });
  return htmlResponse(signInPage(clientView(client, redirectUri), { action: AUTHORIZE_PATH, handle, csrf }), {
    'set-cookie': csrfCookie(csrf, base),
  });
}

function text(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  return typeof value === 'string' ? value : '';
}

/** POST: the sign-in or the consent of a pending request. */
async function answer(
  request: PublicRequest,
  services: Services,
  catalogue: OauthCatalogue,
): Promise<Response> {
  const now = new Date();
  let body: Record<string, unknown>;
  try {
    body = await request.body({ forms: true });
  } catch (err) {
    if (err instanceof AppError) return page(err.status, 'The form could not be read.');
    throw err;
  }
  const handle = text(body, 'handle');
  const csrf = text(body, 'csrf');
  const db = services.db.system;
  const [pending] = RANDOM_VALUE.test(handle)
    ? await db
        .select()
        .from(oauthPendingRequests)
        .where(eq(oauthPendingRequests.handleHash, hashToken(handle)))
    : [];
  if (!pending || pending.expiresAt <= now) {
    return page(400, 'This authorization page has expired or was already answered.');
  }
  const cookie = cookieOf(request.raw, CSRF_COOKIE) ?? '';
  if (!cookie || !safeEqual(csrf, cookie) || !safeEqual(hashToken(cookie), pending.csrfHash)) {
    return page(403, 'The form did not come from this browser session (CSRF check failed).');
  }
  const [client] = await db
    .select()
    .from(oauthClients)
    .where(eq(oauthClients.id, pending.clientRef))
    .limit(1);
  if (!client) return page(400, 'This client no longer exists.');
  const view = clientView(client, pending.redirectUri);
  const step = text(body, 'step');
  if (step === 'signin')
    return signIn(request, services, catalogue, { pending, client, view, body, handle, csrf });
  if (step === 'consent' && pending.userId) {
    return consent(
      services,
      catalogue,
      { pending, client, view, body, handle, csrf, userId: pending.userId },
      now,
    );
  }
  return page(400, 'Sign in first.');
}

interface Step {
  pending: PendingRow;
  client: ClientRow;
  view: ClientView;
  body: Record<string, unknown>;
  handle: string;
  csrf: string;
}

async function signIn(
  request: PublicRequest,
  services: Services,
  catalogue: OauthCatalogue,
  step: Step,
): Promise<Response> {
  const email = text(step.body, 'email');
  const again = (status: number, error: string) =>
    htmlResponse(
      signInPage(
        step.view,
        { action: AUTHORIZE_PATH, handle: step.handle, csrf: step.csrf, email, error },
        status,
      ),
    );
  // The same per-IP budget as POST /api/v1/auth/login: password guessing stops here too.
  if (services.rateLimits) {
    const outcome = await services.rateLimits.consume('auth', `ip:${request.ip}`);
    if (!outcome.allowed) return again(429, 'Too many sign-in attempts. Wait a minute and try again.');
  }
  let userId: string;
  let orgId: string;
  try {
    const { user } = await verifyCredentials(services, { email, password: text(step.body, 'password') });
    userId = user.id;
    orgId = user.orgId;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.code === 'organization_inactive') return again(403, 'Your organization is inactive.');
    return again(401, 'The email or password is not right.');
  }
  if (step.client.orgId !== null && step.client.orgId !== orgId) {
    return page(403, 'This app is registered by another organization; it can only be used by its members.');
  }
  await services.db.system
    .update(oauthPendingRequests)
    .set({ userId })
    .where(eq(oauthPendingRequests.id, step.pending.id));
  return consentResponse(services, catalogue, step, userId);
}

async function consentResponse(
  services: Services,
  catalogue: OauthCatalogue,
  step: Step,
  userId: string,
  error?: string,
): Promise<Response> {
  const [who] = await services.db.system
    .select({ email: users.email, org: organizations.name })
    .from(users)
    .innerJoin(organizations, eq(organizations.id, users.orgId))
    .where(eq(users.id, userId))
    .limit(1);
  if (!who) return page(400, 'Sign in again.');
  const resource = step.pending.resource === 'mcp' ? 'mcp' : 'api';
  const scopes: ConsentChoice[] = step.pending.scopes.map((s) => ({
    name: s,
    label: scopeLabel(s, catalogue.scopeLabels),
    checked: true,
  }));
  const toolsets: ConsentChoice[] =
    resource === 'mcp'
      ? [...catalogue.toolsets].map(([name, description]) => ({
          name,
          label: description,
          checked: name === 'core',
        }))
      : [];
  return htmlResponse(
    consentPage(
      step.view,
      {
        action: AUTHORIZE_PATH,
        handle: step.handle,
        csrf: step.csrf,
        organization: who.org,
        user: who.email,
        resource: resourceUrl(services.config.publicBaseUrl, resource),
        scopes,
        toolsets,
        ...(error !== undefined && { error }),
      },
      error ? 400 : 200,
    ),
  );
}

async function consent(
  services: Services,
  catalogue: OauthCatalogue,
  step: Step & { userId: string },
  now: Date,
): Promise<Response> {
  const { pending, client } = step;
  const base = services.config.publicBaseUrl;
  const db = services.db.system;
  const decision = text(step.body, 'decision');
  if (decision !== 'allow') {
    await db.delete(oauthPendingRequests).where(eq(oauthPendingRequests.id, pending.id));
    return redirectBack(
      pending.redirectUri,
      { error: 'access_denied', error_description: 'the person denied the request' },
      pending.state,
      base,
    );
  }
  // Only what the request asked for can be granted: a box for anything else is ignored.
  const scopes = pending.scopes.filter((s) => step.body[`scope:${s}`] === 'on');
  if (scopes.length === 0) {
    return consentResponse(
      services,
      catalogue,
      step,
      step.userId,
      'Choose at least one permission, or Deny.',
    );
  }
  const toolsets =
    pending.resource === 'mcp'
      ? [...catalogue.toolsets.keys()].filter((n) => step.body[`toolset:${n}`] === 'on')
      : [];
  const [user] = await db
    .select({
      orgId: users.orgId,
      status: users.status,
      deletedAt: users.deletedAt,
      orgStatus: organizations.status,
    })
    .from(users)
    .innerJoin(organizations, eq(organizations.id, users.orgId))
    .where(eq(users.id, step.userId))
    .limit(1);
  if (user?.status !== 'active' || user.deletedAt !== null || user.orgStatus !== 'active') {
    return page(403, 'This account cannot authorize apps now.');
  }
  const code = randomValue();
  // One transaction, and the pending row deleted in it: a second Allow finds nothing to answer.
  const issued = await services.db.transaction(async (tx) => {
    const gone = await tx
      .delete(oauthPendingRequests)
      .where(and(eq(oauthPendingRequests.id, pending.id), eq(oauthPendingRequests.userId, step.userId)))
      .returning({ id: oauthPendingRequests.id });
    if (gone.length === 0) return false;
    const [installation] = await tx
      .insert(oauthInstallations)
      .values({
        id: newId(now),
        orgId: user.orgId,
        userId: step.userId,
        clientRef: client.id,
        scopes,
        toolsets,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoUpdate({
        target: [oauthInstallations.clientRef, oauthInstallations.userId],
        set: { scopes, toolsets, updatedAt: now },
      })
      .returning({ id: oauthInstallations.id });
    if (!installation) throw new Error('upsert returned no installation');
    await tx.insert(oauthCodes).values({
      id: newId(now),
      orgId: user.orgId,
      codeHash: hashToken(code),
      installationId: installation.id,
      clientRef: client.id,
      redirectUri: pending.redirectUri,
      codeChallenge: pending.codeChallenge,
      resource: pending.resource,
      scopes,
      toolsets,
      expiresAt: new Date(now.getTime() + CODE_TTL_SECONDS * 1000),
      createdAt: now,
    });
    await tx.update(oauthClients).set({ lastUsedAt: now }).where(eq(oauthClients.id, client.id));
    return true;
  });
  if (!issued) return page(400, 'This authorization page has expired or was already answered.');
  return redirectBack(pending.redirectUri, { code }, pending.state, base);
}
