// The clients the authorization server knows, by their client_id: a registered app or a dynamic
// registration (`oc_` + 32 hex, a row of oauth_clients), or a Client ID Metadata Document (an
// https URL whose JSON names the client and its redirect URIs). A document is fetched through the
// SSRF guard (core/network-guard.ts: every address the name resolves to must be public, and the
// connection goes to the checked address), at most 5 KB in 3 seconds, without following
// redirects, and its copy is kept in oauth_clients for as long as its Cache-Control says (between
// 5 minutes and a day), so every node reads the same copy.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { eq } from 'drizzle-orm';
import { Agent, fetch as undiciFetch } from 'undici';
import { z } from 'zod';
import { hashToken, safeEqual } from '../../core/auth/tokens.ts';
import { newId } from '../../core/ids.ts';
import { resolvePublicAddress } from '../../core/network-guard.ts';
import type { Services } from '../../core/services.ts';
import { oauthSettings } from './settings.ts';
import { oauthClients } from './tables.ts';

export type ClientRow = typeof oauthClients.$inferSelect;

const METADATA_MAX_BYTES = 5 * 1024;
const METADATA_TIMEOUT_MS = 3_000;
const METADATA_MIN_CACHE_SECONDS = 5 * 60;
const METADATA_MAX_CACHE_SECONDS = 24 * 60 * 60;

/** A client that cannot be used; the message is shown on the authorization page, never redirected. */
export class ClientProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientProblem';
  }
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Why a redirect URI cannot be registered, or null: an absolute https URL without a fragment or
 * credentials, or an http URL on a loopback host (native apps, RFC 8252 section 7.3).
 */
function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.hash || uri.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname)) return null;
  return 'must be https, or http on a loopback host (localhost, 127.0.0.1, [::1])';
}

/** The zod field of a redirect URI list, shared by apps, registrations and metadata documents. */
export const redirectUrisField = z
  .array(
    z
      .string()
      .max(2000)
      .superRefine((uri, ctx) => {
        const problem = redirectUriProblem(uri);
        if (problem) ctx.addIssue({ code: 'custom', message: `redirect URI ${problem}` });
      })
      .describe('A redirect URI: https, or http on a loopback host; matched exactly'),
  )
  .min(1)
  .max(10);

/** A new client_id and secret for a registered app or a dynamic registration. */
export function newClientCredentials(): { clientId: string; secret: string } {
  return {
    clientId: `oc_${randomBytes(16).toString('hex')}`,
    secret: `ocs_${randomBytes(32).toString('hex')}`,
  };
}

export function secretMatches(row: ClientRow, secret: string): boolean {
  return row.secretHash !== null && safeEqual(row.secretHash, hashToken(secret));
}

/** Whether a client_id names a metadata document: an https URL with a path (http too when allowed). */
function metadataUrl(clientId: string, allowPrivate: boolean): URL | null {
  if (!/^https?:\/\//i.test(clientId)) return null;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new ClientProblem('The client_id is not a valid URL.');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    throw new ClientProblem('A client metadata document must be served over https.');
  }
  if (url.pathname === '/' || url.hash || url.username || url.password || url.href !== clientId) {
    throw new ClientProblem(
      'A client_id URL must have a path, no fragment and no credentials, and be written in its normal form.',
    );
  }
  return url;
}

const metadataDocument = z.looseObject({
  client_id: z.string(),
  client_name: z.string().trim().min(1).max(200).optional(),
  redirect_uris: redirectUrisField,
  logo_uri: z.string().url().max(2000).optional(),
  client_uri: z.string().url().max(2000).optional(),
  token_endpoint_auth_method: z.string().optional(),
});

/** Seconds a document may be cached, from its Cache-Control, within the floor and the ceiling. */
function cacheSeconds(cacheControl: string | null): number {
  const maxAge = cacheControl ? /(?:^|,)\s*max-age=(\d+)/i.exec(cacheControl) : null;
  const noStore = cacheControl ? /(?:^|,)\s*(no-store|no-cache)\b/i.test(cacheControl) : false;
  const asked = noStore ? 0 : maxAge?.[1] !== undefined ? Number(maxAge[1]) : METADATA_MIN_CACHE_SECONDS;
  return Math.min(METADATA_MAX_CACHE_SECONDS, Math.max(METADATA_MIN_CACHE_SECONDS, asked));
}

