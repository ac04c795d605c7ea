// Locks in API keys over REST: one-time plain tokens, hash-only storage, labels, scopes, MCP toolsets,
// updates, revocation and rotation.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { apiKeys } from '../../core/db/schema.ts';
import {
  type ApiKey,
  type Caller,
  createApiKey,
  parseExact,
  readError,
  readOutput,
  type TestContext,
  TOOL,
  test,
} from '../fixtures/index.ts';
import { bearer, ERAS, serveMcp } from '../mcp-clients.ts';

const DEFAULT_SCOPES = [
  'read:leads',
  'write:leads',
  'read:contacts',
  'write:contacts',
  'read:opportunities',
  'write:opportunities',
  'read:invoices',
  'write:invoices',
  'read:proposals',
  'write:proposals',
  'read:projects',
  'write:projects',
];

let labelSeq = 0;
/** POST /settings/api-keys with a fresh label unless the body gives one: the answer, unread (createApiKey when it must succeed). */
async function postKey(t: TestContext, as: Caller, body: Record<string, unknown> = {}): Promise<Response> {
  return t.request('POST', '/api/v1/settings/api-keys', {
    token: as.token,
    body: { label: `key ${labelSeq++}`, ...body },
  });
}

async function listKeys(t: TestContext, token: string): Promise<ApiKey[]> {
  const res = await t.request('GET', '/api/v1/settings/api-keys', { token });
  expect(res.status).toBe(200);
  return (await readOutput(res, TOOL.list_api_keys)).keys;
}

const me = (t: TestContext, token: string) => t.request('GET', '/api/v1/me', { token });

