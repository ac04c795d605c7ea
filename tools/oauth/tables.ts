// The oauth area's tables: the clients the authorization server knows (apps an organization
// registered, dynamic registrations, Client ID Metadata Documents cached by URL), the grants a
// person gave them (installations), and the short-lived state of the code flow (pending requests,
// codes) and refresh tokens. Every secret is kept as its SHA-256 hash only. The access tokens are
// the kernel's `oauth_tokens` rows (core/db/schema.ts), which point back at an installation.
import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, id, organizations, orgId, ts, updatedAt, users } from '../../core/db/schema.ts';

/** Where a client's name and redirect URIs come from. */
type ClientSource = 'app' | 'dcr' | 'cimd';

export const oauthClients = pgTable(
  'oauth_clients',
  {
    id: id(),
    /** The organization of a registered app; null for dynamic registrations and metadata documents. */
    orgId: text('org_id').references(() => organizations.id, { onDelete: 'cascade' }),
    /** The public client_id: `oc_` + 32 hex, or the metadata document's https URL. */
    clientId: text('client_id').notNull(),
    source: text('source').$type<ClientSource>().notNull(),
    name: text('name').notNull(),
    redirectUris: text('redirect_uris').array().notNull(),
    /** Scopes the client may ask for; null: any scope the server knows. */
    scopes: text('scopes').array(),
    /** SHA-256 of the client secret; null for public clients. */
    secretHash: text('secret_hash'),
    logoUri: text('logo_uri'),
    clientUri: text('client_uri'),
    createdBy: text('created_by'),
    /** The address a dynamic registration came from (its rate limit and cleanup). */
    registeredIp: text('registered_ip'),
    /** When a code was last issued to it; an anonymous registration never used is removed after 24 h. */
    lastUsedAt: ts('last_used_at'),
    /** When a metadata document's cached copy must be fetched again. */
    metadataExpiresAt: ts('metadata_expires_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('oauth_clients_client_id_uq').on(t.clientId),
    index('oauth_clients_org_idx').on(t.orgId),
  ],
);

/** One grant: a person allowed a client, with the scopes and toolsets they chose. */
export const oauthInstallations = pgTable(
  'oauth_installations',
  {
    id: id(),
    orgId: orgId(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    clientRef: text('client_ref')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    scopes: text('scopes').array().notNull(),
    toolsets: text('toolsets').array().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('oauth_installations_client_user_uq').on(t.clientRef, t.userId),
    index('oauth_installations_org_idx').on(t.orgId),
  ],
);

/**
 * An authorization request between the authorize page and the consent: the validated parameters,
 * the browser's CSRF cookie (hashed) and, once signed in, the person. Found by the hash of the
 * random value the page's forms carry.
 */
export const oauthPendingRequests = pgTable(
  'oauth_pending_requests',
  {
    id: id(),
    handleHash: text('handle_hash').notNull(),
    csrfHash: text('csrf_hash').notNull(),
    clientRef: text('client_ref')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    state: text('state'),
    codeChallenge: text('code_challenge').notNull(),
    resource: text('resource').notNull(),
    scopes: text('scopes').array().notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('oauth_pending_handle_uq').on(t.handleHash)],
);

/** An authorization code: single use, short-lived, bound to client, redirect URI, challenge and resource. */
export const oauthCodes = pgTable(
  'oauth_codes',
  {
    id: id(),
    orgId: orgId(),
    codeHash: text('code_hash').notNull(),
    installationId: text('installation_id')
      .notNull()
      .references(() => oauthInstallations.id, { onDelete: 'cascade' }),
    clientRef: text('client_ref')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    resource: text('resource').notNull(),
    scopes: text('scopes').array().notNull(),
    toolsets: text('toolsets').array().notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('oauth_codes_hash_uq').on(t.codeHash)],
);

/** A refresh token; each use rotates it, and presenting a rotated one revokes its whole family. */
export const oauthRefreshTokens = pgTable(
  'oauth_refresh_tokens',
  {
    id: id(),
    orgId: orgId(),
    tokenHash: text('token_hash').notNull(),
    /** The code the family started from (oauth_tokens.family_id of its access tokens). */
    familyId: text('family_id').notNull(),
    installationId: text('installation_id')
      .notNull()
      .references(() => oauthInstallations.id, { onDelete: 'cascade' }),
    clientRef: text('client_ref')
      .notNull()
      .references(() => oauthClients.id, { onDelete: 'cascade' }),
    resource: text('resource').notNull(),
    scopes: text('scopes').array().notNull(),
    toolsets: text('toolsets').array().notNull(),
    expiresAt: ts('expires_at').notNull(),
    rotatedAt: ts('rotated_at'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('oauth_refresh_hash_uq').on(t.tokenHash),
    index('oauth_refresh_family_idx').on(t.familyId),
    index('oauth_refresh_installation_idx').on(t.installationId),
  ],
);
