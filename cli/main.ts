// The `crm` command: parses the command line and hands over to the command's own file (serve,
// worker, migrate, tools, keys, admin), loaded only when that command runs, so `crm --help` or a
// typo loads almost nothing. Every failure is one line on stderr, `crm: <message>`, and a non-zero
// exit: 2 for bad usage, 1 for a failed operation. It is the process entry (cli/bin.js and
// `npm start` both run its build).
import { describeError, printHelp } from './output.ts';
import { UsageError } from './remote.ts';

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

const HELP = `Usage: crm <command> [options]

Commands:
  serve                 Run the HTTP server (REST, MCP, auth and admin API)
  worker                Run the webhook relay and delivery workers on their own (needs REDIS_URL)
  migrate               Apply database migrations, then exit
  tools list            List the tools of the registry
  tools call <name>     Call a tool on a running server through its REST API
  keys create           Create a personal access token (API key) on a running server
  admin create-org      Create an organization with its owner
  admin set-org         Change an organization's plan, status or disabled features
  admin create-oauth-token
                        Issue an OAuth access token for a user

Run "crm <command> --help" for a command's options. Configuration comes from the environment:
DATABASE_URL (PostgreSQL; without it the embedded PGlite database under DATA_DIR, default ./.data),
PORT, HOST, JWT_SECRET, CRM_ADMIN_TOKEN, SIGNUP_ENABLED, DEFAULT_PLAN, CORS_ALLOWED_ORIGINS, LOG_LEVEL.
"tools call" and "keys create" talk to a running server instead: CRM_URL (or --url, default
http://localhost:3000) and CRM_TOKEN (or --token).`;

type Command = (args: string[]) => Promise<number>;

/** Each command's module, imported on use: loading every area takes time `crm --help` should not pay. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.ts')).serveCommand,
  worker: async () => (await import('./worker.ts')).workerCommand,
  migrate: async () => (await import('./migrate.ts')).migrateCommand,
  tools: async () => (await import('./tools.ts')).toolsCommand,
  keys: async () => (await import('./keys.ts')).keysCommand,
  admin: async () => (await import('./admin.ts')).adminCommand,
};

async function dispatch(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    return printHelp(HELP);
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!load) throw new UsageError(`unknown command "${command}" (see crm --help)`);
  return (await load())(rest);
}

function isUsageError(err: unknown): boolean {
  // parseArgs reports unknown options and missing values with ERR_PARSE_ARGS_* codes.
  return (
    err instanceof UsageError ||
    (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))
  );
}

async function main(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (err) {
    process.stderr.write(`crm: ${describeError(err)}\n`);
    return isUsageError(err) ? EXIT_USAGE : EXIT_FAILURE;
  }
}

const code = await main(process.argv.slice(2));
// serve has closed its server and services by now; exit so no stray handle keeps the process up.
process.exit(code);
