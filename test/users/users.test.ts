// Locks in user management over REST: listing, role rules, deactivation and deletion with owned records.
import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { generateOauthToken, generateRefreshToken, hashToken } from '../../core/auth/tokens.ts';
import { apiKeys, oauthTokens, outboxEvents, refreshTokens, users } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import { leads } from '../../tools/leads/tables.ts';
import {
  type Caller,
  createUser,
  fileTest,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { seedLeads } from '../leads/seed.ts';

let seq = 0;

const test = fileTest().extend('admin', { scope: 'file' }, async ({ t, org }) =>
  t.createUser(org.orgId, 'admin'),
);

const email = (tag: string) => `${tag}-${seq++}-${Date.now().toString(36)}@users.test`;

/** POST /users with a valid body but for what `body` overrides (role included): the answer, unread. */
async function postUser(t: TestContext, as: Caller, body: Record<string, unknown>): Promise<Response> {
  return t.request('POST', '/api/v1/users', {
    token: as.token,
    body: { email: email('new'), name: 'New Person', password: 'long enough pw', ...body },
  });
}

/** `n` live leads owned by `ownerId`, then `trashed` more in the trash (straight in the table); the live ones' ids. */
async function insertLeads(
  t: TestContext,
  orgId: string,
  ownerId: string,
  n: number,
  trashed = 0,
): Promise<string[]> {
  const rows = Array.from({ length: n + trashed }, (_, i) => ({
    name: `Lead ${i}`,
    ownerId,
    ...(i >= n ? { deletedAt: new Date(), deletedBy: ownerId } : {}),
  }));
  return (await seedLeads(t, orgId, rows)).slice(0, n);
}

const me = (t: TestContext, token: string) => t.request('GET', '/api/v1/me', { token });

describe('create_user', () => {
  test('lets the owner create users, never returning a password', async ({ t, org }) => {
    const address = email('Mixed.Case');
    const user = await createUser(t, org, { email: address, role: 'admin', name: ' Ada ' });
    expect(user).toMatchObject({
      email: address.toLowerCase(),
      name: 'Ada',
      role: 'admin',
      status: 'active',
      organization_id: org.orgId,
      deactivated_at: null,
    });
    expect(user._id).toMatch(/^[0-9a-f]{24}$/);
    expect(Object.keys(user)).not.toContain('password_hash');
    expect(Object.keys(user)).not.toContain('password');
    const signedIn = await me(t, await t.sessionToken(user._id, org.orgId));
    expect(signedIn.status).toBe(200);
  });

  test('lets an admin create non-admin users but not admins', async ({ t, admin }) => {
    await createUser(t, admin, { email: email('new'), role: 'member' });
    const refused = await postUser(t, admin, { role: 'admin' });
    expect(refused.status).toBe(403);
    expect(await readError(refused, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'users.delete',
    });
  });

  test('never grants the owner role and refuses other roles without users.create', async ({ t, org }) => {
    const owner = await postUser(t, org, { role: 'owner' });
    expect(owner.status).toBe(400);
    expect((await readError(owner, 400)).details?.[0]?.field).toBe('role');

    const member = await t.createUser(org.orgId, 'member');
    const byMember = await postUser(t, member, { role: 'viewer' });
    expect(byMember.status).toBe(403);
    expect((await readError(byMember, 403)).required_permission).toBe('users.create');
  });

  test('validates fields and answers 409 for an email in use', async ({ t, org, admin }) => {
    const bad = await postUser(t, org, { role: 'member', email: 'not-an-email', password: 'short' });
    expect(bad.status).toBe(400);
    const fields = (await readError(bad, 400)).details?.map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['email', 'password']));

    const extra = await postUser(t, org, { role: 'member', status: 'deactivated' });
    expect(extra.status).toBe(400);

    const dup = await postUser(t, org, { role: 'member', email: admin.email.toUpperCase() });
    expect(dup.status).toBe(409);
  });
});

