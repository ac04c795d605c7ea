// Locks in `crm worker --processes N` on PostgreSQL and Redis: N full worker processes under one
// supervisor; SIGTERM to the supervisor stops every child gracefully (exit 0); a child that dies on
// its own stops the others and the supervisor exits non-zero, so a service manager restarts the set.
import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect } from 'vitest';
import { fileTest, type TestContext } from '../fixtures/index.ts';
import { BIN, ROOT } from '../support/cli.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const test = fileTest({});

interface Supervisor {
  child: ChildProcess;
  /** The pids of the children that logged 'crm worker started', by process index. */
  started: Map<number, number>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startSupervisor(t: TestContext, processes: number): Supervisor {
  const databaseUrl = t.config.databaseUrl;
  if (!databaseUrl) throw new Error('the services suite runs on PostgreSQL');
  const child = spawn(process.execPath, [BIN, 'worker', '--processes', String(processes)], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      CRM_QUEUE_PREFIX: `worker-processes-${Date.now().toString(36)}`,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started = new Map<number, number>();
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { msg?: string; process?: number; pid?: number };
      if (entry.msg === 'crm worker started' && entry.process !== undefined && entry.pid !== undefined)
        started.set(entry.process, entry.pid);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, started, exited };
}

async function eventually(check: () => boolean, limitMs = 90_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('crm worker --processes', () => {
  test('runs two full workers and stops both on one SIGTERM, exiting 0', { timeout: 180_000 }, async ({
    t,
  }) => {
    const supervisor = startSupervisor(t, 2);
    try {
      await eventually(() => supervisor.started.size === 2);
      const pids = [...supervisor.started.values()];
      expect(new Set(pids).size).toBe(2);
      expect(pids).not.toContain(supervisor.child.pid);
      supervisor.child.kill('SIGTERM');
      expect(await supervisor.exited).toEqual({ code: 0, signal: null });
      for (const pid of pids) expect(isRunning(pid)).toBe(false);
    } finally {
      supervisor.child.kill('SIGKILL');
    }
  });

  test('stops the others and exits non-zero when one worker dies on its own', { timeout: 180_000 }, async ({
    t,
  }) => {
    const supervisor = startSupervisor(t, 2);
    try {
      await eventually(() => supervisor.started.size === 2);
      const [first, second] = [...supervisor.started.values()];
      if (first === undefined || second === undefined) throw new Error('two workers expected');
      process.kill(first, 'SIGKILL');
      const { code } = await supervisor.exited;
      expect(code).not.toBe(0);
      expect(isRunning(second)).toBe(false);
    } finally {
      supervisor.child.kill('SIGKILL');
    }
  });
});