describe('create_api_key', () => {
  test('returns the key record and a one-time pat_ token whose prefix is recorded', async ({ t, org }) => {
    const body = await createApiKey(t, org, { label: '  CI deploy  ' });
    expect(body.plain_token).toMatch(/^pat_[0-9a-f]{64}$/);
    expect(body.key.token_prefix).toBe(body.plain_token.slice(0, 8));
    expect(body.key.id).toMatch(/^[0-9a-f]{24}$/);
    expect(body.key.label).toBe('CI deploy');
    expect(body.key.last_used_at).toBeNull();
    expect(body.key.revoked_at).toBeNull();
    expect(body.key.toolsets).toEqual([]);
    expect(Object.keys(body.key).sort()).toEqual(
      [
        'created_at',
        'id',
        'label',
        'last_used_at',
        'revoked_at',
        'scopes',
        'token_prefix',
        'toolsets',
        'updated_at',
      ].sort(),
    );

    const whoami = await me(t, body.plain_token);
    expect(whoami.status).toBe(200);
    expect(await readOutput(whoami, TOOL.get_me)).toMatchObject({
      token_kind: 'pat',
      user: { _id: org.ownerId },
    });
  });

  test('gives exactly the default scopes when scopes are omitted or empty, never mcp:*', async ({
    t,
    org,
  }) => {
    const omitted = await createApiKey(t, org);
    expect(omitted.key.scopes).toEqual(DEFAULT_SCOPES);
    const empty = await createApiKey(t, org, { scopes: [] });
    expect(empty.key.scopes).toEqual(DEFAULT_SCOPES);
  });

  test('stores explicit scopes as given, without duplicates', async ({ t, org }) => {
    const body = await createApiKey(t, org, { scopes: ['mcp:read', 'write:users', 'mcp:read'] });
    expect(body.key.scopes).toEqual(['mcp:read', 'write:users']);
    expect(body).not.toHaveProperty('warnings');
  });

  test('stores a misspelt scope as given (201), lists it, names it in warnings, and it grants nothing', async ({
    t,
    org,
  }) => {
    const misspelt = await postKey(t, org, { scopes: ['read:contacts', 'raed:leads'] });
    expect(misspelt.status).toBe(201);
    const body = await readOutput(misspelt, TOOL.create_api_key, 201);
    expect(body.key.scopes).toEqual(['read:contacts', 'raed:leads']);
    expect(body.warnings).toHaveLength(1);
    expect(body.warnings?.[0]).toContain('"raed:leads"');
    expect((await listKeys(t, org.token)).find((k) => k.id === body.key.id)?.scopes).toEqual([
      'read:contacts',
      'raed:leads',
    ]);

    // The key reads contacts, and the typo did not grant the scope it was meant to be.
    expect((await t.request('GET', '/api/v1/contacts', { token: body.plain_token })).status).toBe(200);
    const leads = await t.request('GET', '/api/v1/leads', { token: body.plain_token });
    expect(await readError(leads, 403)).toMatchObject({
      code: 'scope_missing',
      required_scope: 'read:leads',
    });
  });

  test('lets a narrow token store an unknown scope, but never a known scope it lacks', async ({ t, org }) => {
    const narrow = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:settings']);
    const typo = await postKey(t, narrow, { scopes: ['read:leads', 'write:lead'] });
    expect(typo.status).toBe(201);
    const created = await readOutput(typo, TOOL.create_api_key, 201);
    expect(created.key.scopes).toEqual(['read:leads', 'write:lead']);
    expect(created.warnings?.[0]).toContain('"write:lead"');

    const beyond = await postKey(t, narrow, { scopes: ['write:lead', 'write:leads'] });
    expect((await readError(beyond, 403)).required_scope).toBe('write:leads');

    // Rotation asks the same: the unknown scope is not a scope the rotating token must hold.
    const rotate = await t.request('POST', `/api/v1/settings/api-keys/${created.key.id}/rotate`, {
      token: narrow.token,
    });
    expect(rotate.status).toBe(201);
  });

  test('answers the same over MCP: create_api_key stores the unknown scope and warns', async ({ t, org }) => {
    const { url, stop } = await serveMcp(t);
    const era = ERAS[0];
    if (!era) throw new Error('no MCP client era');
    const client = await era.connect(url, { ...bearer(org.token), 'X-MCP-Toolsets': 'settings' });
    try {
      const result = await client.callTool('create_api_key', { label: 'mcp typo', scopes: ['mcp:raed'] });
      expect(result.isError).toBeFalsy();
      const body = TOOL.create_api_key.output.parse(result.structuredContent);
      expect(body.key.scopes).toEqual(['mcp:raed']);
      expect(body.warnings?.[0]).toContain('"mcp:raed"');
    } finally {
      await client.close();
      await stop();
    }
  });

  test('stores only the SHA-256 of the token, never the token itself', async ({ t, org }) => {
    const body = await createApiKey(t, org);
    const [row] = await t.services.db.system.select().from(apiKeys).where(eq(apiKeys.id, body.key.id));
    expect(row).toBeDefined();
    expect(row?.tokenHash).toBe(createHash('sha256').update(body.plain_token).digest('hex'));
    for (const value of Object.values(row ?? {})) {
      expect(JSON.stringify(value ?? null)).not.toContain(body.plain_token.slice(4));
    }
  });

  test('validates the label (1-100 characters after trimming) and the scopes', async ({ t, org }) => {
    for (const label of ['', '   ', 'x'.repeat(101)]) {
      const res = await t.request('POST', '/api/v1/settings/api-keys', { token: org.token, body: { label } });
      expect(res.status).toBe(400);
      const body = await readError(res, 400);
      expect(body.error).toBe('Validation failed');
      expect(body.details?.map((d) => d.field)).toContain('label');
    }
    await createApiKey(t, org, { label: 'y'.repeat(100) });

    const missing = await t.request('POST', '/api/v1/settings/api-keys', { token: org.token, body: {} });
    expect(missing.status).toBe(400);

    const tooMany = await postKey(t, org, { scopes: Array.from({ length: 51 }, () => 'read:leads') });
    expect(tooMany.status).toBe(400);
    expect((await readError(tooMany, 400)).details?.[0]?.field).toBe('scopes');

    const blank = await postKey(t, org, { scopes: ['read:leads', ''] });
    expect(blank.status).toBe(400);
    expect((await readError(blank, 400)).details?.[0]?.field).toBe('scopes.1');

    const tooLong = await postKey(t, org, { scopes: ['z'.repeat(101)] });
    expect(tooLong.status).toBe(400);

    const unknown = await postKey(t, org, { expires_at: '2030-01-01' });
    expect(unknown.status).toBe(400);
  });

  test("answers 409 for a label already used by one of the caller's keys, revoked ones included", async ({
    t,
    org,
  }) => {
    const first = await createApiKey(t, org, { label: 'reserved' });
    const again = await postKey(t, org, { label: 'reserved' });
    expect(again.status).toBe(409);
    const conflict = await readError(again, 409);
    expect(conflict.details?.[0]?.field).toBe('label');

    const revoke = await t.request('DELETE', `/api/v1/settings/api-keys/${first.key.id}`, {
      token: org.token,
    });
    expect(revoke.status).toBe(200);
    const afterRevoke = await postKey(t, org, { label: 'reserved' });
    expect(afterRevoke.status).toBe(409);

    // Labels are per user: a colleague may use the same one.
    const colleague = await t.createUser(org.orgId, 'member');
    await createApiKey(t, colleague, { label: 'reserved' });
  });

  test('lets a token only create keys within its own scopes', async ({ t, org }) => {
    const narrow = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'mcp:read', 'write:settings']);
    const within = await createApiKey(t, narrow, { scopes: ['read:leads'] });
    expect(within.key.scopes).toEqual(['read:leads']);

    const beyond = await postKey(t, narrow, { scopes: ['read:leads', 'write:leads'] });
    expect(beyond.status).toBe(403);
    expect(await readError(beyond, 403)).toMatchObject({
      error: 'Token lacks required scope: write:leads',
      code: 'scope_missing',
      required_scope: 'write:leads',
    });

    // The defaults count as requested scopes too.
    const defaults = await postKey(t, narrow);
    expect(defaults.status).toBe(403);
    expect((await readError(defaults, 403)).required_scope).toBe('write:leads');

    // A session is not scope-limited.
    await createApiKey(t, org, { scopes: ['mcp:write'] });
  });
});

