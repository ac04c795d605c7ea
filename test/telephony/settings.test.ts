// Locks in the organization's telephony settings: PUT checks the Twilio credentials with the provider (the peer) before saving, stores the auth token encrypted and never returns or logs it, GET and DELETE, admin-only access, the settings scope, one row per organization, the field bounds, and the lookups other areas use (credentials decrypted, the organization of an Account SID found without a tenant).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { createLogger } from '../../core/logger.ts';
import {
  organizationOfAccount,
  requireTelephony,
  telephonyCredentialsOf,
} from '../../tools/telephony/lookups.ts';
import { authTokenContext } from '../../tools/telephony/store.ts';
import { telephonySettings } from '../../tools/telephony/tables.ts';
import { createTestContext } from '../fixtures/context.ts';
import { readError, readOutput, TOOL } from '../fixtures/index.ts';
import { newSid } from '../support/twilio-peer.ts';
import { connectTelephony, telephonyTest } from './kit.ts';

const PATH = '/api/v1/settings/telephony';

const lines: string[] = [];
const logger = createLogger('trace', {
  write(msg: string) {
    lines.push(msg);
  },
});

const test = telephonyTest({
  options: { logger, withoutRateLimits: true },
  peer: { friendlyName: 'Acme sales line' },
})
  // A context whose TWILIO_API_BASE_URL names a port nobody listens on any more.
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; it has none.
  .extend('offline', { scope: 'file' }, async ({}, { onCleanup }) => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const t = await createTestContext({ TWILIO_API_BASE_URL: `http://127.0.0.1:${port}` });
    onCleanup(() => t.close());
    return t;
  });

// The peer has one account, which one organization may hold at a time: each test starts without it.
test.afterEach(async ({ t }) => {
  await t.services.db.system.delete(telephonySettings);
});

const NOT_CONFIGURED = {
  provider: 'twilio',
  account_sid: null,
  friendly_name: null,
  auth_token_last4: null,
  configured: false,
  verified_at: null,
  updated_at: null,
};

