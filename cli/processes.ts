// Several copies of one `crm` command, one per core: `crm worker --processes N` (docs/webhooks.md
// "Worker processes"). The command's own process becomes a supervisor that runs N children, each
// the same command with `--processes 1` (a full process of its own: its own event loop, database
// pool and BullMQ worker), and nothing else.
//
// - Children are forked in their own process group, so a Ctrl-C in a terminal (SIGINT to the
//   foreground group) reaches the supervisor only, which hands ONE SIGTERM to each child: a child
//   treats a second signal as "stop now", so it must not get the terminal's signal and ours.
// - A second signal to the supervisor is passed on as a second signal: the children stop at once.
// - A child that exits while no stop was asked (a crash) stops the others and the supervisor exits
//   with its code, so the service manager restarts the whole set rather than running with fewer.
// - A supervisor killed outright (SIGKILL) closes the children's IPC channel; each child then stops
//   gracefully by itself (stopWithParent), so none is left running on its own.
import { type ChildProcess, fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { Logger } from '../core/logger.ts';
import { UsageError } from './remote.ts';

/** The environment variable that numbers a child (1..N) for its logs; unset in a single process. */
export const PROCESS_INDEX_ENV = 'CRM_PROCESS_INDEX';

/**
 * Reads a `--processes` value: a whole number >= 1, or `auto` for one per core
 * (os.availableParallelism()). Undefined means 1.
 */
export function parseProcessCount(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (raw === 'auto') return availableParallelism();
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1)
    throw new UsageError(`--processes must be a whole number >= 1 or "auto", got "${raw}"`);
  return count;
}

export interface ChildProcessesOptions {
  /** How many children. */
  count: number;
  /** Each child's command line after the script (e.g. ['worker', '--processes', '1']). */
  args: string[];
  logger: Logger;
  /** The children's environment (this process's by default); each also gets CRM_PROCESS_INDEX. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Runs `count` copies of this script with `args` until SIGTERM or SIGINT (passed on to every child)
 * or until one child exits by itself; resolves with the exit code once every child has exited: 0
 * when all stopped cleanly after a stop signal, else the first non-zero code.
 */
export function runChildProcesses(options: ChildProcessesOptions): Promise<number> {
  const script = process.argv[1];
  if (!script) throw new Error('cannot tell which script to run in the child processes');
  const { logger } = options;
  return new Promise<number>((resolve) => {
    const children = new Set<ChildProcess>();
    let signals = 0;
    let exitCode = 0;
    const stopAll = (signal: NodeJS.Signals) => {
      for (const child of children) child.kill(signal);
    };
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      logger.info(
        { signal, children: children.size },
        signals === 1 ? 'stopping worker processes' : 'second stop signal, stopping now',
      );
      // The first signal asks each child to finish its running jobs; a second one, to stop now.
      stopAll('SIGTERM');
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    for (let index = 1; index <= options.count; index++) {
      const child = fork(script, options.args, {
        env: { ...(options.env ?? process.env), [PROCESS_INDEX_ENV]: String(index) },
        // Its own process group: a terminal's Ctrl-C reaches the supervisor only (header).
        detached: true,
        stdio: 'inherit',
      });
      children.add(child);
      child.on('exit', (code, signal) => {
        children.delete(child);
        const clean = code === 0 && signals > 0;
        if (!clean) {
          if (exitCode === 0) exitCode = code ?? 1;
          logger.error({ process: index, code, signal }, 'worker process exited');
          // One child down without a stop asked for: stop the others, so the set restarts as one.
          if (signals === 0) {
            signals = 1;
            stopAll('SIGTERM');
          }
        }
        if (children.size === 0) {
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
          resolve(exitCode);
        }
      });
    }
    logger.info({ processes: options.count }, 'worker processes started');
  });
}

/**
 * In a child of runChildProcesses: when the supervisor is gone (its IPC channel closes without a
 * stop signal, e.g. it was killed), stop this process the way SIGTERM would.
 */
export function stopWithParent(): void {
  if (!process.send) return;
  process.once('disconnect', () => {
    process.kill(process.pid, 'SIGTERM');
  });
}
