// The `crm` command: serve, migrate, tools list and call, keys create, and the operator's admin
// commands. It is the process entry (cli/bin.js and `npm start` both load it). Admin commands call the
// same core/admin.ts functions as the admin HTTP API, so validation and rules are identical on both;
// `tools call` and `keys create` go through a running server's REST API with a token, so they act
// as that token's user with its scopes and limits. Every failure is one line on stderr,
// `crm: <message>`, and a non-zero exit.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { requiredScopes } from '../core/access.ts';
import { loadConfig } from '../core/config.ts';
import type { Database } from '../core/db/client.ts';
import { AppError } from '../core/errors.ts';
import { createLogger } from '../core/logger.ts';
import type { Route } from '../core/route.ts';
import { adminCall, adminRemote } from './admin-remote.ts';
import {
  CliError,
  DEFAULT_URL,
  type HttpAnswer,
  httpCall,
  isRecord,
  parseBaseUrl,
  rootMessage,
  UsageError,
} from './remote.ts';

// The registry, the services and the server are imported by the commands that use them: loading
// every area (PDF fonts, the S3 client, BullMQ...) takes seconds that `crm --help`, a typo or an
// admin command should not pay.
const registry = () => import('../tools/index.ts');
const admin = () => import('../core/admin.ts');

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

const HELP = {
  crm: `Usage: crm <command> [options]

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
http://localhost:3000) and CRM_TOKEN (or --token).`,
  serve: `Usage: crm serve

Runs the server on PORT (default 3000) and HOST (default 0.0.0.0), migrating the database first.
SIGTERM or SIGINT stops it gracefully: no new connections, in-flight requests finish, then exit 0.
It also relays webhook events and runs the delivery workers in-process, unless WORKERS=off or:
  --no-workers    Leave that to a separate "crm worker" process`,
  worker: `Usage: crm worker

Runs the webhook outbox relay, the delivery sweeper and the BullMQ delivery workers as their own
process, for deployments that run "crm serve --no-workers" (or WORKERS=off). Needs REDIS_URL and
DATABASE_URL. SIGTERM or SIGINT stops taking jobs, lets running deliveries finish, then exits 0.`,
  migrate: `Usage: crm migrate

Applies pending migrations to the database named by DATABASE_URL (or the embedded PGlite
database under DATA_DIR), then exits.`,
  tools: `Usage: crm tools <subcommand> [options]

Subcommands:
  list           List every tool with its kind, permission, REST scope and plan feature
  call <name>    Call a tool on a running server through its REST API`,
  toolsList: `Usage: crm tools list [--json]

Lists every tool: name, kind (read/write), role permission, the scope REST checks, plan feature.
  --json    Print an array of {name, title, description, access, annotations, toolset}`,
  toolsCall: `Usage: crm tools call <name> [--input <json>] [--out <path>] [--url <url>] [--token <token>]

Calls a tool on a running server through its REST route, as the token's user. Path parameters
(such as "id") are taken from the input; the rest of the input is sent as the query string (GET)
or as the JSON body.
  --input    The tool's input as a JSON object (default {}); "crm tools list --json" shows the tools
  --url      Base URL of the server (default $CRM_URL, else http://localhost:3000)
  --token    Bearer token: a personal access token or a session token (default $CRM_TOKEN)
  --out      Write the answer to this file instead of stdout; for tools that answer a file
             (get_invoice_pdf, get_estimate_pdf) the bytes, and one line saying what was written
Prints the JSON response and exits 0. A file answer without --out goes to stdout only when stdout
is redirected (crm tools call get_invoice_pdf ... > invoice.pdf); on a terminal it exits 2 saying
to use --out. An HTTP error prints one line, "crm: <status> <error>: ..."
and exits 1; an unknown tool or an --input that is not a JSON object exits 2.

Example:
  crm tools call get_lead --input '{"id":"65f0c2a1b3d4e5f601234567"}'`,
  keys: `Usage: crm keys <subcommand> [options]

Subcommands:
  create    Create a personal access token (API key) for the token's user on a running server`,
  keysCreate: `Usage: crm keys create --label <label> [--scopes <s1,s2>] [--url <url>] [--token <token>]
                       [--json]

Creates a personal access token for the user of --token, on a running server
(POST /api/v1/settings/api-keys).
  --label    A label, unique among the user's keys
  --scopes   Comma-separated scopes, e.g. read:leads,write:leads,mcp:read; without it the key gets
             read and write on the core records (MCP scopes must be asked for explicitly)
  --url      Base URL of the server (default $CRM_URL, else http://localhost:3000)
  --token    Bearer token of the user (a session token, or a key holding the scopes asked for;
             default $CRM_TOKEN)
  --json     Print {key, plain_token} as JSON
The token is printed once and cannot be shown again.`,
  admin: `Usage: crm admin <subcommand> [options]

Subcommands:
  create-org            Create an organization with its owner
  set-org <id>          Change an organization's plan, status or disabled features
  create-oauth-token    Issue an OAuth access token for a user

They work directly on the database named by DATABASE_URL (or the embedded PGlite database under
DATA_DIR), or, with --url <server>, through that running server's admin API (/admin/v1) with the
token in CRM_ADMIN_TOKEN. The embedded database belongs to one process: while "crm serve" runs on a
DATA_DIR, an admin command on the same DATA_DIR stops at once naming it; use --url instead.`,
  createOrg: `Usage: crm admin create-org --name <name> --plan <plan> --owner-name <name>
                            --owner-email <email> --owner-password <password> [--json]

  --name             Organization name
  --plan             free, starter, pro or enterprise
  --owner-name       The owner's display name
  --owner-email      The owner's email (unique across the service)
  --owner-password   The owner's password, 8 to 200 characters
  --json             Print {organization, user} as JSON
  --url              A running server: go through its admin API (needs CRM_ADMIN_TOKEN)`,
  setOrg: `Usage: crm admin set-org <organization-id> [--plan <plan>] [--status <status>]
                          [--disable-features <a,b>] [--json]

  --plan               free, starter, pro or enterprise
  --status             active, inactive or suspended (inactive and suspended get 403 on every call)
  --disable-features   Comma-separated features to switch off; replaces the list ("" clears it)
  --json               Print {organization} as JSON
  --url                A running server: go through its admin API (needs CRM_ADMIN_TOKEN)`,
  createOauthToken: `Usage: crm admin create-oauth-token --user-id <id> --app-name <name> --scopes <s1,s2>
                                     [--expires-in-seconds <n>] [--json]

  --user-id              The user the token acts as (24 hex characters)
  --app-name             Name of the installed app, 1 to 100 characters
  --scopes               Comma-separated scopes, e.g. read:leads,mcp:read (1 to 50)
  --expires-in-seconds   Lifetime; without it the token lives until revoked
  --json                 Print {oauth_token, token} as JSON
  --url                  A running server: go through its admin API (needs CRM_ADMIN_TOKEN)
The token is printed once and cannot be shown again.`,
};

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

