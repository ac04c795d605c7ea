// Locks in the reset link end to end in a real browser (Debian chromium, headless): the link of the captured mail opens the form under its strict CSP without errors, the new password typed twice is set, the success page shows, the API logs in with it, and no log line carries the token.
import { describe, expect } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import type { TestContext } from '../fixtures/index.ts';
import { mailsTo, mailTest, workersIdle } from '../fixtures/mail-test.ts';
import { launchChromiumForFile, serveAppForFile } from '../support/browser.ts';

const lines: string[] = [];
// The most verbose level, so a token logged at any level is caught.
const logger = createLogger('trace', {
  write(msg: string) {
    lines.push(msg);
  },
});

// The SMTP peer first, then the context mailing through it with the capturing logger, then the
// server and chromium. The link's origin is PUBLIC_BASE_URL (the default); the test opens its path
// and query on the served origin, known only once it listens.
const test = mailTest({
  env: { MAIL_FROM: 'CRM <no-reply@browser.example>' },
  options: { withWorkers: true, withoutRateLimits: true, logger },
});
const browserTest = test
  .extend('origin', { scope: 'file' }, serveAppForFile)
  .extend(
    'browser',
    { scope: 'file' },
    launchChromiumForFile('crm-reset-profile-', { width: 900, height: 900 }),
  );
// Chromium and the app start in a hook with its own minute, not inside the test's.
browserTest.beforeAll(async ({ origin, browser }) => {
  expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(browser.pages()).toBeDefined();
}, 60_000);

function login(t: TestContext, email: string, password: string): Promise<Response> {
  return t.request('POST', '/api/v1/auth/login', { body: { email, password } });
}

describe('the reset link in Chromium', () => {
  browserTest(
    'opens the form, sets the new password typed twice, and the API logs in with it',
    async ({ t, org, peer, origin, browser }) => {
      const user = await t.createUser(org.orgId, 'member');
      const asked = await t.request('POST', '/api/v1/auth/password-reset', { body: { email: user.email } });
      expect(asked.status).toBe(202);
      await workersIdle(t);
      const text = mailsTo(peer, user.email).at(-1)?.text ?? '';
      const link = /(https?:\/\/\S+\/reset-password\?token=([A-Za-z0-9_-]+))/.exec(text);
      const token = link?.[2];
      if (!link?.[1] || !token) throw new Error(`no reset link in ${text}`);
      expect(link[1].startsWith(t.config.publicBaseUrl)).toBe(true);
      const url = new URL(link[1]);

      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (err) => {
        problems.push(`page error: ${err.message}`);
      });
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
      });
      const response = await page.goto(`${origin}${url.pathname}${url.search}`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      expect(response?.headers()['referrer-policy']).toBe('no-referrer');
      await expect(page.locator('#title').textContent()).resolves.toBe('Choose a new password');

      await page.fill('#password', 'browser chosen secret');
      await page.fill('#password_confirm', 'browser chosen secret');
      await Promise.all([page.waitForLoadState('load'), page.click('#submit')]);
      await expect(page.locator('#title').textContent()).resolves.toBe('Password changed');
      expect(page.url()).toBe(`${origin}/reset-password`);
      expect(problems).toEqual([]);
      await page.close();

      expect((await login(t, user.email, 'browser chosen secret')).status).toBe(200);
      // The request log wrote the page's path, never its query string with the token.
      const logged = lines.join('\n');
      expect(logged).toContain('"path":"/reset-password"');
      expect(logged).not.toContain(token);
    },
  );
});
