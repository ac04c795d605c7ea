// Locks in the pooled SMTP sessions of connected accounts (providers/smtp-account.ts) against a
// real smtp-server peer that counts sessions: two mails through one account share one session and
// one login, concurrent sends stay within the pool's bound, new settings for an account close its
// old session, and an idle pool closes.
import { afterAll, describe, expect, it } from 'vitest';
import type { SmtpAccountSettings } from '../../core/account-mail.ts';
import { SmtpAccountMailer } from '../../providers/smtp-account.ts';
import { smtpSettingsFor } from '../fixtures/connected-accounts.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

const LOGIN = { username: 'sam', password: 'peer-password-1' };
const peers: SmtpPeer[] = [];
const mailers: SmtpAccountMailer[] = [];

afterAll(async () => {
  await Promise.all(mailers.map((m) => m.close()));
  await Promise.all(peers.map((p) => p.close()));
});

async function peer(): Promise<SmtpPeer> {
  const started = await startSmtpPeer({ auth: LOGIN });
  peers.push(started);
  return started;
}

function mailer(poolIdleMs?: number): SmtpAccountMailer {
  const created = new SmtpAccountMailer({ allowPrivateHosts: true, ...(poolIdleMs ? { poolIdleMs } : {}) });
  mailers.push(created);
  return created;
}

const settingsOf = (p: SmtpPeer, accountId = 'account-1'): SmtpAccountSettings => ({
  ...smtpSettingsFor(p, { ...LOGIN, requireTls: false }),
  accountId,
});

const mail = (n: number) => ({
  from: 'sam@example.com',
  to: `buyer${n}@example.com`,
  subject: `Message ${n}`,
  text: 'Hello',
});

async function eventually(check: () => boolean, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('pooled SMTP sessions per connected account', () => {
  it('sends two mails through one account over one session with one login', async () => {
    const p = await peer();
    const m = mailer();
    await m.send(settingsOf(p), mail(1));
    await m.send(settingsOf(p), mail(2));
    expect(p.received.map((r) => r.subject)).toEqual(['Message 1', 'Message 2']);
    expect(p.connections).toBe(1);
    expect(p.logins).toEqual([LOGIN.username]);
    expect(m.openPools).toBe(1);
  });

  it('keeps concurrent sends within the pool bound, each message sent once', async () => {
    const p = await peer();
    const m = mailer();
    const sent = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((n) => m.send(settingsOf(p), mail(n))));
    expect(new Set(sent.map((s) => s.messageId)).size).toBe(8);
    expect(p.received).toHaveLength(8);
    expect(p.connections).toBeGreaterThanOrEqual(1);
    expect(p.connections).toBeLessThanOrEqual(5);
  });

  it('closes the old session when the account settings change', async () => {
    const first = await peer();
    const second = await peer();
    const m = mailer();
    await m.send(settingsOf(first), mail(1));
    expect(first.closed).toBe(0);
    // The account now points at another server: its new pool replaces the old, which closes.
    await m.send(settingsOf(second), mail(2));
    await eventually(() => first.closed === 1);
    expect(m.openPools).toBe(1);
    expect(second.received).toHaveLength(1);
    // Another account on the first server gets a pool of its own.
    await m.send(settingsOf(first, 'account-2'), mail(3));
    expect(first.connections).toBe(2);
    expect(m.openPools).toBe(2);
  });

  it('closes a pool left idle', async () => {
    const p = await peer();
    const m = mailer(100);
    await m.send(settingsOf(p), mail(1));
    await eventually(() => p.closed === 1 && m.openPools === 0);
    await m.send(settingsOf(p), mail(2));
    expect(p.connections).toBe(2);
  });
});