function printJson(value: unknown): void {
  print(JSON.stringify(value, null, 2));
}

function commaList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** One line describing a failure; AppError field names become the flags that carry them. */
function describeError(err: unknown, flags: Record<string, string> = {}): string {
  let text: string;
  if (err instanceof CliError) {
    text = err.message;
  } else if (err instanceof AppError) {
    text = err.body.message ?? err.body.error;
    if (err.body.details?.length) {
      const details = err.body.details.map((d) => `${flags[d.field] ?? d.field}: ${d.message}`);
      text = `${text}: ${details.join('; ')}`;
    }
  } else if (err instanceof Error) {
    text = rootMessage(err);
  } else {
    text = String(err);
  }
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** Opens the configured database, brings its schema up to date, runs `fn`, and closes it. */
async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const { openDatabase } = await import('../core/db/client.ts');
  const { connectInvalidationPublisher } = await import('../core/auth/cache.ts');
  const db = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
    poolMax: 2,
    timeouts: config.dbTimeouts,
  });
  // With REDIS_URL, running API nodes cache verified credentials: publish this process's changes
  // (suspension, plan, revoked tokens) so they take effect on their very next request.
  const disconnect = config.redisUrl
    ? connectInvalidationPublisher(db, config.redisUrl, createLogger('warn'))
    : undefined;
  try {
    await db.migrate();
    return await fn(db);
  } finally {
    disconnect?.();
    await db.close();
  }
}

async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, 'no-workers': { type: 'boolean' } },
  });
  if (values.help) return help('serve');
  const workers = !values['no-workers'] && process.env.WORKERS !== 'off';
  const { runServer } = await import('./serve.ts');
  return runServer(loadConfig(), { workers });
}

async function workerCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) return help('worker');
  const config = loadConfig();
  if (!config.redisUrl) {
    throw new UsageError('crm worker needs REDIS_URL (without Redis, crm serve runs the workers itself)');
  }
  if (!config.databaseUrl) {
    throw new UsageError('crm worker needs DATABASE_URL (the embedded database serves one process)');
  }
  const { queueOptionsFromEnv, untilStopSignal } = await import('./serve.ts');
  const { createServices } = await import('../app/services.ts');
  const { startBackgroundWork } = await import('../workers/runtime.ts');
  const services = await createServices(config, { queue: queueOptionsFromEnv() });
  const background = await startBackgroundWork(services);
  services.logger.info({ database: services.db.kind }, 'crm worker started');
  return untilStopSignal(services.logger, 'stopping: finishing running jobs', async () => {
    await background.stop();
    await services.close();
  });
}