describe('list_users and get_user', () => {
  let o: TestOrg;
  test.beforeAll(async ({ t }) => {
    o = await t.createOrg();
    await createUser(t, o, { role: 'manager', name: 'Zed Manager', email: 'zed@list.test' });
    await createUser(t, o, { role: 'viewer', name: 'Vic_Viewer', email: 'viewer@list.test' });
    const m = await createUser(t, o, { role: 'member', name: 'Mia Member', email: 'mia@list.test' });
    await t.request('POST', `/api/v1/users/${m._id}/deactivate`, { token: o.token });
  });

  test('returns the paged envelope, newest first by default', async ({ t }) => {
    const res = await t.request('GET', '/api/v1/users', { token: o.token });
    expect(res.status).toBe(200);
    const body = await readOutput(res, TOOL.list_users);
    expect(body).toMatchObject({ total: 4, page: 1, limit: 25, totalPages: 1 });
    expect(body.users.map((u) => u.name)).toEqual(['Mia Member', 'Vic_Viewer', 'Zed Manager', 'Owner']);

    const page2 = await readOutput(
      await t.request('GET', '/api/v1/users?limit=3&page=2', { token: o.token }),
      TOOL.list_users,
    );
    expect(page2).toMatchObject({ total: 4, page: 2, limit: 3, totalPages: 2 });
    expect(page2.users.map((u) => u.name)).toEqual(['Owner']);
  });

  test('sorts, filters by role and status, and searches name and email literally', async ({ t }) => {
    const list = async (query: string) => {
      const res = await t.request('GET', `/api/v1/users?${query}`, { token: o.token });
      expect(res.status).toBe(200);
      return (await readOutput(res, TOOL.list_users)).users;
    };
    expect((await list('sort=name')).map((u) => u.name)).toEqual([
      'Mia Member',
      'Owner',
      'Vic_Viewer',
      'Zed Manager',
    ]);
    expect((await list('sort=-email')).map((u) => u.email)[0]).toBe('zed@list.test');
    expect((await list('role=viewer')).map((u) => u.name)).toEqual(['Vic_Viewer']);
    expect((await list('status=deactivated')).map((u) => u.name)).toEqual(['Mia Member']);
    expect((await list('search=MIA')).map((u) => u.name)).toEqual(['Mia Member']);
    expect((await list('search=list.test')).length).toBe(3);
    // `_` and `%` are literal characters, not wildcards.
    expect((await list('search=_')).map((u) => u.name)).toEqual(['Vic_Viewer']);
    expect(await list('search=%25')).toEqual([]);
  });

  test('rejects bad list parameters', async ({ t }) => {
    for (const q of ['limit=101', 'sort=password_hash', 'role=owner2', 'status=gone', 'page=0']) {
      const res = await t.request('GET', `/api/v1/users?${q}`, { token: o.token });
      expect(res.status).toBe(400);
    }
  });

  test('lets every role view users, and returns one user by id', async ({ t }) => {
    const viewer = await t.createUser(o.orgId, 'viewer');
    const res = await t.request('GET', `/api/v1/users/${o.ownerId}`, { token: viewer.token });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.get_user)).user).toMatchObject({ _id: o.ownerId, role: 'owner' });

    expect(
      (await t.request('GET', '/api/v1/users/0123456789abcdef01234567', { token: o.token })).status,
    ).toBe(404);
    expect((await t.request('GET', '/api/v1/users/xyz', { token: o.token })).status).toBe(400);
  });
});

describe('update_user', () => {
  test('changes the name and role within the role rules', async ({ t, org, admin }) => {
    const member = await t.createUser(org.orgId, 'member');
    const rename = await t.request('PUT', `/api/v1/users/${member.userId}`, {
      token: admin.token,
      body: { name: 'Renamed', role: 'manager' },
    });
    expect(rename.status).toBe(200);
    expect((await readOutput(rename, TOOL.update_user)).user).toMatchObject({
      name: 'Renamed',
      role: 'manager',
    });

    const promote = await t.request('PUT', `/api/v1/users/${member.userId}`, {
      token: admin.token,
      body: { role: 'admin' },
    });
    expect(promote.status).toBe(403);
    expect((await readError(promote, 403)).required_permission).toBe('users.delete');

    const byOwner = await t.request('PUT', `/api/v1/users/${member.userId}`, {
      token: org.token,
      body: { role: 'admin' },
    });
    expect(byOwner.status).toBe(200);
    expect((await readOutput(byOwner, TOOL.update_user)).user.role).toBe('admin');

    // An admin may not take the admin role away from another admin either.
    const demote = await t.request('PUT', `/api/v1/users/${member.userId}`, {
      token: admin.token,
      body: { role: 'viewer' },
    });
    expect(demote.status).toBe(403);
  });

  test("never changes the owner's role nor lets anyone change their own", async ({ t, org, admin }) => {
    const owner = await t.request('PUT', `/api/v1/users/${org.ownerId}`, {
      token: admin.token,
      body: { role: 'member' },
    });
    expect(owner.status).toBe(400);
    expect((await readError(owner, 400)).code).toBe('invalid_operation');

    const toOwner = await t.request('PUT', `/api/v1/users/${admin.userId}`, {
      token: org.token,
      body: { role: 'owner' },
    });
    expect(toOwner.status).toBe(400);

    const self = await t.request('PUT', `/api/v1/users/${admin.userId}`, {
      token: admin.token,
      body: { role: 'member' },
    });
    expect(self.status).toBe(400);
    expect((await readError(self, 400)).message).toMatch(/own role/);

    // Sending one's current role is not a change.
    const same = await t.request('PUT', `/api/v1/users/${admin.userId}`, {
      token: admin.token,
      body: { role: 'admin', name: 'Admin Person' },
    });
    expect(same.status).toBe(200);
    expect((await readOutput(same, TOOL.update_user)).user).toMatchObject({
      role: 'admin',
      name: 'Admin Person',
    });
  });

  test('refuses unknown fields and callers without users.edit', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const email = await t.request('PUT', `/api/v1/users/${member.userId}`, {
      token: org.token,
      body: { email: 'x@y.test' },
    });
    expect(email.status).toBe(400);
    const byMember = await t.request('PUT', `/api/v1/users/${member.userId}`, {
      token: member.token,
      body: { name: 'Me' },
    });
    expect(byMember.status).toBe(403);
    expect((await readError(byMember, 403)).required_permission).toBe('users.edit');
  });
});

