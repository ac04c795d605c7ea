// Locks in that /docs renders in a real browser (Debian chromium, headless) with the leads operations, loading nothing from elsewhere.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers.ts';

const CHROMIUM = '/usr/bin/chromium';

let t: TestContext;
let server: ServerType;
let origin: string;
let browser: BrowserContext;
let profileDir: string;
let shotDir: string;

beforeAll(async () => {
  // .ci/run installs Debian's chromium; without it this test must fail, not pass by skipping.
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  t = await createTestContext();
  server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
  origin = `http://127.0.0.1:${address.port}`;
  profileDir = await mkdtemp(join(tmpdir(), 'crm-docs-profile-'));
  shotDir = await mkdtemp(join(tmpdir(), 'crm-docs-shot-'));
  browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 1000 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  await t?.close();
  if (profileDir) await rm(profileDir, { recursive: true, force: true });
});

describe('the /docs page in Chromium', () => {
  it('shows the leads operations from the local document and saves a screenshot', async () => {
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
