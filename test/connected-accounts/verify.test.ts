// Locks in that verifying a connected account opens a real SMTP session (login, TLS from the first byte, STARTTLS required before AUTH unless require_tls is false) and records each failure with its code and reason as a 200: unreachable, bad credentials, no STARTTLS (tls_required), no AUTH (auth_unsupported), untrusted certificate, and (with the SSRF guard on) a private host; sending refuses a plain session when TLS is required.
import { createServer, type Socket } from 'node:net';
import { afterAll, describe, expect } from 'vitest';
import { SmtpAccountMailer } from '../../providers/smtp-account.ts';
import {
  type ConnectedAccount,
  createConnectedAccount,
  createTestContext,
  fileTest,
  readOutput,
  smtpOf,
  smtpSettingsFor,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { createSelfSignedCertificate, type SelfSignedCertificate } from '../support/https-receiver.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

const LOGIN = { username: 'sam', password: 'peer-password-1' };

// The certificate the TLS peers present, trusted by the file's context as its account mail CA.
const cert: SelfSignedCertificate = createSelfSignedCertificate();
const peers: SmtpPeer[] = [];

const test = fileTest({ options: { withoutRateLimits: true, accountMailCa: cert.cert } });
afterAll(async () => {
  await Promise.all(peers.map((p) => p.close()));
});

async function peer(options: Parameters<typeof startSmtpPeer>[0]): Promise<SmtpPeer> {
  const started = await startSmtpPeer(options);
  peers.push(started);
  return started;
}

async function verify(
  t: TestContext,
  org: TestOrg,
  account: ConnectedAccount,
  ctx = t,
  caller = org,
): Promise<ConnectedAccount> {
  const res = await ctx.request('POST', `/api/v1/connected-accounts/${account._id}/verify`, {
    token: caller.token,
  });
  return (await readOutput(res, TOOL.verify_connected_account)).connected_account;
}

/** A TCP port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('verify against a real SMTP peer', () => {
  test('logs in over plain SMTP and records verified', async ({ t, org }) => {
    const p = await peer({ auth: LOGIN });
    const account = await createConnectedAccount(t, org, { smtp: smtpOf(p, LOGIN) });
    const before = Date.now();
    const verified = await verify(t, org, account);
    expect(verified).toMatchObject({ status: 'verified', status_reason: null, status_code: null });
    expect(Date.parse(verified.verified_at ?? '')).toBeGreaterThanOrEqual(before - 1000);
    expect(verified.last_checked_at).toBe(verified.verified_at);
    expect(p.logins).toEqual([LOGIN.username]);
    expect(p.received).toHaveLength(0);
  });

  test('upgrades with STARTTLS when the server offers it, then logs in', async ({ t, org }) => {
    const p = await peer({ auth: LOGIN, tls: { certificate: cert } });
    const mailer = new SmtpAccountMailer({ ca: cert.cert, allowPrivateHosts: true });
    expect(
      await mailer.verify({ ...smtpSettingsFor(p, { ...LOGIN, requireTls: true }), host: 'localhost' }),
    ).toEqual({
      ok: true,
      starttls: true,
    });
    const account = await createConnectedAccount(t, org, {
      smtp: { ...smtpOf(p, { ...LOGIN, requireTls: true }), host: 'localhost' },
    });
    expect((await verify(t, org, account)).status).toBe('verified');
    expect(p.logins).toEqual([LOGIN.username, LOGIN.username]);
  });

  test('records tls_required, sending no password, when a plain server offers no STARTTLS (require_tls defaults to true)', async ({
    t,
    org,
  }) => {
    const p = await peer({ auth: LOGIN });
    const { require_tls: _plain, ...smtp } = smtpOf(p, LOGIN);
    const account = await createConnectedAccount(t, org, { smtp });
    expect(account.smtp.require_tls).toBe(true);
    const failed = await verify(t, org, account);
    expect(failed).toMatchObject({ status: 'error', status_code: 'tls_required', verified_at: null });
    expect(failed.status_reason).toMatch(/STARTTLS/);
    expect(p.logins).toEqual([]);
    // Allowed explicitly, the same server verifies.
    const relaxed = await t.request('PATCH', `/api/v1/connected-accounts/${account._id}`, {
      token: org.token,
      body: { smtp: { require_tls: false } },
    });
    expect(
      (await readOutput(relaxed, TOOL.update_connected_account)).connected_account.smtp.require_tls,
    ).toBe(false);
    expect((await verify(t, org, account)).status).toBe('verified');
  });

  test('refuses to send over a plain session when TLS is required, before AUTH (nodemailer requireTLS)', async () => {
    const p = await peer({ auth: LOGIN });
    const mailer = new SmtpAccountMailer({ allowPrivateHosts: true });
    await expect(
      mailer.send(smtpSettingsFor(p, { ...LOGIN, requireTls: true }), {
        from: 'a@example.com',
        to: 'b@example.com',
        subject: 'x',
        text: 'x',
      }),
    ).rejects.toMatchObject({ code: 'tls_required', permanent: true });
    expect(p.logins).toEqual([]);
    expect(p.received).toHaveLength(0);
  });

  test('records auth_unsupported (not auth_failed) for a server that offers no AUTH', async ({ t, org }) => {
    const p = await peer({ noAuth: true });
    const account = await createConnectedAccount(t, org, { smtp: smtpOf(p, LOGIN) });
    const failed = await verify(t, org, account);
    expect(failed).toMatchObject({ status: 'error', status_code: 'auth_unsupported' });
    expect(failed.status_reason).toMatch(/no way to log in/);
  });

  test('speaks TLS from the first byte when secure', async ({ t, org }) => {
    const p = await peer({ auth: LOGIN, tls: { certificate: cert, secure: true } });
    const mailer = new SmtpAccountMailer({ ca: cert.cert, allowPrivateHosts: true });
    // Secure from the start: no STARTTLS upgrade happened, and the login went through.
    expect(
      await mailer.verify({ ...smtpSettingsFor(p, { ...LOGIN, secure: true }), host: 'localhost' }),
    ).toEqual({
      ok: true,
      starttls: false,
    });
    const account = await createConnectedAccount(t, org, {
      smtp: { ...smtpOf(p, { ...LOGIN, secure: true }), host: 'localhost' },
    });
    expect((await verify(t, org, account)).status).toBe('verified');
    expect(p.logins).toEqual([LOGIN.username, LOGIN.username]);
  });

  test('records auth_failed for a wrong password (535), with a reason and no password', async ({
    t,
    org,
  }) => {
    const p = await peer({ auth: LOGIN });
    const account = await createConnectedAccount(t, org, {
      smtp: smtpOf(p, { ...LOGIN, password: 'wrong-one' }),
    });
    const failed = await verify(t, org, account);
    expect(failed).toMatchObject({ status: 'error', status_code: 'auth_failed', verified_at: null });
    expect(failed.status_reason).toMatch(/refused the login/);
    expect(failed.status_reason).not.toContain('wrong-one');
    expect(failed.last_checked_at).not.toBeNull();
    expect(p.logins).toEqual([LOGIN.username]);
  });

  test('records unreachable for a closed port', async ({ t, org }) => {
    const account = await createConnectedAccount(t, org, {
      smtp: smtpOf({ host: '127.0.0.1', port: await closedPort() }),
    });
    const failed = await verify(t, org, account);
    expect(failed).toMatchObject({ status: 'error', status_code: 'unreachable' });
    expect(failed.status_reason).toMatch(/refused the connection/);
  });

  test('records certificate for a server whose certificate is not trusted', async ({ t, org }) => {
    const untrusted = createSelfSignedCertificate();
    const secure = await peer({ auth: LOGIN, tls: { certificate: untrusted, secure: true } });
    const starttls = await peer({ auth: LOGIN, tls: { certificate: untrusted } });
    for (const [p, isSecure] of [
      [secure, true],
      [starttls, false],
    ] as const) {
      const account = await createConnectedAccount(t, org, {
        smtp: { ...smtpOf(p, { ...LOGIN, secure: isSecure }), host: 'localhost' },
      });
      const failed = await verify(t, org, account);
      expect(failed).toMatchObject({ status: 'error', status_code: 'certificate' });
      expect(failed.status_reason).toMatch(/certificate is not trusted/);
      // Never logged in over a connection it could not trust.
      expect(p.logins).toEqual([]);
    }
  });

  test('reports timeout for a server that accepts the connection but never greets', async () => {
    const sockets: Socket[] = [];
    // Holds each connection open and says nothing.
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    try {
      const mailer = new SmtpAccountMailer({
        allowPrivateHosts: true,
        timeoutsMs: { connection: 2000, greeting: 200, socket: 2000 },
      });
      const result = await mailer.verify(smtpSettingsFor({ host: '127.0.0.1', port: address.port }, LOGIN));
      expect(result).toMatchObject({ ok: false, code: 'timeout' });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  test('a later success clears the recorded failure', async ({ t, org }) => {
    const p = await peer({ auth: LOGIN });
    const account = await createConnectedAccount(t, org, { smtp: smtpOf(p, { ...LOGIN, password: 'nope' }) });
    expect((await verify(t, org, account)).status).toBe('error');
    const fixed = await t.request('PATCH', `/api/v1/connected-accounts/${account._id}`, {
      token: org.token,
      body: { smtp: { password: LOGIN.password } },
    });
    expect((await readOutput(fixed, TOOL.update_connected_account)).connected_account.status).toBe(
      'unverified',
    );
    expect(await verify(t, org, account)).toMatchObject({
      status: 'verified',
      status_code: null,
      status_reason: null,
    });
  });
});

// A second context, with the guard on, for the SSRF block: built on first use, closed with the file.
const guardedTest = test
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the context has none.
  .extend('guarded', { scope: 'file' }, async ({}, { onCleanup }) => {
    const guarded = await createTestContext(
      { CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS: 'false' },
      { withoutRateLimits: true },
    );
    onCleanup(() => guarded.close());
    return guarded;
  })
  .extend('guardedOrg', { scope: 'file' }, async ({ guarded }) => guarded.createOrg());

describe('the SSRF guard (CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS off)', () => {
  guardedTest(
    'refuses loopback, private and link-local servers with private_host, connecting to none',
    async ({ t, org, guarded, guardedOrg }) => {
      const p = await peer({ auth: LOGIN });
      for (const host of ['127.0.0.1', 'localhost', '10.1.2.3', '169.254.169.254', '::1', '192.168.0.10']) {
        const account = await createConnectedAccount(guarded, guardedOrg, {
          smtp: { ...smtpOf(p, LOGIN), host },
        });
        const failed = await verify(t, org, account, guarded, guardedOrg);
        expect(failed, host).toMatchObject({ status: 'error', status_code: 'private_host' });
        expect(failed.status_reason).toMatch(/private, loopback or otherwise internal/);
      }
      expect(p.logins).toEqual([]);
    },
  );

  guardedTest('refuses them at send time too', async () => {
    const p = await peer({});
    const mailer = new SmtpAccountMailer({ allowPrivateHosts: false });
    await expect(
      mailer.send(smtpSettingsFor(p), {
        from: 'a@example.com',
        to: 'b@example.com',
        subject: 'x',
        text: 'x',
      }),
    ).rejects.toMatchObject({ code: 'private_host', permanent: true });
    expect(p.received).toHaveLength(0);
  });
});

describe('verify runs outside the request transaction (ToolDefinition.outside)', () => {
  /** A server that accepts connections and greets only when told to, then refuses the login. */
  async function heldServer() {
    const sockets: Socket[] = [];
    let connected: () => void = () => {};
    const firstConnection = new Promise<void>((resolve) => {
      connected = resolve;
    });
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => {});
      connected();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return {
      port: address.port,
      firstConnection,
      /** Ends the held session: a 421 greeting, which fails the check at once. */
      release() {
        for (const socket of sockets) socket.end('421 Service not available\r\n');
      },
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  test('lets other requests use the database while the SMTP session waits', async ({ t, org }) => {
    const held = await heldServer();
    try {
      const account = await createConnectedAccount(t, org, {
        smtp: smtpOf({ host: '127.0.0.1', port: held.port }, LOGIN),
      });
      let verified = false;
      const verifying = verify(t, org, account).then((answer) => {
        verified = true;
        return answer;
      });
      await held.firstConnection;
      // On the embedded database (one connection) a transaction held through the session would
      // keep this request waiting until the session ended.
      const list = await t.request('GET', '/api/v1/connected-accounts', { token: org.token });
      expect(list.status).toBe(200);
      expect(verified).toBe(false);
      held.release();
      expect((await verifying).status).toBe('error');
    } finally {
      await held.close();
    }
  });

  test('does not record an outcome for settings edited while the session ran', async ({ t, org }) => {
    const held = await heldServer();
    try {
      const account = await createConnectedAccount(t, org, {
        smtp: smtpOf({ host: '127.0.0.1', port: held.port }, LOGIN),
      });
      const verifying = verify(t, org, account);
      await held.firstConnection;
      const edited = await t.request('PATCH', `/api/v1/connected-accounts/${account._id}`, {
        token: org.token,
        body: { smtp: { password: 'another-password-2' } },
      });
      expect(edited.status).toBe(200);
      held.release();
      const answer = await verifying;
      // The failure was about the old settings: the account stays as edited, unverified.
      expect(answer.status).toBe('unverified');
      expect(answer.status_code).toBeNull();
    } finally {
      await held.close();
    }
  });
});