describe('deactivate_user and reactivate_user', () => {
  test("cuts off the user's session and API keys at once, and reactivation restores them", async ({
    t,
    org,
    admin,
  }) => {
    const member = await t.createUser(org.orgId, 'member');
    const pat = await t.createPat(org.orgId, member.userId, ['read:leads']);
    expect((await me(t, member.token)).status).toBe(200);
    expect((await me(t, pat.token)).status).toBe(200);

    const res = await t.request('POST', `/api/v1/users/${member.userId}/deactivate`, { token: admin.token });
    expect(res.status).toBe(200);
    const deactivated = (await readOutput(res, TOOL.deactivate_user)).user;
    expect(deactivated.status).toBe('deactivated');
    expect(deactivated.deactivated_at).not.toBeNull();

    for (const token of [member.token, pat.token]) {
      const refused = await me(t, token);
      expect(refused.status).toBe(401);
      expect((await readError(refused, 401)).error).toBe('Invalid or expired token');
    }

    const again = await t.request('POST', `/api/v1/users/${member.userId}/deactivate`, {
      token: admin.token,
    });
    expect(again.status).toBe(200);
    expect((await readOutput(again, TOOL.deactivate_user)).user.deactivated_at).toBe(
      deactivated.deactivated_at,
    );

    const back = await t.request('POST', `/api/v1/users/${member.userId}/reactivate`, { token: admin.token });
    expect(back.status).toBe(200);
    expect((await readOutput(back, TOOL.reactivate_user)).user).toMatchObject({
      status: 'active',
      deactivated_at: null,
    });
    expect((await me(t, member.token)).status).toBe(200);
    expect((await me(t, pat.token)).status).toBe(200);

    const twice = await t.request('POST', `/api/v1/users/${member.userId}/reactivate`, {
      token: admin.token,
    });
    expect(twice.status).toBe(200);
  });

  test('refuses to deactivate yourself or the owner, and callers without users.deactivate', async ({
    t,
    org,
    admin,
  }) => {
    const self = await t.request('POST', `/api/v1/users/${admin.userId}/deactivate`, { token: admin.token });
    expect(self.status).toBe(400);
    expect((await readError(self, 400)).code).toBe('invalid_operation');
    const owner = await t.request('POST', `/api/v1/users/${org.ownerId}/deactivate`, { token: admin.token });
    expect(owner.status).toBe(400);
    expect((await me(t, org.token)).status).toBe(200);

    const manager = await t.createUser(org.orgId, 'manager');
    const byManager = await t.request('POST', `/api/v1/users/${admin.userId}/deactivate`, {
      token: manager.token,
    });
    expect(byManager.status).toBe(403);
    expect((await readError(byManager, 403)).required_permission).toBe('users.deactivate');
  });
});

