// `crm serve --processes N`: N API processes on one machine sharing the port (node:cluster). The
// primary serves nothing: it migrates once, forks the processes, restarts one that dies (with a
// growing delay, so a process that dies at once does not spin), and on SIGTERM or SIGINT asks each
// to stop gracefully and exits with 0 only when all did. The background workers run in one process
// (the first), never N times. What the processes share goes through PostgreSQL and Redis, which is
// why N > 1 needs both (docs/scaling.md "Many API processes").
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { Config } from '../core/config.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import { withDatabase } from './database.ts';
import { UsageError } from './remote.ts';

/** The message the primary sends an API process to stop it as SIGTERM would (cli/server.ts). */
const STOP_MESSAGE = 'crm:stop';

/** Restart delays: doubled on each exit, from the first to the cap, back to the first once stable. */
const RESTART_FIRST_MS = 1000;
const RESTART_MAX_MS = 30_000;
/** A process that has served this long before it exits starts its slot's backoff afresh. */
const STABLE_MS = 60_000;
/** A slot whose process exits this many times in a row before listening stops the whole server. */
const FAILED_STARTS_MAX = 3;

export const MAX_PROCESSES = 64;

/** The number of API processes from --processes or PROCESSES (the flag wins), 1 when neither is set. */
export function parseProcesses(flag: string | undefined, env: string | undefined): number {
  const raw = flag ?? (env === '' ? undefined : env);
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_PROCESSES) {
    throw new UsageError(
      `--processes (PROCESSES) must be a whole number from 1 to ${MAX_PROCESSES}, got "${raw}"`,
    );
  }
  return n;
}

/**
 * Refuses what several processes cannot share: the embedded database belongs to one process
 * (core/db/lock.ts), and without Redis each process would count its own request limits, keep its
 * own MCP log levels and run only the jobs it enqueued itself (docs/decisions.md).
 */
export function checkClusterConfig(config: Config, processes: number): void {
  if (processes === 1) return;
  if (!config.databaseUrl) {
    throw new UsageError(
      `--processes ${processes} needs DATABASE_URL: the embedded database under DATA_DIR serves one process`,
    );
  }
  if (!config.redisUrl) {
    throw new UsageError(
      `--processes ${processes} needs REDIS_URL: request limits, credential cache invalidation, MCP log ` +
        'levels and the job queue are shared through Redis; without it each process would keep its own',
    );
  }
}

interface Slot {
  index: number;
  /** Exits since the slot last served STABLE_MS: the exponent of the next restart delay. */
  exits: number;
  /** Exits in a row before the process listened. */
  failedStarts: number;
}

function restartDelayMs(exits: number): number {
  return Math.min(RESTART_MAX_MS, RESTART_FIRST_MS * 2 ** Math.max(0, exits - 1));
}

/**
 * Runs the primary: migrates, forks `processes` API processes, supervises them until SIGTERM or
 * SIGINT; resolves with the exit code once every process has exited.
 */
export async function runCluster(
  config: Config,
  options: { processes: number; workers: boolean },
): Promise<number> {
  const logger = createLogger(config.logLevel);
  // Once, before any API process starts: they open the database without migrating.
  await withDatabase(async () => {});
  const shared: Record<string, string> = {};
  if (!config.jwtSecret) {
    // Each process would otherwise make its own key, and a session signed by one would be refused by
    // the next; one key for the server's lifetime is what a single process has.
    shared.JWT_SECRET = randomBytes(48).toString('base64url');
    logger.warn(
      'JWT_SECRET is not set: the API processes share a key made at start; sessions end at restart',
    );
  }
  logger.info({ processes: options.processes, workers: options.workers }, 'starting API processes');
  return supervise(logger, options, shared);
}

function supervise(
  logger: Logger,
  options: { processes: number; workers: boolean },
  shared: Record<string, string>,
): Promise<number> {
  return new Promise<number>((resolve) => {
    const live = new Set<Worker>();
    const timers = new Set<NodeJS.Timeout>();
    let stopping = false;
    let failed = false;

    const finishIfDone = () => {
      if (stopping && live.size === 0) {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        logger.info({ code: failed ? 1 : 0 }, 'stopped');
        resolve(failed ? 1 : 0);
      }
    };

    const stopAll = () => {
      stopping = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const worker of live) {
        if (worker.isConnected()) worker.send(STOP_MESSAGE);
      }
      finishIfDone();
    };

    const start = (slot: Slot) => {
      // The first process runs the relay, the sweeper and the job workers; the others serve only.
      const workers = slot.index === 0 && options.workers;
      // The primary's bin.js checked the build (cli/bin.js): a process need not stat every source again.
      const worker = cluster.fork({ ...shared, WORKERS: workers ? 'on' : 'off', CRM_SKIP_BUILD_CHECK: '1' });
      const pid = worker.process.pid;
      const startedAt = Date.now();
      let listening = false;
      live.add(worker);
      worker.once('listening', () => {
        listening = true;
        slot.failedStarts = 0;
        logger.info({ slot: slot.index, child_pid: pid, workers }, 'API process listening');
      });
      worker.once('exit', (code, signal) => {
        live.delete(worker);
        if (stopping) {
          if (code !== 0) failed = true;
          logger.info({ slot: slot.index, child_pid: pid, code, signal }, 'API process stopped');
          finishIfDone();
          return;
        }
        if (Date.now() - startedAt >= STABLE_MS) slot.exits = 0;
        slot.exits += 1;
        if (!listening) slot.failedStarts += 1;
        if (slot.failedStarts >= FAILED_STARTS_MAX) {
          logger.error(
            { slot: slot.index, child_pid: pid, code, signal, failed_starts: slot.failedStarts },
            'API process keeps exiting before it listens; stopping the server',
          );
          failed = true;
          stopAll();
          return;
        }
        const delay = restartDelayMs(slot.exits);
        logger.warn(
          { slot: slot.index, child_pid: pid, code, signal, restart_in_ms: delay },
          'API process exited; restarting',
        );
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!stopping) start(slot);
        }, delay);
        timers.add(timer);
      });
    };

    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        // A second signal: the processes get one too, which makes each exit without waiting.
        logger.warn({ signal }, 'second stop signal, stopping the API processes now');
        failed = true;
        for (const worker of live) worker.process.kill('SIGTERM');
        return;
      }
      signalled = true;
      logger.info({ signal }, 'stopping: each API process drains its in-flight requests');
      stopAll();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);

    for (let index = 0; index < options.processes; index++) start({ index, exits: 0, failedStarts: 0 });
  });
}

/**
 * In an API process: resolves when the primary asks it to stop. Listening starts at once, so a stop
 * asked while the process is still starting is kept and honoured as soon as it serves.
 */
export function stopRequestedByPrimary(): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (message !== STOP_MESSAGE) return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
  });
}

/** True in an API process forked by runCluster. */
export function isClusterProcess(): boolean {
  return cluster.isWorker;
}
