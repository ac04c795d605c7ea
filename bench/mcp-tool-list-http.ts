// What a whole tools/list request costs over /mcp (2025 stateless, as a plain POST through the app:
// authentication, the SDK's server and transport, serialization) for the benchmark owner's key with
// every toolset, on embedded PGlite in a temporary DATA_DIR. Run: node --import tsx bench/mcp-tool-list-http.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createServices } from '../app/services.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { createApp } from '../http/app.ts';
import { seedOrganization } from './seed.ts';

const ROUNDS = 300;
const dir = mkdtempSync(join(tmpdir(), 'crm-mcp-bench-'));
const services = await createServices(
  loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'warn', JWT_SECRET: 'b'.repeat(64) }),
  {
    withoutRateLimits: true,
    logger: createLogger('warn'),
  },
);
try {
  const app = createApp(services);
  const { token } = await seedOrganization(services, 10);
  const request = () =>
    app.fetch(
      new Request('http://127.0.0.1:3000/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-mcp-toolsets': 'all',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    );
  let bytes = 0;
  for (let i = 0; i < 30; i += 1) bytes = (await (await request()).text()).length;
  const start = performance.now();
  for (let i = 0; i < ROUNDS; i += 1) await (await request()).text();
  const ms = (performance.now() - start) / ROUNDS;
  console.log(
    `tools/list, every toolset: ${bytes} bytes, ${ms.toFixed(2)} ms per request (mean of ${ROUNDS})`,
  );
} finally {
  await services.close();
  rmSync(dir, { recursive: true, force: true });
}