describe('PUT /api/v1/settings/telephony', () => {
  test('checks the credentials with Twilio, saves them and answers the settings without the token', async ({
    t,
    org,
    peer,
  }) => {
    const before = await t.request('GET', PATH, { token: org.token });
    expect((await readOutput(before, TOOL.get_telephony_settings)).telephony).toEqual(NOT_CONFIGURED);

    const started = Date.now();
    const res = await t.request('PUT', PATH, {
      token: org.token,
      body: { account_sid: peer.accountSid, auth_token: peer.authToken },
    });
    const raw = await res.clone().text();
    const { telephony } = await readOutput(res, TOOL.update_telephony_settings);
    expect(telephony).toMatchObject({
      provider: 'twilio',
      account_sid: peer.accountSid,
      friendly_name: 'Acme sales line',
      auth_token_last4: peer.authToken.slice(-4),
      configured: true,
    });
    expect(Date.parse(telephony.verified_at ?? '')).toBeGreaterThanOrEqual(started - 1000);
    expect(raw).not.toContain(peer.authToken);
    // The provider was asked for the account, with the account's own login.
    expect(peer.requests.at(-1)).toMatchObject({
      method: 'GET',
      path: `/2010-04-01/Accounts/${peer.accountSid}.json`,
      authenticated: true,
    });

    const got = await t.request('GET', PATH, { token: org.token });
    const gotRaw = await got.clone().text();
    expect((await readOutput(got, TOOL.get_telephony_settings)).telephony).toEqual(telephony);
    expect(gotRaw).not.toContain(peer.authToken);
  });

  test('stores the auth token encrypted, bound to the organization', async ({ t, org, peer }) => {
    await connectTelephony(t, org, peer);
    const [row] = await t.services.db.system
      .select()
      .from(telephonySettings)
      .where(eq(telephonySettings.orgId, org.orgId));
    expect(row?.accountSid).toBe(peer.accountSid);
    expect(row?.authToken).not.toContain(peer.authToken);
    expect(row?.authToken).toMatch(/^v1:/);
    expect(t.services.secrets.decryptSecret(row?.authToken ?? '', authTokenContext(org.orgId))).toBe(
      peer.authToken,
    );
    expect(() =>
      t.services.secrets.decryptSecret(row?.authToken ?? '', authTokenContext('another')),
    ).toThrow();
  });

  test('refuses credentials Twilio refuses: 400 naming auth_token, nothing saved', async ({
    t,
    other,
    peer,
  }) => {
    const res = await t.request('PUT', PATH, {
      token: other.token,
      body: { account_sid: peer.accountSid, auth_token: 'f'.repeat(32) },
    });
    const body = await readError(res, 400);
    expect(body.code).toBe('telephony_credentials_invalid');
    expect(body.details?.map((d) => d.field)).toEqual(['auth_token']);
    expect(peer.requests.at(-1)).toMatchObject({ method: 'GET', authenticated: false });
    const got = await t.request('GET', PATH, { token: other.token });
    expect((await readOutput(got, TOOL.get_telephony_settings)).telephony.configured).toBe(false);
  });

  test('answers 502 telephony_unavailable when Twilio cannot be reached, and saves nothing', async ({
    offline,
  }) => {
    const org = await offline.createOrg();
    const res = await offline.request('PUT', PATH, {
      token: org.token,
      body: { account_sid: `AC${'1'.repeat(32)}`, auth_token: '2'.repeat(32) },
    });
    const body = await readError(res, 502);
    expect(body.code).toBe('telephony_unavailable');
    expect(body.message).toMatch(/could not be reached/);
    expect(JSON.stringify(body)).not.toContain('2'.repeat(32));
    const rows = await offline.services.db.system.select().from(telephonySettings);
    expect(rows).toEqual([]);
  });

  test('answers 400 naming each malformed field, before calling Twilio', async ({ t, org, peer }) => {
    const asked = peer.requests.length;
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ account_sid: 'AC123', auth_token: 'a'.repeat(32) }, ['account_sid']],
      [{ account_sid: `SK${'a'.repeat(32)}`, auth_token: 'a'.repeat(32) }, ['account_sid']],
      [{ account_sid: `AC${'a'.repeat(32)}`, auth_token: 'a'.repeat(31) }, ['auth_token']],
      [{ account_sid: `AC${'a'.repeat(32)}`, auth_token: 'g'.repeat(32) }, ['auth_token']],
      [{ account_sid: `AC${'a'.repeat(32)}` }, ['auth_token']],
      [{ account_sid: 7, auth_token: null }, ['account_sid', 'auth_token']],
    ];
    for (const [body, fields] of cases) {
      const res = await t.request('PUT', PATH, { token: org.token, body });
      const error = await readError(res, 400);
      expect(error.details?.map((d) => d.field).sort(), JSON.stringify(body)).toEqual(fields);
    }
    expect(peer.requests.length).toBe(asked);
  });

  test('never writes the auth token to a log line, accepted or refused', async ({ t, peer }) => {
    const org = await t.createOrg();
    await connectTelephony(t, org, peer);
    await t.request('PUT', PATH, {
      token: org.token,
      body: { account_sid: peer.accountSid, auth_token: 'e'.repeat(32) },
    });
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.includes(peer.authToken) || line.includes('e'.repeat(32)))).toEqual(
      [],
    );
    await t.request('DELETE', PATH, { token: org.token });
  });
});

describe('GET and DELETE /api/v1/settings/telephony', () => {
  test('DELETE removes the settings (200 with a message), telephony is off again, and a repeat is 200', async ({
    t,
    peer,
  }) => {
    const org = await t.createOrg();
    await connectTelephony(t, org, peer);
    const res = await t.request('DELETE', PATH, { token: org.token });
    expect((await readOutput(res, TOOL.delete_telephony_settings)).message).toBe(
      'Telephony settings removed',
    );
    const got = await t.request('GET', PATH, { token: org.token });
    expect((await readOutput(got, TOOL.get_telephony_settings)).telephony).toEqual(NOT_CONFIGURED);
    const again = await t.request('DELETE', PATH, { token: org.token });
    expect((await readOutput(again, TOOL.delete_telephony_settings)).message).toBe(
      'No telephony settings were saved',
    );
  });

  test('admins and owners only: a member gets 403 on each route, an admin may', async ({ t, peer }) => {
    const org = await t.createOrg();
    const member = await t.createUser(org.orgId, 'member');
    const admin = await t.createUser(org.orgId, 'admin');
    const body = { account_sid: peer.accountSid, auth_token: peer.authToken };
    for (const [method, withBody] of [
      ['GET', false],
      ['PUT', true],
      ['DELETE', false],
    ] as const) {
      const res = await t.request(method, PATH, { token: member.token, ...(withBody ? { body } : {}) });
      expect((await readError(res, 403)).code, method).toBe('forbidden');
    }
    const put = await t.request('PUT', PATH, { token: admin.token, body });
    expect((await readOutput(put, TOOL.update_telephony_settings)).telephony.configured).toBe(true);
    const del = await t.request('DELETE', PATH, { token: admin.token });
    expect(del.status).toBe(200);
  });

  test('a key with read:settings may read the settings, not change them', async ({ t, peer }) => {
    const org = await t.createOrg();
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:settings']);
    const get = await t.request('GET', PATH, { token: reader.token });
    expect(get.status).toBe(200);
    const put = await t.request('PUT', PATH, {
      token: reader.token,
      body: { account_sid: peer.accountSid, auth_token: peer.authToken },
    });
    expect((await readError(put, 403)).code).toBe('scope_missing');
    const del = await t.request('DELETE', PATH, { token: reader.token });
    expect((await readError(del, 403)).code).toBe('scope_missing');
    const writer = await t.createPat(org.orgId, org.ownerId, ['write:settings']);
    const ok = await t.request('PUT', PATH, {
      token: writer.token,
      body: { account_sid: peer.accountSid, auth_token: peer.authToken },
    });
    expect(ok.status).toBe(200);
    await t.request('DELETE', PATH, { token: writer.token });
  });
});

