// Locks in connected accounts as the caller's own: create/list/get/update/delete with their bounds, the password encrypted and never shown or logged, another user's or organization's account a 404, roles and scopes, and deleting cancelling its unsent scheduled emails.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents } from '../../core/db/schema.ts';
import { createLogger } from '../../core/logger.ts';
import {
  defaultAccountOf,
  getOwnAccount,
  senderOf,
  smtpSettingsOf,
} from '../../tools/connected-accounts/store.ts';
import { connectedAccounts } from '../../tools/connected-accounts/tables.ts';
import { insertScheduledEmail } from '../../tools/email/schedule.ts';
import { scheduledEmails } from '../../tools/email/tables.ts';
import {
  createConnectedAccount,
  createLead,
  detailFields,
  fileTest,
  readError,
  readOutput,
  smtpOf,
  TOOL,
} from '../fixtures/index.ts';

const PASSWORD = 'Very-Secret-SMTP-Passw0rd';
const lines: string[] = [];
// Every log line of the file's context, to check the password never reaches the log.
const logger = createLogger('trace', {
  write(msg: string) {
    lines.push(msg);
  },
});

const test = fileTest({ options: { logger, withoutRateLimits: true } });

const api = (path: string) => `/api/v1/connected-accounts${path}`;

describe('create, read, update, delete', () => {
  test('creates an account whose answer shows the server but never the password', async ({ t, org }) => {
    const res = await t.request('POST', api(''), {
      token: org.token,
      body: {
        email: 'Sales@Example.com',
        display_name: 'Sam Sales',
        smtp: { host: 'smtp.example.com', port: 587, secure: false, username: 'sam', password: PASSWORD },
      },
    });
    const text = await res.clone().text();
    const account = (await readOutput(res, TOOL.create_connected_account, 201)).connected_account;
    expect(text).not.toContain(PASSWORD);
    expect(account).toMatchObject({
      email: 'Sales@Example.com',
      display_name: 'Sam Sales',
      smtp: { host: 'smtp.example.com', port: 587, secure: false, username: 'sam', password_set: true },
      status: 'unverified',
      status_reason: null,
      status_code: null,
      verified_at: null,
    });
    expect(account.inbound_url).toMatch(
      new RegExp(`^${t.config.publicBaseUrl}/hooks/email/[A-Za-z0-9_-]{43}$`),
    );
    expect(account.inbound_signing_key.length).toBeGreaterThanOrEqual(32);

    const [row] = await t.services.db.system
      .select()
      .from(connectedAccounts)
      .where(eq(connectedAccounts.id, account._id));
    if (!row) throw new Error('no row');
    // Stored encrypted, bound to this row: the plain password is nowhere in the row.
    expect(JSON.stringify(row)).not.toContain(PASSWORD);
    expect(smtpSettingsOf(t.services, row).password).toBe(PASSWORD);
    expect(JSON.stringify(row)).not.toContain(account.inbound_signing_key);
    // Every answer of the list and get keeps the password out too.
    const list = await t.request('GET', api(''), { token: org.token });
    expect(await list.clone().text()).not.toContain(PASSWORD);
    expect(
      (await readOutput(list, TOOL.list_connected_accounts)).connected_accounts.map((a) => a._id),
    ).toContain(account._id);
    const got = await t.request('GET', api(`/${account._id}`), { token: org.token });
    expect((await readOutput(got, TOOL.get_connected_account)).connected_account).toEqual(account);
    // No log line and no event carries it.
    expect(lines.filter((line) => line.includes(PASSWORD))).toEqual([]);
    const events = await t.services.db.system
      .select()
      .from(outboxEvents)
      .where(eq(outboxEvents.orgId, org.orgId));
    expect(JSON.stringify(events)).not.toContain(PASSWORD);
  });

  test('refuses a second account with the same address, whatever its case (409)', async ({ t, org }) => {
    const first = await createConnectedAccount(t, org, { email: 'dup@example.com' });
    const res = await t.request('POST', api(''), {
      token: org.token,
      body: { email: 'DUP@example.com', smtp: smtpOf({ host: 'smtp.example.com', port: 587 }) },
    });
    expect((await readError(res, 409)).code).toBe('conflict');
    const other = await createConnectedAccount(t, org, { email: 'dup2@example.com' });
    const patch = await t.request('PATCH', api(`/${other._id}`), {
      token: org.token,
      body: { email: 'Dup@Example.com' },
    });
    expect((await readError(patch, 409)).code).toBe('conflict');
    expect(first._id).not.toBe(other._id);
  });

  test('merges PATCH and PUT; a change to smtp makes the account unverified and a new password replaces the old', async ({
    t,
    org,
  }) => {
    const account = await createConnectedAccount(t, org, { display_name: 'Old Name' });
    await t.services.db.system
      .update(connectedAccounts)
      .set({ status: 'verified', verifiedAt: new Date() })
      .where(eq(connectedAccounts.id, account._id));

    const renamed = await t.request('PATCH', api(`/${account._id}`), {
      token: org.token,
      body: { display_name: 'New Name' },
    });
    const afterRename = (await readOutput(renamed, TOOL.update_connected_account)).connected_account;
    expect(afterRename).toMatchObject({ display_name: 'New Name', status: 'verified', smtp: account.smtp });

    const put = await t.request('PUT', api(`/${account._id}`), {
      token: org.token,
      body: { smtp: { port: 2525, password: 'a-new-password' } },
    });
    const afterPut = (await readOutput(put, TOOL.update_connected_account)).connected_account;
    expect(afterPut).toMatchObject({
      display_name: 'New Name',
      status: 'unverified',
      verified_at: null,
      smtp: { ...account.smtp, port: 2525 },
    });
    const row = await getOwnAccount(t.services.db.system, org.orgId, org.ownerId, account._id);
    if (!row) throw new Error('no row');
    expect(smtpSettingsOf(t.services, row).password).toBe('a-new-password');

    const cleared = await t.request('PATCH', api(`/${account._id}`), {
      token: org.token,
      body: { display_name: null },
    });
    expect(
      (await readOutput(cleared, TOOL.update_connected_account)).connected_account.display_name,
    ).toBeNull();
  });

  test('needs smtp.password with a new host, port or username (PATCH and PUT, 400 naming it), so the stored one never goes to another server', async ({
    t,
    org,
  }) => {
    const account = await createConnectedAccount(t, org);
    for (const [method, smtp] of [
      ['PATCH', { host: 'mail.attacker.example' }],
      ['PUT', { port: 2526 }],
      ['PATCH', { username: 'someone-else' }],
      ['PUT', { host: 'mail.attacker.example', port: 465, secure: true }],
    ] as const) {
      const res = await t.request(method, api(`/${account._id}`), { token: org.token, body: { smtp } });
      const error = await readError(res, 400);
      expect(error.details, JSON.stringify(smtp)).toEqual([
        expect.objectContaining({ field: 'smtp.password', code: 'required' }),
      ]);
    }
    const row = await getOwnAccount(t.services.db.system, org.orgId, org.ownerId, account._id);
    if (!row) throw new Error('no row');
    expect(smtpSettingsOf(t.services, row)).toMatchObject({
      host: account.smtp.host,
      port: account.smtp.port,
    });

    // The same values again, or fields that do not move the login elsewhere, need no password.
    const same = await t.request('PATCH', api(`/${account._id}`), {
      token: org.token,
      body: { smtp: { host: account.smtp.host, port: account.smtp.port, require_tls: false, secure: true } },
    });
    expect((await readOutput(same, TOOL.update_connected_account)).connected_account.smtp).toMatchObject({
      secure: true,
      require_tls: false,
    });
    const moved = await t.request('PATCH', api(`/${account._id}`), {
      token: org.token,
      body: { smtp: { host: 'smtp2.example.com', password: 'for-the-new-server' } },
    });
    expect((await readOutput(moved, TOOL.update_connected_account)).connected_account.smtp.host).toBe(
      'smtp2.example.com',
    );
  });

  test('rotates the inbound secret: a new URL and key', async ({ t, org }) => {
    const account = await createConnectedAccount(t, org);
    const res = await t.request('POST', api(`/${account._id}/rotate-inbound-secret`), { token: org.token });
    const rotated = (await readOutput(res, TOOL.rotate_inbound_secret)).connected_account;
    expect(rotated.inbound_url).not.toBe(account.inbound_url);
    expect(rotated.inbound_signing_key).not.toBe(account.inbound_signing_key);
  });

  test('deletes the account and cancels its scheduled emails not yet sent, in the same transaction', async ({
    t,
    org,
  }) => {
    const account = await createConnectedAccount(t, org);
    const lead = await createLead(t, org);
    const now = new Date();
    const scheduleOne = () =>
      t.services.db.withTenant(org.orgId, (tx) =>
        insertScheduledEmail(
          tx,
          org.orgId,
          {
            userId: org.ownerId,
            connectedAccountId: account._id,
            leadId: lead._id,
            contactId: null,
            to: 'buyer@customer.example',
            subject: 'Hello',
            bodyHtml: '<p>Hello</p>',
            scheduledAt: new Date(now.getTime() + 3_600_000),
          },
          now,
        ),
      );
    const pending = await scheduleOne();
    const sent = await scheduleOne();
    await t.services.db.system
      .update(scheduledEmails)
      .set({ status: 'sent', sentAt: now, nextAttemptAt: null })
      .where(eq(scheduledEmails.id, sent.id));

    const res = await t.request('DELETE', api(`/${account._id}`), { token: org.token });
    expect((await readOutput(res, TOOL.delete_connected_account)).message).toMatch(
      /1 scheduled email cancelled/,
    );
    const [p] = await t.services.db.system
      .select()
      .from(scheduledEmails)
      .where(eq(scheduledEmails.id, pending.id));
    expect(p).toMatchObject({
      status: 'cancelled',
      lastError: 'connected account removed',
      nextAttemptAt: null,
    });
    const [s] = await t.services.db.system
      .select()
      .from(scheduledEmails)
      .where(eq(scheduledEmails.id, sent.id));
    expect(s?.status).toBe('sent');
    expect(s?.connectedAccountId).toBeNull();
    expect((await t.request('GET', api(`/${account._id}`), { token: org.token })).status).toBe(404);
  });
});

