// What building the tools/list answer costs the server per MCP request (every request builds a fresh
// server instance): the caller's filtered tool list and the server's instructions, for a few callers
// and selections, timed over many rounds in one process. Run: node --import tsx bench/mcp-tool-list.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createServices } from '../app/services.ts';
import type { AuthContext } from '../core/auth-context.ts';
import { loadConfig } from '../core/config.ts';
import type { CallContext } from '../core/invoke.ts';
import { createLogger } from '../core/logger.ts';
import { createCrmServer, toolListFor } from '../mcp/server.ts';
import { parseToolsetsHeader, type ToolsetSelection } from '../mcp/toolsets.ts';
import { CATALOGUE } from '../tools/index.ts';

const ROUNDS = 2_000;

function caller(role: AuthContext['role'], scopes: string[] | null): CallContext {
  return {
    auth: {
      tokenKind: 'pat',
      orgId: '0'.repeat(24),
      userId: '1'.repeat(24),
      role,
      plan: 'enterprise',
      disabledFeatures: [],
      scopes,
      credentialId: '2'.repeat(24),
    },
    surface: 'mcp',
    requestId: 'bench',
    access: CATALOGUE.access,
    plans: CATALOGUE.plans,
  };
}

const cases: { label: string; call: CallContext; selection: ToolsetSelection }[] = [
  {
    label: 'owner, mcp:write, default toolsets',
    call: caller('owner', ['mcp:write']),
    selection: parseToolsetsHeader('core'),
  },
  {
    label: 'owner, mcp:write, all toolsets',
    call: caller('owner', ['mcp:write']),
    selection: parseToolsetsHeader('all'),
  },
  {
    label: 'viewer, mcp:read, all toolsets',
    call: caller('viewer', ['mcp:read']),
    selection: parseToolsetsHeader('all'),
  },
];

// Real services on a throw-away embedded database; nothing here calls a tool.
const dir = mkdtempSync(join(tmpdir(), 'crm-mcp-bench-'));
const services = await createServices(
  loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'warn', JWT_SECRET: 'b'.repeat(64) }),
  {
    withoutRateLimits: true,
    logger: createLogger('warn'),
  },
);

function time(fn: () => unknown): number {
  for (let i = 0; i < 200; i += 1) fn();
  const start = performance.now();
  for (let i = 0; i < ROUNDS; i += 1) fn();
  return ((performance.now() - start) / ROUNDS) * 1000;
}

for (const { label, call, selection } of cases) {
  const tools = toolListFor(call, selection);
  const list = time(() => toolListFor(call, selection));
  // The 2025 era's server: it declares and registers the most (logging included).
  const server = time(() => createCrmServer(call, services, selection, 'legacy'));
  console.log(
    `${label}: ${tools.length} tools, ${JSON.stringify({ tools }).length} bytes; ` +
      `tool list ${list.toFixed(1)} µs, new server ${server.toFixed(1)} µs (mean of ${ROUNDS})`,
  );
}

await services.close();
rmSync(dir, { recursive: true, force: true });