describe('delete_user', () => {
  const del = (t: TestContext, org: TestOrg, id: string, body?: Record<string, unknown>, token = org.token) =>
    t.request('DELETE', `/api/v1/users/${id}`, { token, ...(body ? { body } : {}) });

  const leadRows = (t: TestContext, ids: string[]) =>
    t.services.db.system.select().from(leads).where(inArray(leads.id, ids));

  test('is for the owner only, and not for deleting yourself', async ({ t, org, admin }) => {
    const member = await t.createUser(org.orgId, 'member');
    const byAdmin = await del(t, org, member.userId, undefined, admin.token);
    expect(byAdmin.status).toBe(403);
    expect(await readError(byAdmin, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'users.delete',
    });
    const self = await del(t, org, org.ownerId);
    expect(self.status).toBe(400);
    expect((await me(t, member.token)).status).toBe(200);
  });

  test('refuses a user who owns live records when neither option is given', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    await insertLeads(t, org.orgId, member.userId, 2, 1);
    const res = await del(t, org, member.userId);
    expect(res.status).toBe(400);
    const body = await readError(res, 400);
    expect(body).toMatchObject({ code: 'user_owns_records', owned_records: { leads: 2 } });
    expect(body.message).toMatch(/owns 2 records/);
    expect((await t.request('GET', `/api/v1/users/${member.userId}`, { token: org.token })).status).toBe(200);

    const ackFalse = await del(t, org, member.userId, { acknowledge_data_deletion: false });
    expect(ackFalse.status).toBe(400);
  });

  test('transfers owned records to an heir, soft-deletes the user and revokes every credential', async ({
    t,
    org,
  }) => {
    const leaving = await t.createUser(org.orgId, 'member');
    const heir = await t.createUser(org.orgId, 'manager');
    const leadIds = await insertLeads(t, org.orgId, leaving.userId, 3);
    const pat = await t.createPat(org.orgId, leaving.userId, ['read:leads']);
    const oauthToken = generateOauthToken();
    await t.services.db.system.insert(oauthTokens).values({
      id: newId(),
      orgId: org.orgId,
      userId: leaving.userId,
      appName: 'Some app',
      tokenHash: hashToken(oauthToken),
      scopes: ['read:leads'],
    });
    await t.services.db.system.insert(refreshTokens).values({
      id: newId(),
      orgId: org.orgId,
      userId: leaving.userId,
      familyId: newId(),
      tokenHash: hashToken(generateRefreshToken()),
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    expect((await me(t, oauthToken)).status).toBe(200);

    const res = await del(t, org, leaving.userId, { transfer_to_user_id: heir.userId });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.delete_user)).message).toMatch(/deleted/i);

    for (const lead of await leadRows(t, leadIds)) {
      expect(lead.ownerId).toBe(heir.userId);
      expect(lead.deletedAt).toBeNull();
    }
    // Webhook subscribers hear of the new owner exactly as if each lead had been edited.
    const transferred = await eventsFor(t, leadIds);
    expect(transferred.map((e) => e.event)).toEqual(leadIds.map(() => 'lead.updated'));
    for (const e of transferred) {
      expect(e.data).toMatchObject({
        owner_id: heir.userId,
        changed_fields: ['owner_id'],
        previous_values: { owner_id: leaving.userId },
      });
    }

    for (const token of [leaving.token, pat.token, oauthToken]) expect((await me(t, token)).status).toBe(401);
    const keys = await t.services.db.system.select().from(apiKeys).where(eq(apiKeys.userId, leaving.userId));
    expect(keys.every((k) => k.revokedAt !== null)).toBe(true);
    const oauth = await t.services.db.system
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.userId, leaving.userId));
    expect(oauth.map((o) => o.revokedAt !== null)).toEqual([true]);
    const refresh = await t.services.db.system
      .select()
      .from(refreshTokens)
      .where(eq(refreshTokens.userId, leaving.userId));
    expect(refresh.map((r) => r.revokedAt !== null)).toEqual([true]);

    const [row] = await t.services.db.system.select().from(users).where(eq(users.id, leaving.userId));
    expect(row?.deletedAt).not.toBeNull();
    expect(row?.status).toBe('deactivated');

    expect((await t.request('GET', `/api/v1/users/${leaving.userId}`, { token: org.token })).status).toBe(
      404,
    );
    const list = await readOutput(
      await t.request('GET', '/api/v1/users?limit=100', { token: org.token }),
      TOOL.list_users,
    );
    expect(list.users.map((u) => u._id)).not.toContain(leaving.userId);
    expect(await del(t, org, leaving.userId)).toHaveProperty('status', 404);

    // The email is free again.
    await createUser(t, org, { role: 'member', email: leaving.email });
  });

  test('validates the heir: another live, active user of the same organization', async ({ t, org }) => {
    const leaving = await t.createUser(org.orgId, 'member');
    await insertLeads(t, org.orgId, leaving.userId, 1);
    const inactive = await t.createUser(org.orgId, 'member');
    await t.services.db.system
      .update(users)
      .set({ status: 'deactivated' })
      .where(eq(users.id, inactive.userId));
    const other = await t.createOrg();
    for (const heirId of [leaving.userId, inactive.userId, other.ownerId, '0123456789abcdef01234567']) {
      const res = await del(t, org, leaving.userId, {
        transfer_to_user_id: heirId,
        acknowledge_data_deletion: true,
      });
      expect(res.status).toBe(400);
      expect((await readError(res, 400)).details?.[0]?.field).toBe('transfer_to_user_id');
    }
    const malformed = await del(t, org, leaving.userId, { transfer_to_user_id: 'nope' });
    expect(malformed.status).toBe(400);
    expect((await t.request('GET', `/api/v1/users/${leaving.userId}`, { token: org.token })).status).toBe(
      200,
    );
  });

  test('moves owned records to the trash with acknowledge_data_deletion', async ({ t, org }) => {
    const leaving = await t.createUser(org.orgId, 'member');
    const leadIds = await insertLeads(t, org.orgId, leaving.userId, 2);
    const res = await del(t, org, leaving.userId, { acknowledge_data_deletion: true });
    expect(res.status).toBe(200);
    const rows = await leadRows(t, leadIds);
    expect(rows).toHaveLength(2);
    for (const lead of rows) {
      expect(lead.deletedAt).not.toBeNull();
      expect(lead.deletedBy).toBe(org.ownerId);
      expect(lead.ownerId).toBe(leaving.userId);
    }
    const trashed = await eventsFor(t, leadIds);
    expect(trashed.map((e) => e.event)).toEqual(leadIds.map(() => 'lead.deleted'));
    expect(trashed.every((e) => typeof e.data.deleted_at === 'string')).toBe(true);
  });

  test('prefers the transfer when both options are given, and deletes a user who owns nothing', async ({
    t,
    org,
    admin,
  }) => {
    const leaving = await t.createUser(org.orgId, 'viewer');
    const leadIds = await insertLeads(t, org.orgId, leaving.userId, 1);
    const both = await del(t, org, leaving.userId, {
      transfer_to_user_id: admin.userId,
      acknowledge_data_deletion: true,
    });
    expect(both.status).toBe(200);
    const [lead] = await leadRows(t, leadIds);
    expect(lead).toMatchObject({ ownerId: admin.userId, deletedAt: null });

    const empty = await t.createUser(org.orgId, 'viewer');
    const res = await t.request('DELETE', `/api/v1/users/${empty.userId}`, { token: org.token });
    expect(res.status).toBe(200);
    const gone = await t.services.db.system
      .select()
      .from(users)
      .where(and(eq(users.id, empty.userId), eq(users.status, 'deactivated')));
    expect(gone).toHaveLength(1);
  });
});

