// `crm serve`: the HTTP server with, by default, the background workers in the same process.
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config.ts';
import { printHelp } from './output.ts';

const HELP = `Usage: crm serve

Runs the server on PORT (default 3000) and HOST (default 0.0.0.0), migrating the database first.
SIGTERM or SIGINT stops it gracefully: no new connections, in-flight requests finish, then exit 0.
It also relays webhook events and runs the delivery workers in-process, unless WORKERS=off or:
  --no-workers    Leave that to a separate "crm worker" process`;

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, 'no-workers': { type: 'boolean' } },
  });
  if (values.help) return printHelp(HELP);
  const workers = !values['no-workers'] && process.env.WORKERS !== 'off';
  // The server, the services and every area load only when a server really starts.
  const { runServer } = await import('./server.ts');
  return runServer(loadConfig(), { workers });
}