describe('validation', () => {
  const valid = () => ({ email: 'v@example.com', smtp: smtpOf({ host: 'smtp.example.com', port: 587 }) });
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an email that is no address', { email: 'not-an-address' }, 'email'],
    ['a display name over 200 characters', { display_name: 'x'.repeat(201) }, 'display_name'],
    ['an empty display name', { display_name: '   ' }, 'display_name'],
    ['a host with a scheme', { smtp: { ...valid().smtp, host: 'smtp://smtp.example.com' } }, 'smtp.host'],
    ['a host with a path', { smtp: { ...valid().smtp, host: 'smtp.example.com/x' } }, 'smtp.host'],
    [
      'a host over 253 characters',
      { smtp: { ...valid().smtp, host: `${'a'.repeat(60)}.`.repeat(5) } },
      'smtp.host',
    ],
    ['port 0', { smtp: { ...valid().smtp, port: 0 } }, 'smtp.port'],
    ['port 65536', { smtp: { ...valid().smtp, port: 65536 } }, 'smtp.port'],
    ['a fractional port', { smtp: { ...valid().smtp, port: 25.5 } }, 'smtp.port'],
    ['secure as a string', { smtp: { ...valid().smtp, secure: 'yes' } }, 'smtp.secure'],
    ['an empty username', { smtp: { ...valid().smtp, username: '' } }, 'smtp.username'],
    [
      'a username over 320 characters',
      { smtp: { ...valid().smtp, username: 'u'.repeat(321) } },
      'smtp.username',
    ],
    ['an empty password', { smtp: { ...valid().smtp, password: '' } }, 'smtp.password'],
    [
      'a password over 1000 characters',
      { smtp: { ...valid().smtp, password: 'p'.repeat(1001) } },
      'smtp.password',
    ],
  ];
  test.for(cases)('answers 400 naming the field for %s', async ([_what, override, field], { t, org }) => {
    const res = await t.request('POST', api(''), { token: org.token, body: { ...valid(), ...override } });
    expect(detailFields(await readError(res, 400))).toContain(field);
  });

  test('accepts the bounds themselves and an IP address as host', async ({ t, org }) => {
    const res = await t.request('POST', api(''), {
      token: org.token,
      body: {
        email: 'bounds@example.com',
        display_name: 'd'.repeat(200),
        smtp: {
          host: '192.0.2.10',
          port: 65535,
          secure: true,
          username: 'u'.repeat(320),
          password: 'p'.repeat(1000),
        },
      },
    });
    expect(res.status).toBe(201);
  });

  test('answers 400 for a password that is not a string in an update, and a bad id', async ({ t, org }) => {
    const account = await createConnectedAccount(t, org);
    const res = await t.request('PATCH', api(`/${account._id}`), {
      token: org.token,
      body: { smtp: { password: 42 } },
    });
    expect(detailFields(await readError(res, 400))).toContain('smtp.password');
    expect((await t.request('GET', api('/not-an-id'), { token: org.token })).status).toBe(400);
  });
});

