// Locks in the password reset over its public routes with a real SMTP peer: one 202 for every address, the mail with a working link only for a live user (3 an hour at most), confirm setting the password once, ending every session, and refusing a used or expired token, with one winner of two concurrent confirms.
import { describe, expect } from 'vitest';
import { resetRequestSweep, runResetRequest } from '../../tools/password-reset/jobs.ts';
import { cleanupResets } from '../../tools/password-reset/store.ts';
import { FIXTURE_PASSWORD, readError, type TestContext } from '../fixtures/index.ts';
import { mailRowsOf, mailsTo, mailTest, workersIdle } from '../fixtures/mail-test.ts';
import type { SmtpPeer } from '../support/smtp-peer.ts';
import { expireResetTokensOf, resetRequests, resetTokensOf, seedLostRequest } from './seed.ts';

const BASE = 'https://crm.reset.example';

const test = mailTest({
  env: { PUBLIC_BASE_URL: BASE, MAIL_FROM: 'CRM <no-reply@reset.example>' },
  options: { withWorkers: true, withoutRateLimits: true },
});

const ACCEPTED = {
  message:
    'If an account uses this address, a link to choose a new password is on its way. It works once, for one hour.',
};

async function requestReset(t: TestContext, email: unknown): Promise<Response> {
  return t.request('POST', '/api/v1/auth/password-reset', { body: { email } });
}

/** Asks for a link for `email` and answers the token of the newest mail to it (after the workers ran). */
async function linkFor(t: TestContext, peer: SmtpPeer, email: string): Promise<string> {
  const before = mailsTo(peer, email).length;
  const res = await requestReset(t, email);
  expect(res.status).toBe(202);
  await workersIdle(t);
  const mails = mailsTo(peer, email);
  expect(mails).toHaveLength(before + 1);
  const text = mails.at(-1)?.text ?? '';
  const match = /https:\/\/crm\.reset\.example\/reset-password\?token=([A-Za-z0-9_-]+)/.exec(text);
  if (!match?.[1]) throw new Error(`no reset link in ${text}`);
  return match[1];
}

function confirm(t: TestContext, body: unknown): Promise<Response> {
  return t.request('POST', '/api/v1/auth/password-reset/confirm', { body });
}

function login(t: TestContext, email: string, password: string): Promise<Response> {
  return t.request('POST', '/api/v1/auth/login', { body: { email, password } });
}