/** A dispatcher connecting only to `address` (already checked), keeping the name for TLS. */
function pinnedAgent(address: string, family: number): Agent {
  return new Agent({
    connect: {
      timeout: METADATA_TIMEOUT_MS,
      lookup: (_hostname, options, callback) => {
        if (options.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      },
    },
    headersTimeout: METADATA_TIMEOUT_MS,
    bodyTimeout: METADATA_TIMEOUT_MS,
  });
}

async function readLimited(body: AsyncIterable<Uint8Array> | null): Promise<string> {
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Leaving the loop early cancels the body: a document past the limit is not read to its end.
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > METADATA_MAX_BYTES)
      throw new ClientProblem('The client metadata document is larger than 5 KB.');
    chunks.push(chunk);
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
}

/** Fetches and checks a metadata document; every failure is a ClientProblem naming what went wrong. */
async function fetchMetadata(
  url: URL,
  services: Services,
): Promise<{ doc: z.infer<typeof metadataDocument>; seconds: number }> {
  const allowPrivate = oauthSettings.of(services.config).OAUTH_CLIENT_METADATA_ALLOW_PRIVATE;
  let agent: Agent | undefined;
  try {
    if (!allowPrivate) {
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const { address, family } = await resolvePublicAddress(isIP(host) ? host : url.hostname);
      agent = pinnedAgent(address, family);
    }
    const res = await undiciFetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(METADATA_TIMEOUT_MS),
      ...(agent && { dispatcher: agent }),
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new ClientProblem(`The client metadata document answered HTTP ${res.status}.`);
    }
    const text = await readLimited(res.body);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ClientProblem('The client metadata document is not JSON.');
    }
    const parsed = metadataDocument.safeParse(json);
    if (!parsed.success) {
      throw new ClientProblem(
        `The client metadata document is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
      );
    }
    if (parsed.data.client_id !== url.href) {
      throw new ClientProblem('The client metadata document names another client_id than its own URL.');
    }
    const method = parsed.data.token_endpoint_auth_method;
    if (method !== undefined && method !== 'none') {
      throw new ClientProblem(
        `Token endpoint authentication "${method}" is not supported for metadata documents.`,
      );
    }
    return { doc: parsed.data, seconds: cacheSeconds(res.headers.get('cache-control')) };
  } catch (err) {
    if (err instanceof ClientProblem) throw err;
    services.logger.info(
      { err, client_id: url.href },
      'oauth: client metadata document could not be fetched',
    );
    throw new ClientProblem('The client metadata document could not be fetched from an allowed address.');
  } finally {
    await agent?.close();
  }
}

/** The cached copy of a metadata document, fetched again once it has expired. */
async function metadataClient(url: URL, services: Services, now: Date): Promise<ClientRow> {
  const db = services.db.system;
  const [cached] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, url.href)).limit(1);
  if (cached?.metadataExpiresAt && cached.metadataExpiresAt > now) return cached;
  const { doc, seconds } = await fetchMetadata(url, services);
  const values = {
    name: doc.client_name ?? url.host,
    redirectUris: doc.redirect_uris,
    logoUri: doc.logo_uri ?? null,
    clientUri: doc.client_uri ?? null,
    metadataExpiresAt: new Date(now.getTime() + seconds * 1000),
    updatedAt: now,
  };
  const [row] = await db
    .insert(oauthClients)
    .values({ id: newId(now), clientId: url.href, source: 'cimd', orgId: null, scopes: null, ...values })
    .onConflictDoUpdate({ target: oauthClients.clientId, set: values })
    .returning();
  if (!row) throw new Error('upsert returned no client');
  return row;
}

/** The client behind a client_id, or a ClientProblem saying why it cannot be used. */
export async function resolveClient(clientId: string, services: Services, now: Date): Promise<ClientRow> {
  if (clientId.length === 0) throw new ClientProblem('The request names no client_id.');
  if (clientId.length > 2000) throw new ClientProblem('The client_id is too long.');
  const url = metadataUrl(clientId, oauthSettings.of(services.config).OAUTH_CLIENT_METADATA_ALLOW_PRIVATE);
  if (url) return metadataClient(url, services, now);
  const [row] = await services.db.system
    .select()
    .from(oauthClients)
    .where(eq(oauthClients.clientId, clientId))
    .limit(1);
  if (!row || row.source === 'cimd') throw new ClientProblem('This client is not known to this server.');
  return row;
}

/** Where the consent page says the client's name came from. */
export function sourceLabel(row: ClientRow): string {
  if (row.source === 'app') return 'an app registered by your organization';
  if (row.source === 'dcr') return 'self-registered by the app (dynamic client registration); not verified';
  return `the app's metadata document at ${row.clientId}`;
}