describe('other organizations', () => {
  test("answers 404 for another organization's user on every users route", async ({ t, org }) => {
    const other = await t.createOrg();
    const foreign = await t.createUser(other.orgId, 'member');
    const id = foreign.userId;
    const calls: [string, string, Record<string, unknown> | undefined][] = [
      ['GET', `/api/v1/users/${id}`, undefined],
      ['PUT', `/api/v1/users/${id}`, { name: 'Hijacked' }],
      ['POST', `/api/v1/users/${id}/deactivate`, undefined],
      ['POST', `/api/v1/users/${id}/reactivate`, undefined],
      ['DELETE', `/api/v1/users/${id}`, { acknowledge_data_deletion: true }],
    ];
    for (const [method, path, body] of calls) {
      const res = await t.request(method, path, { token: org.token, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((await readError(res, 404)).error).toBe('Not found');
    }
    const list = await readOutput(
      await t.request('GET', '/api/v1/users?limit=100', { token: org.token }),
      TOOL.list_users,
    );
    expect(list.users.map((u) => u._id)).not.toContain(id);
    // Nothing happened to them.
    expect((await me(t, foreign.token)).status).toBe(200);
    const [row] = await t.services.db.system.select().from(users).where(eq(users.id, id));
    expect(row).toMatchObject({ name: 'member user', status: 'active', deletedAt: null });
  });
});

/** Outbox events whose data is one of the given leads. */
async function eventsFor(t: TestContext, leadIds: readonly string[]) {
  const rows = await t.services.db.system.select().from(outboxEvents);
  return rows.filter((r) => typeof r.data._id === 'string' && leadIds.includes(r.data._id));
}
