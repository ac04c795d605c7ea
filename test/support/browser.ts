// File fixtures for the browser tests (test/services/*-browser.test.ts): the file's app served on a
// local port, and a headless Debian chromium on a profile of its own; each closed after the file's
// last test (test/README.md, "Fixtures").
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { type BrowserContext, chromium } from 'playwright-core';
import type { TestContext } from '../fixtures/index.ts';

const CHROMIUM = '/usr/bin/chromium';

type OnCleanup = { onCleanup: (cleanup: () => Promise<void>) => void };

/** `test.extend('origin', { scope: 'file' }, serveAppForFile)`: the file's app on 127.0.0.1, its origin. */
export async function serveAppForFile({ t }: { t: TestContext }, { onCleanup }: OnCleanup): Promise<string> {
  const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
  return `http://127.0.0.1:${address.port}`;
}

/**
 * A fixture launching chromium with `viewport`, for `test.extend('browser', { scope: 'file' }, ...)`;
 * `javaScriptEnabled: false` for a browser with script off (a page that must work without it).
 */
export function launchChromiumForFile(
  profilePrefix: string,
  viewport: { width: number; height: number },
  options: { javaScriptEnabled?: boolean } = {},
) {
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the browser has none.
  return async ({}, { onCleanup }: OnCleanup): Promise<BrowserContext> => {
    // .ci/run installs Debian's chromium; without it these tests must fail, not pass by skipping.
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
    const profileDir = await mkdtemp(join(tmpdir(), profilePrefix));
    const removeProfile = () => rm(profileDir, { recursive: true, force: true });
    const browser = await chromium
      .launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        viewport,
        javaScriptEnabled: options.javaScriptEnabled ?? true,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      })
      .catch(async (err: unknown) => {
        await removeProfile();
        throw err;
      });
    // The browser first: it writes to its profile until it has closed.
    onCleanup(async () => {
      await browser.close();
      await removeProfile();
    });
    return browser;
  };
}