describe('ownership, roles and scopes', () => {
  test("answers 404 for another user's account, even to the organization's owner, and for another organization's", async ({
    t,
    org,
  }) => {
    const member = await t.createUser(org.orgId, 'member');
    const mine = await createConnectedAccount(t, member);
    const theirs = await createConnectedAccount(t, org);
    const other = await t.createOrg();
    for (const [caller, id] of [
      [org, mine._id],
      [member, theirs._id],
      [other, mine._id],
    ] as const) {
      for (const [method, path] of [
        ['GET', `/${id}`],
        ['PATCH', `/${id}`],
        ['DELETE', `/${id}`],
        ['POST', `/${id}/verify`],
        ['POST', `/${id}/rotate-inbound-secret`],
        ['GET', `/${id}/inbound-emails`],
      ] as const) {
        const res = await t.request(method, api(path), {
          token: caller.token,
          ...(method === 'PATCH' ? { body: { display_name: 'x' } } : {}),
        });
        expect(res.status, `${method} ${path}`).toBe(404);
      }
    }
    const list = await t.request('GET', api(''), { token: org.token });
    const ids = (await readOutput(list, TOOL.list_connected_accounts)).connected_accounts.map((a) => a._id);
    expect(ids).toContain(theirs._id);
    expect(ids).not.toContain(mine._id);
  });

  test('lets a viewer list but not create (403)', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await t.request('GET', api(''), { token: viewer.token })).status).toBe(200);
    const res = await t.request('POST', api(''), {
      token: viewer.token,
      body: { email: 'viewer@example.com', smtp: smtpOf({ host: 'smtp.example.com', port: 587 }) },
    });
    expect(res.status).toBe(403);
  });

  test('needs read:email to read and write:email to write with a personal access token', async ({
    t,
    org,
  }) => {
    const readOnly = await t.createPat(org.orgId, org.ownerId, ['read:email']);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:email', 'write:email']);
    const body = {
      email: `pat-${Date.now()}@example.com`,
      smtp: smtpOf({ host: 'smtp.example.com', port: 587 }),
    };
    expect((await t.request('GET', api(''), { token: leadsOnly.token })).status).toBe(403);
    expect((await t.request('GET', api(''), { token: readOnly.token })).status).toBe(200);
    expect((await t.request('POST', api(''), { token: readOnly.token, body })).status).toBe(403);
    expect((await t.request('POST', api(''), { token: writer.token, body })).status).toBe(201);
  });
});