describe('POST /api/v1/auth/password-reset', () => {
  test('mails a known address a link that opens the form, from the outbox, once', async ({
    t,
    org,
    peer,
  }) => {
    const user = await t.createUser(org.orgId, 'member');
    const token = await linkFor(t, peer, user.email);
    // 32 random bytes in base64url; only the hash is stored.
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [stored] = await resetTokensOf(t, user.userId);
    expect(stored?.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored?.tokenHash).not.toContain(token);
    const expiresIn = (stored?.expiresAt.getTime() ?? 0) - Date.now();
    expect(expiresIn).toBeGreaterThan(59 * 60 * 1000);
    expect(expiresIn).toBeLessThanOrEqual(60 * 60 * 1000);
    const mail = mailsTo(peer, user.email).at(-1);
    expect(mail?.subject).toBe('Reset your CRM password');
    // One outbox row, sent, keyed by the request.
    const [request] = (await resetRequests(t)).filter((r) => r.id === stored?.requestId);
    expect(request).toMatchObject({ outcome: 'sent', email: null });
    const rows = await mailRowsOf(t, 'password_reset', stored?.requestId ?? '');
    expect(rows.map((r) => [r.key, r.status])).toEqual([[`password-reset:${stored?.requestId}`, 'sent']]);

    const page = await t.request('GET', `/reset-password?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await page.text()).toContain(`name="token" value="${token}"`);
  });

  test('answers an unknown, a deactivated, a malformed or a mixed-case address with the same 202 and body', async ({
    t,
    org,
    peer,
  }) => {
    const gone = await t.createUser(org.orgId, 'member');
    const deactivate = await t.request('POST', `/api/v1/users/${gone.userId}/deactivate`, {
      token: org.token,
    });
    expect(deactivate.status).toBe(200);
    const known = await t.createUser(org.orgId, 'member');
    const unknown = `nobody-${Date.now()}@example.test`;
    for (const email of [unknown, gone.email, 'not an address', '', 'x'.repeat(5000)]) {
      const res = await requestReset(t, email);
      expect(res.status, email.slice(0, 30)).toBe(202);
      expect(await res.json()).toEqual(ACCEPTED);
    }
    const mixed = await requestReset(t, `  ${known.email.toUpperCase()} `);
    expect(mixed.status).toBe(202);
    expect(await mixed.json()).toEqual(ACCEPTED);
    await workersIdle(t);
    expect(mailsTo(peer, unknown)).toEqual([]);
    expect(mailsTo(peer, gone.email)).toEqual([]);
    // The address is matched as login matches it: trimmed, any case.
    expect(mailsTo(peer, known.email)).toHaveLength(1);
    const outcomes = (await resetRequests(t)).map((r) => r.outcome);
    expect(outcomes).toEqual(expect.arrayContaining(['unknown', 'inactive']));
    // Every processed request forgot its address.
    expect((await resetRequests(t)).every((r) => r.email === null && r.processedAt !== null)).toBe(true);
  });

  test('sends one address at most 3 mails an hour, answering the rest alike', async ({ t, org, peer }) => {
    const user = await t.createUser(org.orgId, 'member');
    for (let i = 0; i < 5; i++) {
      const res = await requestReset(t, user.email);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual(ACCEPTED);
    }
    await workersIdle(t);
    expect(mailsTo(peer, user.email)).toHaveLength(3);
    expect(await resetTokensOf(t, user.userId)).toHaveLength(3);
  });

  test('wakes a request whose wake-up was lost from the sweep, and sends its mail once', async ({
    t,
    org,
    peer,
  }) => {
    const user = await t.createUser(org.orgId, 'member');
    // 20 seconds old: inside the context's own sweeper's 30-second grace, so only the calls below wake it.
    const id = await seedLostRequest(t, user.email, 20_000);
    // Only requests past the grace are swept: a wake-up merely waiting is not doubled.
    expect(await resetRequestSweep.run(t.services, 60_000)).toBe(0);
    expect(await resetRequestSweep.run(t.services, 10_000)).toBe(1);
    await workersIdle(t);
    expect(mailsTo(peer, user.email)).toHaveLength(1);
    // Processed: a second run of its job, or another sweep, sends nothing.
    expect(await runResetRequest(t.services, id)).toBeUndefined();
    expect(await resetRequestSweep.run(t.services, 0)).toBe(0);
    await workersIdle(t);
    expect(mailsTo(peer, user.email)).toHaveLength(1);
    expect(await mailRowsOf(t, 'password_reset', id)).toHaveLength(1);
  });

  test('cleans up requests and expired tokens older than a day, and nothing newer', async ({
    t,
    org,
    peer,
  }) => {
    const user = await t.createUser(org.orgId, 'member');
    await linkFor(t, peer, user.email);
    const fresh = await linkFor(t, peer, user.email);
    await expireResetTokensOf(t, user.userId, 2 * 24 * 60 * 60 * 1000);
    const old = await seedLostRequest(t, 'old@example.test', 2 * 24 * 60 * 60 * 1000);
    const before = await resetRequests(t);
    expect(before.map((r) => r.id)).toContain(old);
    const removed = await cleanupResets(t.services);
    // The old request and the user's two (now long expired) tokens.
    expect(removed).toBe(3);
    const after = await resetRequests(t);
    expect(after.map((r) => r.id)).not.toContain(old);
    expect(after).toHaveLength(before.length - 1);
    expect(await resetTokensOf(t, user.userId)).toEqual([]);
    expect((await confirm(t, { token: fresh, password: 'long enough secret' })).status).toBe(400);
  });

  test('refuses a body that is not an object, or without a string email, naming email', async ({ t }) => {
    for (const body of [{}, { email: 42 }, { email: null }, { email: ['a@b.test'] }]) {
      const error = await readError(await requestReset(t, body.email), 400);
      expect(error.code, JSON.stringify(body)).toBe('validation_failed');
      expect(error.details?.map((d) => d.field)).toEqual(['email']);
    }
    const array = await t.request('POST', '/api/v1/auth/password-reset', { body: '["a@b.test"]' });
    expect((await readError(array, 400)).code).toBe('validation_failed');
    const extra = await t.request('POST', '/api/v1/auth/password-reset', {
      body: { email: 'a@b.test', admin: true },
    });
    expect((await readError(extra, 400)).details?.map((d) => d.field)).toEqual(['(root)']);
  });
});

describe('POST /api/v1/auth/password-reset/confirm', () => {
  test('sets the new password, refuses the old, ends every session and spends the token', async ({
    t,
    org,
    peer,
  }) => {
    const user = await t.createUser(org.orgId, 'member');
    const session = await login(t, user.email, FIXTURE_PASSWORD);
    expect(session.status).toBe(200);
    const { refresh_token: refreshToken } = (await session.json()) as { refresh_token: string };
    const other = await linkFor(t, peer, user.email);
    const token = await linkFor(t, peer, user.email);

    const res = await confirm(t, { token, password: 'a brand new secret' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      message: 'Your password has been changed. Every session was signed out.',
    });

    expect((await login(t, user.email, 'a brand new secret')).status).toBe(200);
    expect((await readError(await login(t, user.email, FIXTURE_PASSWORD), 401)).code).toBe(
      'invalid_credentials',
    );
    const refreshed = await t.request('POST', '/api/v1/auth/refresh', {
      body: { refresh_token: refreshToken },
    });
    expect((await readError(refreshed, 401)).code).toBe('invalid_refresh_token');

    const again = await confirm(t, { token, password: 'yet another secret' });
    expect(await readError(again, 400)).toEqual({
      error: 'Invalid or expired reset token',
      code: 'invalid_reset_token',
    });
    // The earlier link of the same user was spent by the change too.
    expect(
      (await readError(await confirm(t, { token: other, password: 'yet another secret' }), 400)).code,
    ).toBe('invalid_reset_token');
    expect((await login(t, user.email, 'a brand new secret')).status).toBe(200);
  });

  test('refuses an expired or unknown token, and changes nothing', async ({ t, org, peer }) => {
    const user = await t.createUser(org.orgId, 'member');
    const token = await linkFor(t, peer, user.email);
    await expireResetTokensOf(t, user.userId);
    const expired = await confirm(t, { token, password: 'a brand new secret' });
    expect((await readError(expired, 400)).code).toBe('invalid_reset_token');
    const unknown = await confirm(t, { token: 'A'.repeat(43), password: 'a brand new secret' });
    expect((await readError(unknown, 400)).code).toBe('invalid_reset_token');
    expect((await login(t, user.email, FIXTURE_PASSWORD)).status).toBe(200);
    const page = await t.request('GET', `/reset-password?token=${token}`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('Request a new password reset');
  });

  test('lets exactly one of two concurrent confirms with one token win', async ({ t, org, peer }) => {
    const user = await t.createUser(org.orgId, 'member');
    const token = await linkFor(t, peer, user.email);
    const answers = await Promise.all([
      confirm(t, { token, password: 'first new secret' }),
      confirm(t, { token, password: 'second new secret' }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    const winner = answers[0]?.status === 200 ? 'first new secret' : 'second new secret';
    const loser = winner === 'first new secret' ? 'second new secret' : 'first new secret';
    expect((await login(t, user.email, winner)).status).toBe(200);
    expect((await login(t, user.email, loser)).status).toBe(401);
  });

  test('refuses a missing token or password and a weak password, naming the field', async ({
    t,
    org,
    peer,
  }) => {
    const user = await t.createUser(org.orgId, 'member');
    const token = await linkFor(t, peer, user.email);
    const cases: [unknown, string][] = [
      [{ password: 'long enough secret' }, 'token'],
      [{ token }, 'password'],
      [{ token, password: 'short' }, 'password'],
      [{ token: '', password: 'long enough secret' }, 'token'],
      [{ token, password: 12345678 }, 'password'],
    ];
    for (const [body, field] of cases) {
      const error = await readError(await confirm(t, body), 400);
      expect(error.code, JSON.stringify(body)).toBe('validation_failed');
      expect(error.details?.map((d) => d.field)).toEqual([field]);
    }
    // None of them spent the token.
    expect((await confirm(t, { token, password: 'long enough secret' })).status).toBe(200);
  });
});

describe('the /reset-password page', () => {
  test('shows the form again for differing or weak passwords and a new-link page for a bad token', async ({
    t,
    org,
    peer,
  }) => {
    const user = await t.createUser(org.orgId, 'member');
    const token = await linkFor(t, peer, user.email);
    const post = (fields: Record<string, string>) =>
      t.request('POST', '/reset-password', {
        body: new URLSearchParams(fields).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const differ = await post({ token, password: 'one new secret', password_confirm: 'another secret' });
    expect(differ.status).toBe(400);
    expect(await differ.text()).toContain('The two passwords differ');
    const weak = await post({ token, password: 'short', password_confirm: 'short' });
    expect(weak.status).toBe(400);
    expect(await weak.text()).toContain('8 to 200 characters');
    const bad = await post({ token: 'nope', password: 'one new secret', password_confirm: 'one new secret' });
    expect(bad.status).toBe(404);
    expect(await bad.text()).toContain('Request a new password reset');
    for (const path of [
      '/reset-password',
      '/reset-password?token=',
      `/reset-password?token=${'x'.repeat(300)}`,
    ]) {
      expect((await t.request('GET', path)).status, path).toBe(404);
    }

    const done = await post({ token, password: 'one new secret', password_confirm: 'one new secret' });
    expect(done.status).toBe(200);
    expect(done.headers.get('referrer-policy')).toBe('no-referrer');
    expect(done.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(await done.text()).toContain('Password changed');
    expect((await login(t, user.email, 'one new secret')).status).toBe(200);
  });
});
