// `crm worker`: the relay, the sweeper and the BullMQ workers as their own process, beside API
// nodes started with `crm serve --no-workers`; with `--processes N`, N such processes under one
// supervisor (cli/processes.ts), one per core.
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config.ts';
import { printHelp } from './output.ts';
import { PROCESS_INDEX_ENV, parseProcessCount, runChildProcesses, stopWithParent } from './processes.ts';
import { UsageError } from './remote.ts';

const HELP = `Usage: crm worker [--processes N|auto]

Runs the webhook outbox relay, the delivery sweeper and the BullMQ delivery workers as their own
process, for deployments that run "crm serve --no-workers" (or WORKERS=off). Needs REDIS_URL and
DATABASE_URL. SIGTERM or SIGINT stops taking jobs, lets running deliveries finish, then exits 0.

Options:
  --processes N   Run N worker processes (default 1; "auto": one per core), each a full worker with
                  its own database pool and WORKER_CONCURRENCY jobs at a time. This process only
                  supervises them: a stop signal is passed on to each, and one that exits by itself
                  stops the others (exit code: its own), so the service manager restarts the set.`;

export async function workerCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, processes: { type: 'string' } },
  });
  if (values.help) return printHelp(HELP);
  const processes = parseProcessCount(values.processes);
  const config = loadConfig();
  if (!config.redisUrl) {
    throw new UsageError('crm worker needs REDIS_URL (without Redis, crm serve runs the workers itself)');
  }
  if (!config.databaseUrl) {
    throw new UsageError('crm worker needs DATABASE_URL (the embedded database serves one process)');
  }
  if (processes > 1) {
    const { createLogger } = await import('../core/logger.ts');
    return runChildProcesses({
      count: processes,
      args: ['worker', '--processes', '1'],
      logger: createLogger(config.logLevel),
    });
  }
  const index = process.env[PROCESS_INDEX_ENV];
  // A child of a supervisor stops with it, should the supervisor be killed without a signal.
  if (index) stopWithParent();
  const { queueOptionsFromEnv, untilStopSignal } = await import('./server.ts');
  const { createServices } = await import('../app/services.ts');
  const { startBackgroundWork } = await import('../workers/runtime.ts');
  const { JOBS } = await import('../tools/index.ts');
  // The declared jobs: the queue checks payloads and takes attempts and backoff from them.
  const services = await createServices(config, { queue: queueOptionsFromEnv(), jobs: JOBS });
  const background = await startBackgroundWork(services);
  services.logger.info(
    { database: services.db.kind, ...(index ? { process: Number(index) } : {}) },
    'crm worker started',
  );
  return untilStopSignal(services.logger, 'stopping: finishing running jobs', async () => {
    await background.stop();
    await services.close();
  });
}