describe('the exports the email and workflows areas send with', () => {
  test('senderOf quotes the display name and cannot be turned into a second address or header', () => {
    expect(senderOf({ email: 'a@example.com', displayName: null })).toBe('a@example.com');
    expect(senderOf({ email: 'a@example.com', displayName: 'Ann Smith' })).toBe(
      '"Ann Smith" <a@example.com>',
    );
    expect(senderOf({ email: 'a@example.com', displayName: 'Evil" <x@y.z>\r\nBcc: z@z.z' })).toBe(
      '"Evil\\" <x@y.z> Bcc: z@z.z" <a@example.com>',
    );
  });

  test("defaultAccountOf picks the user's most recently verified account, else their newest", async ({
    t,
    org,
  }) => {
    const user = await t.createUser(org.orgId, 'member');
    expect(await defaultAccountOf(t.services.db.system, org.orgId, user.userId)).toBeNull();
    const older = await createConnectedAccount(t, user);
    const newer = await createConnectedAccount(t, user);
    expect((await defaultAccountOf(t.services.db.system, org.orgId, user.userId))?.id).toBe(newer._id);
    await t.services.db.system
      .update(connectedAccounts)
      .set({ status: 'verified', verifiedAt: new Date() })
      .where(eq(connectedAccounts.id, older._id));
    expect((await defaultAccountOf(t.services.db.system, org.orgId, user.userId))?.id).toBe(older._id);
    expect(await getOwnAccount(t.services.db.system, org.orgId, org.ownerId, older._id)).toBeNull();
  });
});
