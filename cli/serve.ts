// `crm serve`: the HTTP server with, by default, the background workers in the same process; with
// --processes N, N such processes sharing the port under a supervising primary (cli/cluster.ts).
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config.ts';
import {
  checkClusterConfig,
  isClusterProcess,
  MAX_PROCESSES,
  parseProcesses,
  runCluster,
  stopRequestedByPrimary,
} from './cluster.ts';
import { printHelp } from './output.ts';

const HELP = `Usage: crm serve

Runs the server on PORT (default 3000) and HOST (default 0.0.0.0), migrating the database first.
SIGTERM or SIGINT stops it gracefully: no new connections, in-flight requests finish, then exit 0.
It also relays webhook events and runs the delivery workers in-process, unless WORKERS=off or:
  --no-workers    Leave that to a separate "crm worker" process
  --processes N   Run N API processes sharing the port (1 to ${MAX_PROCESSES}; or PROCESSES=N), under a
                  primary that migrates once, restarts a process that dies and stops them all on
                  SIGTERM or SIGINT. The workers run in one of them. Needs DATABASE_URL and REDIS_URL.`;

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      'no-workers': { type: 'boolean' },
      processes: { type: 'string' },
    },
  });
  if (values.help) return printHelp(HELP);
  const workers = !values['no-workers'] && process.env.WORKERS !== 'off';
  if (isClusterProcess()) {
    // An API process of the primary below: it migrated already and tells this one when to stop.
    const stopWhen = stopRequestedByPrimary();
    const { runServer } = await import('./server.ts');
    return runServer(loadConfig(), { workers, migrate: false, stopWhen });
  }
  const processes = parseProcesses(values.processes, process.env.PROCESSES);
  const config = loadConfig();
  checkClusterConfig(config, processes);
  if (processes > 1) return runCluster(config, { processes, workers });
  // The server, the services and every area load only when a server really starts.
  const { runServer } = await import('./server.ts');
  return runServer(config, { workers });
}