async function migrateCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) return help('migrate');
  const config = loadConfig();
  await withDatabase(async () => {});
  print(
    config.databaseUrl
      ? 'Migrations applied (PostgreSQL)'
      : `Migrations applied (embedded database under ${config.dataDir})`,
  );
  return 0;
}

async function toolsListCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' } },
  });
  if (values.help) return help('toolsList');
  const { TOOLS } = await registry();
  if (values.json) {
    printJson(
      TOOLS.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        access: t.access,
        annotations: t.annotations,
        toolset: t.toolset,
      })),
    );
    return 0;
  }
  const header = ['NAME', 'KIND', 'PERMISSION', 'SCOPE', 'FEATURE'];
  const rows = TOOLS.map((t) => [
    t.name,
    t.access.kind,
    t.access.permission ?? '-',
    requiredScopes('rest', t.access.kind, t.access.resource)?.join('|') ?? '-',
    t.access.feature ?? '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows]) {
    print(
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    );
  }
  return 0;
}

async function createOrgCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      name: { type: 'string' },
      plan: { type: 'string' },
      'owner-name': { type: 'string' },
      'owner-email': { type: 'string' },
      'owner-password': { type: 'string' },
      url: { type: 'string' },
    },
  });
  if (values.help) return help('createOrg');
  const input = {
    name: values.name,
    plan: values.plan,
    owner: { name: values['owner-name'], email: values['owner-email'], password: values['owner-password'] },
  };
  // Resolved first, so a missing CRM_ADMIN_TOKEN is a usage error (exit 2) like a bad flag.
  const remote = values.url === undefined ? undefined : adminRemote(values.url);
  const result = await withFlags(
    {
      name: '--name',
      plan: '--plan',
      owner: '--owner-*',
      'owner.name': '--owner-name',
      'owner.email': '--owner-email',
      'owner.password': '--owner-password',
    },
    async () => {
      const core = await admin();
      if (remote === undefined) return withDatabase((db) => core.createOrganization(db, input));
      const answer = await adminCall(remote, 'POST', '/organizations', input);
      return core.createOrganizationOutput.parse(answer);
    },
  );
  if (values.json) {
    printJson(result);
  } else {
    const { organization: org, user } = result;
    print(`Organization ${org._id} "${org.name}" created on plan ${org.plan}`);
    print(`Owner ${user._id} ${user.email}`);
  }
  return 0;
}

async function setOrgCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      plan: { type: 'string' },
      status: { type: 'string' },
      'disable-features': { type: 'string' },
      url: { type: 'string' },
    },
  });
  if (values.help) return help('setOrg');
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) {
    throw new UsageError('admin set-org takes exactly one organization id (see crm admin set-org --help)');
  }
  const disabled = values['disable-features'];
  const changes = {
    ...(values.plan !== undefined ? { plan: values.plan } : {}),
    ...(values.status !== undefined ? { status: values.status } : {}),
    ...(disabled !== undefined ? { disabled_features: commaList(disabled) } : {}),
  };
  // Resolved first, so a missing CRM_ADMIN_TOKEN is a usage error (exit 2) like a bad flag.
  const remote = values.url === undefined ? undefined : adminRemote(values.url);
  const result = await withFlags(
    {
      id: '<organization-id>',
      plan: '--plan',
      status: '--status',
      disabled_features: '--disable-features',
      '(root)': 'options',
    },
    async () => {
      const core = await admin();
      if (remote === undefined) return withDatabase((db) => core.updateOrganization(db, id, changes));
      const path = `/organizations/${encodeURIComponent(id)}`;
      return core.organizationOutput.parse(await adminCall(remote, 'PATCH', path, changes));
    },
  );
  if (values.json) {
    printJson(result);
  } else {
    const org = result.organization;
    const features = org.disabled_features.length ? org.disabled_features.join(',') : 'none';
    print(`Organization ${org._id}: plan ${org.plan}, status ${org.status}, disabled features: ${features}`);
  }
  return 0;
}

