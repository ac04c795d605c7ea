// Locks in that a lead can accept a proposal in a real browser (Debian chromium, headless): the
// page from the link of send_proposal renders under its strict CSP without errors, the plain HTML
// form posts name, e-mail and typed signature, the confirmation shows, and the API then reads it accepted and signed.
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect } from 'vitest';
import { createProposal, fileTest, readOutput, sendProposal, TOOL } from '../fixtures/index.ts';
import { launchChromiumForFile, serveAppForFile } from '../support/browser.ts';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

// The file's app served on a local port and a chromium to open the public page.
const test = fileTest({ options: { withoutRateLimits: true } })
  .extend('origin', { scope: 'file' }, serveAppForFile)
  .extend(
    'browser',
    { scope: 'file' },
    launchChromiumForFile('crm-proposal-profile-', { width: 1000, height: 1200 }),
  );
// Chromium and the app start in a hook with its own minute, not inside the test's.
test.beforeAll(async ({ origin, browser }) => {
  expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(browser.pages()).toBeDefined();
}, 60_000);

describe('the public proposal page in Chromium', () => {
  test('accepts with name, e-mail and signature, shows the confirmation and saves screenshots', async ({
    t,
    org,
    browser,
    origin,
  }) => {
    const proposal = await createProposal(t, org, {
      title: 'Website redesign',
      sections: [
        { heading: 'Scope', body_markdown: 'A **new** website with [docs](https://example.com).' },
        { heading: 'Timeline', body_markdown: '- Design: 2 weeks\n- Build: 4 weeks' },
      ],
      line_items: [{ description: 'Design and build', quantity: 1, unit_price: 12000, tax_percent: 20 }],
      currency: 'EUR',
    });
    const { token } = await sendProposal(t, org, proposal._id);

    const page = await browser.newPage();
    const problems: string[] = [];
    const requested: string[] = [];
    page.on('request', (request) => {
      requested.push(request.url());
    });
    page.on('pageerror', (err) => {
      problems.push(`page error: ${err.message}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });

    const response = await page.goto(`${origin}/p/${token}`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    await expect(page.locator('h1').textContent()).resolves.toBe('Website redesign');
    await expect(page.locator('#total').textContent()).resolves.toBe('EUR 14,400.00');
    // The inline style sheet applies (its nonce is allowed by the CSP): the body is centred, not full width.
    const bodyWidth = await page.evaluate(() => document.body.getBoundingClientRect().width);
    expect(bodyWidth).toBeLessThan(800);

    await mkdir(ARTIFACTS, { recursive: true });
    const before = join(ARTIFACTS, 'proposal-page.png');
    await page.screenshot({ path: before, fullPage: true });
    expect((await stat(before)).size).toBeGreaterThan(1000);

    await page.fill('#name', 'Hank Scorpio');
    await page.fill('#email', 'hank@globex.test');
    await page.fill('#signature', 'Hank Scorpio');
    await Promise.all([page.waitForLoadState('load'), page.click('#accept')]);
    await expect(page.locator('h1').textContent()).resolves.toBe('Thank you');
    await expect(page.locator('#message').textContent()).resolves.toContain('and signed it');

    const shot = join(ARTIFACTS, 'proposal-accepted.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect((await stat(shot)).size).toBeGreaterThan(1000);
    await page.close();

    expect(problems).toEqual([]);
    expect(requested.every((url) => url.startsWith(origin))).toBe(true);
    const got = await readOutput(
      await t.request('GET', `/api/v1/proposals/${proposal._id}`, { token: org.token }),
      TOOL.get_proposal,
    );
    expect(got.proposal).toMatchObject({
      status: 'accepted',
      signed: true,
      accepted_by: { name: 'Hank Scorpio', email: 'hank@globex.test' },
    });
  }, 60_000);
});
