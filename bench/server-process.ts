// The product as a black box: `npm start` in a process group of its own, on a free port, with the
// environment the benchmark gives it. Its CPU time is read from /proc for every process of the group
// (npm and the server it starts), so a scenario can report the server's CPU per request.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { freePort } from '../test/support/cli.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Linux's USER_HZ: /proc reports CPU times in these ticks. */
const TICKS_PER_SECOND = 100;

export interface ServerProcess {
  url: string;
  /** Date.now() when the process was spawned (a CPU profile's clock starts about then). */
  startedAt: number;
  /** CPU milliseconds (user + system) the group has used so far. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/** Starts `server` on a free loopback port and gives its base URL. */
export function listenOnLoopback(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('no TCP address'));
      else resolve(`http://127.0.0.1:${address.port}`);
    });
  });
}

/**
 * CPU milliseconds every CPU of the machine has spent not idle since boot (/proc/stat's first line:
 * user, nice, system, irq and softirq; not iowait, nor steal, which the hypervisor took).
 */
export function machineCpuMs(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1);
  const [user, nice, system, , , irq, softirq] = fields.map(Number);
  return (
    (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)) / TICKS_PER_SECOND) * 1000
  );
}

function groupCpuMs(pgid: number): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // Fields after the command name (which may hold spaces) start at state; pgrp is field 5,
    // utime 14 and stime 15 (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== pgid) continue;
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks / TICKS_PER_SECOND) * 1000;
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`npm start did not become ready within 120 s:\n${output()}`);
}

/** The Node options `npm start` gives the server: the words of package.json's "start" before the script. */
export function startNodeOptions(): string[] {
  const pkg = z
    .object({ scripts: z.object({ start: z.string() }) })
    .parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
  const words = pkg.scripts.start.split(/\s+/);
  const script = words.indexOf('cli/bin.js');
  if (words[0] !== 'node' || script < 0) throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return words.slice(1, script);
}

/**
 * Runs `npm start` with `env` (PORT and HOST set here) and waits until /readyz answers 200.
 * `nodeArgs` runs what `npm start` runs, `node <its options> cli/bin.js serve`, with these options
 * of Node's as well (V8's profiler cannot be asked for through NODE_OPTIONS).
 */
export async function startServer(env: Record<string, string>, nodeArgs?: string[]): Promise<ServerProcess> {
  const port = await freePort();
  const startedAt = Date.now();
  const [command, args] = nodeArgs
    ? [process.execPath, [...startNodeOptions(), ...nodeArgs, 'cli/bin.js', 'serve']]
    : ['npm', ['start', '--silent']];
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const pgid = child.pid;
  if (pgid === undefined) throw new Error('npm start did not start');
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitReady(url, child, () => log);
  } catch (err) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
    throw err;
  }
  return {
    url,
    startedAt,
    cpuMs: () => groupCpuMs(pgid),
    async stop() {
      try {
        process.kill(-pgid, 'SIGTERM');
      } catch {
        return;
      }
      const timer = setTimeout(() => process.kill(-pgid, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