describe('toolsets on create', () => {
  test('stores known toolsets without duplicates and refuses unknown ones with 400', async ({ t, org }) => {
    const body = await createApiKey(t, org, { toolsets: ['admin', 'core', 'admin'] });
    expect(body.key.toolsets).toEqual(['admin', 'core']);
    expect((await listKeys(t, org.token)).find((k) => k.id === body.key.id)?.toolsets).toEqual([
      'admin',
      'core',
    ]);
    const [row] = await t.services.db.system.select().from(apiKeys).where(eq(apiKeys.id, body.key.id));
    expect(row?.toolsets).toEqual(['admin', 'core']);

    for (const toolsets of [['core', 'crm'], ['all'], 'core']) {
      const bad = await postKey(t, org, { toolsets });
      expect(bad.status, JSON.stringify(toolsets)).toBe(400);
      const error = await readError(bad, 400);
      expect(error.code).toBe('validation_failed');
      expect(error.details?.[0]?.field).toMatch(/^toolsets/);
    }
    const unknown = await readError(await postKey(t, org, { toolsets: ['crm'] }), 400);
    expect(unknown.details?.[0]?.message).toContain('core');
  });
});

describe('update_api_key', () => {
  const patch = (t: TestContext, token: string, id: string, body: unknown) =>
    t.request('PATCH', `/api/v1/settings/api-keys/${id}`, { token, body });

  test('changes the label and toolsets, keeps the token, and bumps updated_at only on a change', async ({
    t,
    org,
  }) => {
    const created = await createApiKey(t, org, { scopes: ['mcp:read'] });
    await new Promise((r) => setTimeout(r, 5));

    const res = await patch(t, org.token, created.key.id, {
      label: '  renamed  ',
      toolsets: ['settings', 'core'],
    });
    expect(res.status).toBe(200);
    const updated = (await readOutput(res, TOOL.update_api_key)).key;
    expect(updated).toMatchObject({
      id: created.key.id,
      label: 'renamed',
      toolsets: ['settings', 'core'],
      scopes: ['mcp:read'],
      token_prefix: created.key.token_prefix,
      created_at: created.key.created_at,
    });
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(created.key.updated_at));
    expect(Object.keys(updated)).not.toContain('plain_token');

    const same = await patch(t, org.token, created.key.id, {
      label: 'renamed',
      toolsets: ['settings', 'core'],
    });
    expect((await readOutput(same, TOOL.update_api_key)).key).toEqual(updated);
    const nothing = await patch(t, org.token, created.key.id, {});
    expect((await readOutput(nothing, TOOL.update_api_key)).key).toEqual(updated);

    const cleared = await patch(t, org.token, created.key.id, { toolsets: [] });
    expect((await readOutput(cleared, TOOL.update_api_key)).key).toMatchObject({
      label: 'renamed',
      toolsets: [],
    });
    expect((await me(t, created.plain_token)).status).toBe(200);
  });

  test('validates input: unknown toolsets, bad labels and unknown fields are 400', async ({ t, org }) => {
    const body = await createApiKey(t, org);
    for (const input of [{ toolsets: ['nope'] }, { label: ' ' }, { scopes: ['mcp:write'] }, { token: 'x' }]) {
      const res = await patch(t, org.token, body.key.id, input);
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect((await readError(res, 400)).code).toBe('validation_failed');
    }
    expect((await patch(t, org.token, 'not-an-id', { label: 'x' })).status).toBe(400);
  });

  test("answers 409 for a label used by another of the caller's keys, revoked ones included", async ({
    t,
    org,
  }) => {
    await createApiKey(t, org, { label: 'taken for update' });
    const revoked = await createApiKey(t, org, { label: 'revoked for update' });
    await t.request('DELETE', `/api/v1/settings/api-keys/${revoked.key.id}`, { token: org.token });
    const body = await createApiKey(t, org);
    for (const label of ['taken for update', 'revoked for update']) {
      const res = await patch(t, org.token, body.key.id, { label });
      expect(res.status, label).toBe(409);
      expect((await readError(res, 409)).details?.[0]).toMatchObject({ field: 'label', code: 'duplicate' });
    }
    expect((await listKeys(t, org.token)).find((k) => k.id === body.key.id)?.label).toBe(body.key.label);
  });

  test("refuses a revoked key and answers 404 for another user's or organization's key", async ({
    t,
    org,
  }) => {
    const body = await createApiKey(t, org);
    await t.request('DELETE', `/api/v1/settings/api-keys/${body.key.id}`, { token: org.token });
    const revoked = await patch(t, org.token, body.key.id, { label: 'after revocation' });
    expect(revoked.status).toBe(400);
    expect((await readError(revoked, 400)).code).toBe('invalid_operation');

    const colleague = await t.createUser(org.orgId, 'admin');
    const theirs = await createApiKey(t, colleague);
    const other = await t.createOrg();
    const foreign = await createApiKey(t, other);
    for (const id of [theirs.key.id, foreign.key.id]) {
      const res = await patch(t, org.token, id, { toolsets: ['admin'] });
      expect(res.status).toBe(404);
      expect((await readError(res, 404)).error).toBe('Not found');
    }
    const [row] = await t.services.db.system.select().from(apiKeys).where(eq(apiKeys.id, theirs.key.id));
    expect(row?.toolsets).toEqual([]);
  });

  test('lets every role update its own keys, and a key update itself', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    // write:settings is what lets a key manage keys; it is never a default.
    const body = await createApiKey(t, viewer, { scopes: ['read:leads', 'write:settings'] });
    const res = await patch(t, viewer.token, body.key.id, { toolsets: ['core'] });
    expect(res.status).toBe(200);
    const self = await patch(t, body.plain_token, body.key.id, { label: 'self-renamed' });
    expect(self.status).toBe(200);
    expect((await readOutput(self, TOOL.update_api_key)).key).toMatchObject({
      label: 'self-renamed',
      toolsets: ['core'],
    });
  });
});