describe('one account per organization', () => {
  test("each organization reads and removes only its own; another's Account SID is a 409 naming account_sid", async ({
    t,
    peer,
  }) => {
    const first = await t.createOrg();
    const second = await t.createOrg();
    await connectTelephony(t, first, peer);
    // The second organization's own account, written as the store writes it.
    const secondSid = newSid('AC');
    await t.services.db.system.insert(telephonySettings).values({
      orgId: second.orgId,
      accountSid: secondSid,
      authToken: t.services.secrets.encryptSecret('c'.repeat(32), authTokenContext(second.orgId)),
      authTokenLast4: 'cccc',
      verifiedAt: new Date(),
    });
    const read = async (token: string) =>
      (await readOutput(await t.request('GET', PATH, { token }), TOOL.get_telephony_settings)).telephony;
    expect((await read(first.token)).account_sid).toBe(peer.accountSid);
    expect((await read(second.token)).account_sid).toBe(secondSid);

    const taken = await t.request('PUT', PATH, {
      token: second.token,
      body: { account_sid: peer.accountSid, auth_token: peer.authToken },
    });
    const error = await readError(taken, 409);
    expect(error.details?.map((d) => d.field)).toEqual(['account_sid']);
    expect((await read(second.token)).account_sid).toBe(secondSid);

    await t.request('DELETE', PATH, { token: second.token });
    expect((await read(second.token)).configured).toBe(false);
    expect((await read(first.token)).account_sid).toBe(peer.accountSid);

    // Saving again replaces the organization's one row.
    await connectTelephony(t, first, peer);
    const rows = await t.services.db.system
      .select()
      .from(telephonySettings)
      .where(eq(telephonySettings.orgId, first.orgId));
    expect(rows).toHaveLength(1);
    await t.request('DELETE', PATH, { token: first.token });
  });
});

describe('the lookups other areas use', () => {
  test('credentials decrypted for the organization, null or telephony_not_configured without', async ({
    t,
    peer,
  }) => {
    const org = await t.createOrg();
    const bare = await t.createOrg();
    await connectTelephony(t, org, peer);
    const db = t.services.db;
    expect(await db.withTenant(org.orgId, (tx) => telephonyCredentialsOf(tx, t.services, org.orgId))).toEqual(
      {
        accountSid: peer.accountSid,
        authToken: peer.authToken,
      },
    );
    expect(
      await db.withTenant(bare.orgId, (tx) => telephonyCredentialsOf(tx, t.services, bare.orgId)),
    ).toBeNull();
    // Row-level security: another tenant's transaction does not see the row even when it names it.
    expect(
      await db.withTenant(bare.orgId, (tx) => telephonyCredentialsOf(tx, t.services, org.orgId)),
    ).toBeNull();
    const refused = await db
      .withTenant(bare.orgId, (tx) => requireTelephony(tx, t.services, bare.orgId))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'telephony_not_configured', status: 409 });
    expect(await db.withTenant(org.orgId, (tx) => requireTelephony(tx, t.services, org.orgId))).toMatchObject(
      {
        accountSid: peer.accountSid,
      },
    );
    await t.request('DELETE', PATH, { token: org.token });
  });

  test('the organization of an Account SID is found without a tenant, and only there', async ({
    t,
    peer,
  }) => {
    const org = await t.createOrg();
    const bystander = await t.createOrg();
    await connectTelephony(t, org, peer);
    expect(await organizationOfAccount(t.services.db.system, t.services, peer.accountSid)).toEqual({
      orgId: org.orgId,
      authToken: peer.authToken,
    });
    expect(await organizationOfAccount(t.services.db.system, t.services, newSid('AC'))).toBeNull();
    // The table keeps its row-level security: a tenant transaction of another organization finds nothing.
    expect(
      await t.services.db.withTenant(bystander.orgId, (tx) =>
        organizationOfAccount(tx, t.services, peer.accountSid),
      ),
    ).toBeNull();
    await t.request('DELETE', PATH, { token: org.token });
  });
});
