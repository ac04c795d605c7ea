// `crm keys create`: a personal access token for the token's user, through a running server's REST
// API (the create_api_key tool), so the server's rules on labels and scopes apply.
import { parseArgs } from 'node:util';
import { callTool, remoteOptions, resolveRemote } from './api.ts';
import { commaList, print, printHelp, printJson } from './output.ts';
import { CliError, type HttpAnswer, isRecord, UsageError } from './remote.ts';

const HELP = `Usage: crm keys <subcommand> [options]

Subcommands:
  create    Create a personal access token (API key) for the token's user on a running server`;

const CREATE_HELP = `Usage: crm keys create --label <label> [--scopes <s1,s2>] [--url <url>] [--token <token>]
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
The token is printed once and cannot be shown again.`;

export function keysCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') return Promise.resolve(printHelp(HELP));
  if (sub === 'create') return keysCreateCommand(rest);
  throw new UsageError(`unknown keys subcommand "${sub}" (see crm keys --help)`);
}

/** The JSON of an answer that must be JSON. */
function jsonOf(answer: HttpAnswer): unknown {
  if (answer.kind === 'file')
    throw new CliError(`the server answered a file (${answer.contentType}), not JSON`);
  return answer.value;
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
  if (values.help) return printHelp(CREATE_HELP);
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