async function createOauthTokenCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      'user-id': { type: 'string' },
      'app-name': { type: 'string' },
      scopes: { type: 'string' },
      'expires-in-seconds': { type: 'string' },
      url: { type: 'string' },
    },
  });
  if (values.help) return help('createOauthToken');
  const ttl = values['expires-in-seconds'];
  const input = {
    user_id: values['user-id'],
    app_name: values['app-name'],
    scopes: values.scopes === undefined ? undefined : commaList(values.scopes),
    ...(ttl !== undefined ? { expires_in_seconds: Number(ttl) } : {}),
  };
  // Resolved first, so a missing CRM_ADMIN_TOKEN is a usage error (exit 2) like a bad flag.
  const remote = values.url === undefined ? undefined : adminRemote(values.url);
  const result = await withFlags(
    {
      user_id: '--user-id',
      app_name: '--app-name',
      scopes: '--scopes',
      expires_in_seconds: '--expires-in-seconds',
    },
    async () => {
      const core = await admin();
      if (remote === undefined) return withDatabase((db) => core.createOauthToken(db, input));
      const answer = await adminCall(remote, 'POST', '/oauth-tokens', input);
      return core.createOauthTokenOutput.parse(answer);
    },
  );
  if (values.json) {
    printJson(result);
  } else {
    const t = result.oauth_token;
    print(`OAuth token ${t._id} for "${t.app_name}" (user ${t.user_id}), scopes ${t.scopes.join(',')}`);
    print(`Expires: ${t.expires_at ?? 'never (until revoked)'}`);
    print(result.token);
    print('Store the token now: it cannot be shown again.');
  }
  return 0;
}

const remoteOptions: { url: { type: 'string' }; token: { type: 'string' } } = {
  url: { type: 'string' },
  token: { type: 'string' },
};

interface Remote {
  base: URL;
  token: string | undefined;
}

function resolveRemote(values: { url?: string | undefined; token?: string | undefined }): Remote {
  const base = parseBaseUrl(values.url ?? (process.env.CRM_URL || DEFAULT_URL));
  const token = values.token ?? process.env.CRM_TOKEN;
  return { base, token: token || undefined };
}

/** Sends one request to the server's REST API (/api/v1). */
function apiRequest(
  remote: Remote,
  method: string,
  path: string,
  options: { query?: URLSearchParams; body?: Record<string, unknown> } = {},
): Promise<HttpAnswer> {
  return httpCall({ ...remote, method, path: `/api/v1${path}`, ...options });
}

/** The JSON of an answer that must be JSON. */
function jsonOf(answer: HttpAnswer): unknown {
  if (answer.kind === 'file')
    throw new CliError(`the server answered a file (${answer.contentType}), not JSON`);
  return answer.value;
}

async function toolRoute(name: string): Promise<Route> {
  const { ROUTES, TOOLS } = await registry();
  if (!TOOLS.some((t) => t.name === name)) {
    throw new UsageError(`unknown tool "${name}" (see crm tools list)`);
  }
  const found = ROUTES.find((r) => r.tool.name === name);
  if (!found) throw new UsageError(`tool "${name}" has no REST route; call it over MCP`);
  return found;
}

/** A query-string value; objects cannot be expressed in one. */
function queryValue(name: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) {
    return value.map(String).join(',');
  }
  throw new UsageError(`--input field "${name}" cannot be sent in a GET query string (use a scalar)`);
}

/** Calls `name` through its REST route: path parameters from the input, the rest as query or body. */
async function callTool(remote: Remote, name: string, input: Record<string, unknown>): Promise<HttpAnswer> {
  const found = await toolRoute(name);
  const rest: Record<string, unknown> = { ...input };
  const path = found.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, param: string) => {
    const value = rest[param];
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new UsageError(`--input needs "${param}" for ${found.method} /api/v1${found.path}`);
    }
    delete rest[param];
    return encodeURIComponent(String(value));
  });
  if (found.method === 'GET') {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(rest)) {
      if (value !== undefined && value !== null) query.set(key, queryValue(key, value));
    }
    return apiRequest(remote, 'GET', path, { query });
  }
  return apiRequest(remote, found.method, path, Object.keys(rest).length > 0 ? { body: rest } : {});
}

function parseInput(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--input is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isRecord(value)) throw new UsageError('--input must be a JSON object, e.g. {"id":"..."}');
  return value;
}

async function toolsCallCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      input: { type: 'string' },
      out: { type: 'string' },
      ...remoteOptions,
    },
  });
  if (values.help) return help('toolsCall');
  const [name, ...extra] = positionals;
  if (name === undefined || extra.length > 0) {
    throw new UsageError('tools call takes exactly one tool name (see crm tools call --help)');
  }
  const input = parseInput(values.input);
  const answer = await callTool(resolveRemote(values), name, input);
  if (answer.kind === 'file') return saveFile(name, answer, values.out);
  if (values.out !== undefined) {
    await writeFile(values.out, `${JSON.stringify(answer.value, null, 2)}\n`);
    print(`Wrote the JSON answer to ${values.out}`);
  } else if (answer.value !== null) {
    printJson(answer.value);
  }
  return 0;
}