describe('list_api_keys', () => {
  test("shows the caller's own keys, newest first, revoked included, without any token or hash", async ({
    t,
    org,
  }) => {
    const user = await t.createUser(org.orgId, 'viewer');
    const a = await createApiKey(t, user, { label: 'alpha' });
    const b = await createApiKey(t, user, { label: 'beta' });
    await t.request('DELETE', `/api/v1/settings/api-keys/${a.key.id}`, { token: user.token });

    const res = await t.request('GET', '/api/v1/settings/api-keys', { token: user.token });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(a.plain_token);
    expect(text).not.toContain(b.plain_token);
    expect(text).not.toContain(createHash('sha256').update(a.plain_token).digest('hex'));
    const keys = parseExact(JSON.parse(text), TOOL.list_api_keys.output).keys;
    expect(keys.map((k) => k.label)).toEqual(['beta', 'alpha']);
    expect(keys[1]?.revoked_at).not.toBeNull();
    expect(keys[0]?.revoked_at).toBeNull();
    for (const key of keys) expect(Object.keys(key)).not.toContain('plain_token');

    const ownerKeys = await listKeys(t, org.token);
    expect(ownerKeys.map((k) => k.id)).not.toContain(a.key.id);
  });

  test('reports last_used_at as null before the first use and set after a request with the key', async ({
    t,
    org,
  }) => {
    const body = await createApiKey(t, org);
    const before = (await listKeys(t, org.token)).find((k) => k.id === body.key.id);
    expect(before?.last_used_at).toBeNull();

    const start = Date.now();
    expect((await me(t, body.plain_token)).status).toBe(200);
    const after = (await listKeys(t, org.token)).find((k) => k.id === body.key.id);
    expect(after?.last_used_at).not.toBeNull();
    expect(Date.parse(after?.last_used_at ?? '')).toBeGreaterThanOrEqual(start - 1000);

    // Still reported once the batched uses have been written.
    await t.services.usage.flush();
    const flushed = (await listKeys(t, org.token)).find((k) => k.id === body.key.id);
    expect(flushed?.last_used_at).toBe(after?.last_used_at);
  });
});

