// `crm admin`: the operator's commands (create-org, set-org, create-oauth-token). They call the
// same core/admin.ts functions as the admin HTTP API, so validation and rules are identical on
// both: on the database directly, or with --url through a running server's admin API
// (cli/admin-remote.ts). core/admin.ts loads only when a command runs, not for its --help.
import { parseArgs } from 'node:util';
import { adminCall, adminRemote } from './admin-remote.ts';
import { withDatabase } from './database.ts';
import { commaList, print, printHelp, printJson, withFlags } from './output.ts';
import { UsageError } from './remote.ts';

const HELP = `Usage: crm admin <subcommand> [options]

Subcommands:
  create-org            Create an organization with its owner
  set-org <id>          Change an organization's plan, status or disabled features
  create-oauth-token    Issue an OAuth access token for a user

They work directly on the database named by DATABASE_URL (or the embedded PGlite database under
DATA_DIR), or, with --url <server>, through that running server's admin API (/admin/v1) with the
token in CRM_ADMIN_TOKEN. The embedded database belongs to one process: while "crm serve" runs on a
DATA_DIR, an admin command on the same DATA_DIR stops at once naming it; use --url instead.`;

const CREATE_ORG_HELP = `Usage: crm admin create-org --name <name> --plan <plan> --owner-name <name>
                            --owner-email <email> --owner-password <password> [--json]

  --name             Organization name
  --plan             free, starter, pro or enterprise
  --owner-name       The owner's display name
  --owner-email      The owner's email (unique across the service)
  --owner-password   The owner's password, 8 to 200 characters
  --json             Print {organization, user} as JSON
  --url              A running server: go through its admin API (needs CRM_ADMIN_TOKEN)`;

const SET_ORG_HELP = `Usage: crm admin set-org <organization-id> [--plan <plan>] [--status <status>]
                          [--disable-features <a,b>] [--json]

  --plan               free, starter, pro or enterprise
  --status             active, inactive or suspended (inactive and suspended get 403 on every call)
  --disable-features   Comma-separated features to switch off; replaces the list ("" clears it)
  --json               Print {organization} as JSON
  --url                A running server: go through its admin API (needs CRM_ADMIN_TOKEN)`;

const CREATE_OAUTH_TOKEN_HELP = `Usage: crm admin create-oauth-token --user-id <id> --app-name <name> --scopes <s1,s2>
                                     [--expires-in-seconds <n>] [--json]

  --user-id              The user the token acts as (24 hex characters)
  --app-name             Name of the installed app, 1 to 100 characters
  --scopes               Comma-separated scopes, e.g. read:leads,mcp:read (1 to 50)
  --expires-in-seconds   Lifetime; without it the token lives until revoked
  --json                 Print {oauth_token, token} as JSON
  --url                  A running server: go through its admin API (needs CRM_ADMIN_TOKEN)
The token is printed once and cannot be shown again.`;

export function adminCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') return Promise.resolve(printHelp(HELP));
  if (sub === 'create-org') return createOrgCommand(rest);
  if (sub === 'set-org') return setOrgCommand(rest);
  if (sub === 'create-oauth-token') return createOauthTokenCommand(rest);
  throw new UsageError(`unknown admin subcommand "${sub}" (see crm admin --help)`);
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
  if (values.help) return printHelp(CREATE_ORG_HELP);
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
      const core = await import('../core/admin.ts');
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
  if (values.help) return printHelp(SET_ORG_HELP);
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
      const core = await import('../core/admin.ts');
      if (remote === undefined) {
        // The features an operator may switch off are the areas' (the plan table), so the local
        // path loads the area list; the remote one asks the server, which has it.
        const { CATALOGUE } = await import('../tools/index.ts');
        return withDatabase((db) => core.updateOrganization(db, id, changes, CATALOGUE.plans.features));
      }
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
  if (values.help) return printHelp(CREATE_OAUTH_TOKEN_HELP);
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
      const core = await import('../core/admin.ts');
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