/**
 * A file answer (an invoice PDF): written to --out; without it, to stdout only when stdout is a
 * pipe or a file (`> invoice.pdf`), never as binary onto a terminal: there one line says how.
 */
async function saveFile(
  name: string,
  file: Extract<HttpAnswer, { kind: 'file' }>,
  out: string | undefined,
): Promise<number> {
  const what = `${file.contentType}, ${file.bytes.length} bytes${file.filename ? `, "${file.filename}"` : ''}`;
  if (out !== undefined) {
    await writeFile(out, file.bytes);
    print(`Wrote ${out} (${what})`);
    return 0;
  }
  if (process.stdout.isTTY) {
    throw new UsageError(
      `${name} answers a file (${what}); write it with --out <path>${file.filename ? ` (e.g. --out ${file.filename})` : ''} or redirect stdout to a file`,
    );
  }
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(file.bytes, (err) => (err ? reject(err) : resolve())),
  );
  return 0;
}

function createdKey(value: unknown): {
  key: Record<string, unknown>;
  plain_token: string;
  warnings?: string[];
} {
  if (!isRecord(value) || !isRecord(value.key) || typeof value.plain_token !== 'string') {
    throw new CliError('the server answered without a key and its token');
  }
  const created = { key: value.key, plain_token: value.plain_token };
  // Unknown scopes are stored and grant nothing (tools/api-keys/tools.ts): the server names them.
  const warnings = Array.isArray(value.warnings) ? value.warnings.map(String) : [];
  return warnings.length > 0 ? { ...created, warnings } : created;
}

async function keysCreateCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      label: { type: 'string' },
      scopes: { type: 'string' },
      ...remoteOptions,
    },
  });
  if (values.help) return help('keysCreate');
  if (values.label === undefined)
    throw new UsageError('keys create needs --label (see crm keys create --help)');
  const input = {
    label: values.label,
    ...(values.scopes !== undefined ? { scopes: commaList(values.scopes) } : {}),
  };
  const result = createdKey(jsonOf(await callTool(resolveRemote(values), 'create_api_key', input)));
  if (values.json) {
    printJson(result);
  } else {
    const { key } = result;
    const scopes = Array.isArray(key.scopes) ? key.scopes.join(',') : '';
    print(
      `API key ${String(key.id)} "${String(key.label)}" (${String(key.token_prefix)}…), scopes ${scopes}`,
    );
    print(result.plain_token);
    print('Store the token now: it cannot be shown again.');
  }
  for (const warning of result.warnings ?? []) process.stderr.write(`crm: warning: ${warning}\n`);
  return 0;
}

/** Runs `fn`, renaming input field names in a validation failure to the flags the user typed. */
async function withFlags<T>(flags: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new CliError(describeError(err, flags), { cause: err });
  }
}

function help(topic: keyof typeof HELP): number {
  print(HELP[topic]);
  return 0;
}

async function dispatch(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      return help('crm');
    case 'serve':
      return serveCommand(rest);
    case 'worker':
      return workerCommand(rest);
    case 'migrate':
      return migrateCommand(rest);
    case 'tools': {
      const [sub, ...args] = rest;
      if (sub === undefined || sub === '--help' || sub === '-h') return help('tools');
      if (sub === 'list') return toolsListCommand(args);
      if (sub === 'call') return toolsCallCommand(args);
      throw new UsageError(`unknown tools subcommand "${sub}" (see crm tools --help)`);
    }
    case 'keys': {
      const [sub, ...args] = rest;
      if (sub === undefined || sub === '--help' || sub === '-h') return help('keys');
      if (sub === 'create') return keysCreateCommand(args);
      throw new UsageError(`unknown keys subcommand "${sub}" (see crm keys --help)`);
    }
    case 'admin': {
      const [sub, ...args] = rest;
      if (sub === undefined || sub === '--help' || sub === '-h') return help('admin');
      if (sub === 'create-org') return createOrgCommand(args);
      if (sub === 'set-org') return setOrgCommand(args);
      if (sub === 'create-oauth-token') return createOauthTokenCommand(args);
      throw new UsageError(`unknown admin subcommand "${sub}" (see crm admin --help)`);
    }
    default:
      throw new UsageError(`unknown command "${command}" (see crm --help)`);
  }
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