describe('revoke_api_key', () => {
  test('revokes at once: the token gets 401, a repeat answers the same message', async ({ t, org }) => {
    const body = await createApiKey(t, org);
    expect((await me(t, body.plain_token)).status).toBe(200);

    const res = await t.request('DELETE', `/api/v1/settings/api-keys/${body.key.id}`, { token: org.token });
    expect(res.status).toBe(200);
    const first = await readOutput(res, TOOL.revoke_api_key);
    expect(first.message).toMatch(/revoked/i);

    const refused = await me(t, body.plain_token);
    expect(refused.status).toBe(401);
    expect(await readError(refused, 401)).toEqual({
      error: 'Invalid or expired token',
      code: 'invalid_token',
    });

    const again = await t.request('DELETE', `/api/v1/settings/api-keys/${body.key.id}`, { token: org.token });
    expect(again.status).toBe(200);
    expect(await readOutput(again, TOOL.revoke_api_key)).toEqual(first);
  });

  test('lets a key revoke itself', async ({ t, org }) => {
    const body = await createApiKey(t, org, { scopes: ['write:settings'] });
    const res = await t.request('DELETE', `/api/v1/settings/api-keys/${body.key.id}`, {
      token: body.plain_token,
    });
    expect(res.status).toBe(200);
    expect((await me(t, body.plain_token)).status).toBe(401);
  });
});

