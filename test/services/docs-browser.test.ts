// Locks in that /docs renders in a real browser (Debian chromium, headless) with the leads operations, loading nothing from elsewhere.
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { fileTest } from '../fixtures/index.ts';
import { launchChromiumForFile, serveAppForFile } from '../support/browser.ts';

// The file's app served on a local port and a chromium to open it; the shots go to a temp dir.
const test = fileTest()
  .extend('origin', { scope: 'file' }, serveAppForFile)
  .extend(
    'browser',
    { scope: 'file' },
    launchChromiumForFile('crm-docs-profile-', { width: 1280, height: 1000 }),
  )
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the directory has none.
  .extend('shotDir', { scope: 'file' }, async ({}) => mkdtemp(join(tmpdir(), 'crm-docs-shot-')));
// Chromium and the app start in a hook with its own minute, not inside the test's.
test.beforeAll(async ({ origin, browser }) => {
  expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(browser.pages()).toBeDefined();
}, 60_000);

describe('the /docs page in Chromium', () => {
  test('shows the leads operations from the local document and saves a screenshot', async ({
    browser,
    origin,
    shotDir,
  }) => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => {
      requested.push(request.url());
    });
    page.on('pageerror', (err) => {
      problems.push(`page error: ${err.message}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });

    const response = await page.goto(`${origin}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);

    // Swagger UI renders each operation as an .opblock with the path and the operation id.
    const listLeads = page.locator('.opblock-get', { has: page.locator('[data-path="/api/v1/leads"]') });
    await listLeads.first().waitFor({ state: 'visible', timeout: 20_000 });
    await expect(listLeads.first().locator('.opblock-summary-operation-id').textContent()).resolves.toBe(
      'list_leads',
    );
    await expect(listLeads.first().locator('.opblock-summary-description').textContent()).resolves.toBe(
      'List leads',
    );
    const createLead = page.locator('.opblock-post', { has: page.locator('[data-path="/api/v1/leads"]') });
    expect(await createLead.first().isVisible()).toBe(true);
    expect(await page.getByText('create_lead', { exact: true }).first().isVisible()).toBe(true);
    expect(await page.locator('h3.opblock-tag', { hasText: 'leads' }).first().isVisible()).toBe(true);
    // The title comes from the document, proving it was fetched and parsed.
    expect(await page.locator('.info .title').textContent()).toContain('CRM API');

    const screenshot = join(shotDir, 'docs.png');
    await page.screenshot({ path: screenshot });
    expect((await stat(screenshot)).size).toBeGreaterThan(10_000);
    // Kept (in the temp dir, not the repo) so a person can look at what the browser saw.
    console.info(`docs screenshot: ${screenshot}`);

    // Opening the operation shows its query parameters, read from the tool's zod schema.
    await listLeads.first().locator('.opblock-summary-control').click();
    const pageParam = listLeads.first().locator('tr[data-param-name="page"]');
    await pageParam.waitFor({ state: 'visible', timeout: 10_000 });
    expect(await pageParam.textContent()).toContain('Page number, 1-based');
    expect(await listLeads.first().locator('tr[data-param-name="status"]').isVisible()).toBe(true);

    // No CDN: every request the page made went to this server (inline data: images aside).
    expect(requested).toContain(`${origin}/api/v1/openapi.json`);
    const foreign = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'));
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
