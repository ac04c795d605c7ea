// Locks in that a person can authorize an OAuth app in a real browser (Debian chromium, headless): the
// sign-in and consent pages render under their strict CSP without errors, the plain HTML forms carry
// the CSRF cookie, unchecking a scope and checking a toolset narrow the grant, and Allow lands on the
// app's redirect URI with code, state and iss, which the token endpoint then redeems.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { FIXTURE_PASSWORD, fileTest, readJson, readOutput, TOOL } from '../fixtures/index.ts';
import { launchChromiumForFile, serveAppForFile } from '../support/browser.ts';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

// The file's app served on a local port and a chromium to open the authorization page.
const test = fileTest({ options: { withoutRateLimits: true } })
  .extend('origin', { scope: 'file' }, serveAppForFile)
  .extend(
    'browser',
    { scope: 'file' },
    launchChromiumForFile('crm-oauth-profile-', { width: 900, height: 1400 }),
  )
  // The app's redirect URI: a local server that records where the browser landed.
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the app has none.
  .extend('app', { scope: 'file' }, async ({}, { onCleanup }) => {
    const landed: URL[] = [];
    const server = createServer((req, res) => {
      landed.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('back in the app');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    return { redirect: `http://127.0.0.1:${port}/callback`, landed };
  });
// Chromium and the app start in a hook with its own minute, not inside the test's.
test.beforeAll(async ({ origin, browser }) => {
  expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(browser.pages()).toBeDefined();
}, 60_000);

describe('the OAuth consent page in Chromium', () => {
  test('signs in, narrows the grant, allows, and the code is redeemed for the narrowed scopes', async ({
    t,
    org,
    browser,
    origin,
    app,
  }) => {
    const REDIRECT = app.redirect;
    const created = await readOutput(
      await t.request('POST', '/api/v1/oauth/apps', {
        token: org.token,
        body: { name: 'Browser App', redirect_uris: [REDIRECT], scopes: ['mcp:read', 'mcp:write'] },
      }),
      TOOL.create_oauth_app,
      201,
    );
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: created.client_id,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'browser-state',
      scope: 'mcp:read mcp:write',
      resource: `${t.config.publicBaseUrl}/mcp`,
    });

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => {
      problems.push(`page error: ${err.message}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });
    const response = await page.goto(`${origin}/oauth/authorize?${params}`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    await expect(page.locator('h1').textContent()).resolves.toBe('Sign in to continue');
    await page.fill('input[name="email"]', org.ownerEmail);
    await page.fill('input[name="password"]', FIXTURE_PASSWORD);
    await Promise.all([page.waitForLoadState('load'), page.click('button[type="submit"]')]);

    await expect(page.locator('h1').textContent()).resolves.toContain('Allow');
    await expect(page.locator('body').textContent()).resolves.toContain('Browser App');
    // The inline style sheet applies (its nonce is allowed by the CSP): the body is centred, not full width.
    const bodyWidth = await page.evaluate(() => document.body.getBoundingClientRect().width);
    expect(bodyWidth).toBeLessThan(700);
    await page.uncheck('input[name="scope:mcp:write"]');
    await page.check('input[name="toolset:sales"]');
    await mkdir(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'oauth-consent.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect((await stat(shot)).size).toBeGreaterThan(1000);

    await Promise.all([page.waitForURL(/\/callback\?/), page.click('button[value="allow"]')]);
    // The browser also asks the client's site for /favicon.ico once it lands: the callback is found by path.
    const callback = app.landed.find((url) => url.pathname === '/callback');
    if (!callback) throw new Error('the browser never reached the callback');
    expect(callback.searchParams.get('state')).toBe('browser-state');
    expect(callback.searchParams.get('iss')).toBe(t.config.publicBaseUrl);
    expect(problems).toEqual([]);

    const token = await t.app.request('/oauth/token', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${created.client_id}:${created.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') ?? '',
        code_verifier: verifier,
        redirect_uri: REDIRECT,
      }).toString(),
    });
    const body = await readJson(token, z.looseObject({ access_token: z.string(), scope: z.string() }));
    expect(body.scope).toBe('mcp:read');
    await page.close();
  });
});