describe('rotate_api_key', () => {
  test('keeps id, label and scopes, issues a new token and kills the old one', async ({ t, org }) => {
    const created = await createApiKey(t, org, { scopes: ['read:leads', 'mcp:read'] });
    await new Promise((r) => setTimeout(r, 5));
    const res = await t.request('POST', `/api/v1/settings/api-keys/${created.key.id}/rotate`, {
      token: org.token,
    });
    expect(res.status).toBe(201);
    const rotated = await readOutput(res, TOOL.rotate_api_key, 201);
    expect(rotated.key).toMatchObject({
      id: created.key.id,
      label: created.key.label,
      scopes: ['read:leads', 'mcp:read'],
      created_at: created.key.created_at,
    });
    expect(rotated.plain_token).toMatch(/^pat_[0-9a-f]{64}$/);
    expect(rotated.plain_token).not.toBe(created.plain_token);
    expect(rotated.key.token_prefix).toBe(rotated.plain_token.slice(0, 8));
    expect(Date.parse(rotated.key.updated_at)).toBeGreaterThan(Date.parse(created.key.updated_at));

    const old = await me(t, created.plain_token);
    expect(old.status).toBe(401);
    expect((await readError(old, 401)).error).toBe('Invalid or expired token');
    expect((await me(t, rotated.plain_token)).status).toBe(200);

    const [row] = await t.services.db.system.select().from(apiKeys).where(eq(apiKeys.id, created.key.id));
    expect(row?.tokenHash).toBe(createHash('sha256').update(rotated.plain_token).digest('hex'));
  });

  test('refuses to rotate a revoked key', async ({ t, org }) => {
    const body = await createApiKey(t, org);
    await t.request('DELETE', `/api/v1/settings/api-keys/${body.key.id}`, { token: org.token });
    const res = await t.request('POST', `/api/v1/settings/api-keys/${body.key.id}/rotate`, {
      token: org.token,
    });
    expect(res.status).toBe(400);
    expect((await readError(res, 400)).code).toBe('invalid_operation');
  });

  test('does not let a narrow token rotate a broader key of the same user', async ({ t, org }) => {
    const broad = await createApiKey(t, org);
    const narrow = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:settings']);
    const res = await t.request('POST', `/api/v1/settings/api-keys/${broad.key.id}/rotate`, {
      token: narrow.token,
    });
    expect(res.status).toBe(403);
    expect((await readError(res, 403)).code).toBe('scope_missing');
    expect((await me(t, broad.plain_token)).status).toBe(200);
  });
});

describe('keys of others', () => {
  test("answers 404 for another user's key and another organization's key, 400 for a malformed id", async ({
    t,
    org,
  }) => {
    const colleague = await t.createUser(org.orgId, 'admin');
    const theirs = await createApiKey(t, colleague);
    const other = await t.createOrg();
    const foreign = await createApiKey(t, other);

    for (const id of [theirs.key.id, foreign.key.id, '0123456789abcdef01234567']) {
      const revoke = await t.request('DELETE', `/api/v1/settings/api-keys/${id}`, { token: org.token });
      expect(revoke.status).toBe(404);
      expect((await readError(revoke, 404)).error).toBe('Not found');
      const rotate = await t.request('POST', `/api/v1/settings/api-keys/${id}/rotate`, { token: org.token });
      expect(rotate.status).toBe(404);
    }
    expect((await me(t, theirs.plain_token)).status).toBe(200);
    expect((await me(t, foreign.plain_token)).status).toBe(200);
    expect((await listKeys(t, org.token)).map((k) => k.id)).not.toContain(foreign.key.id);

    const malformed = await t.request('DELETE', '/api/v1/settings/api-keys/not-an-id', { token: org.token });
    expect(malformed.status).toBe(400);
  });

  test('requires authentication', async ({ t }) => {
    const res = await t.request('GET', '/api/v1/settings/api-keys');
    expect(res.status).toBe(401);
  });
});
