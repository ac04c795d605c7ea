// `crm worker`: the relay, the sweeper and the BullMQ workers as their own process, beside API
// nodes started with `crm serve --no-workers`.
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config.ts';
import { printHelp } from './output.ts';
import { UsageError } from './remote.ts';

const HELP = `Usage: crm worker

Runs the webhook outbox relay, the delivery sweeper and the BullMQ delivery workers as their own
process, for deployments that run "crm serve --no-workers" (or WORKERS=off). Needs REDIS_URL and
DATABASE_URL. SIGTERM or SIGINT stops taking jobs, lets running deliveries finish, then exits 0.`;

export async function workerCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) return printHelp(HELP);
  const config = loadConfig();
  if (!config.redisUrl) {
    throw new UsageError('crm worker needs REDIS_URL (without Redis, crm serve runs the workers itself)');
  }
  if (!config.databaseUrl) {
    throw new UsageError('crm worker needs DATABASE_URL (the embedded database serves one process)');
  }
  const { queueOptionsFromEnv, untilStopSignal } = await import('./server.ts');
  const { createServices } = await import('../app/services.ts');
  const { startBackgroundWork } = await import('../workers/runtime.ts');
  const { JOBS } = await import('../tools/index.ts');
  // The declared jobs: the queue checks payloads and takes attempts and backoff from them.
  const services = await createServices(config, { queue: queueOptionsFromEnv(), jobs: JOBS });
  const background = await startBackgroundWork(services);
  services.logger.info({ database: services.db.kind }, 'crm worker started');
  return untilStopSignal(services.logger, 'stopping: finishing running jobs', async () => {
    await background.stop();
    await services.close();
  });
}
