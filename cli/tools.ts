// `crm tools list` (the registry, read in this process) and `crm tools call` (a tool through a
// running server's REST API, as the token's user with its scopes and limits).
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { callTool, remoteOptions, resolveRemote } from './api.ts';
import { print, printHelp, printJson } from './output.ts';
import { type HttpAnswer, isRecord, UsageError } from './remote.ts';

const HELP = `Usage: crm tools <subcommand> [options]

Subcommands:
  list           List every tool with its kind, permission, REST scope and plan feature
  call <name>    Call a tool on a running server through its REST API`;

const LIST_HELP = `Usage: crm tools list [--json]

Lists every tool: name, kind (read/write), role permission, the scope REST checks, plan feature.
  --json    Print an array of {name, title, description, access, annotations, toolset}`;

const CALL_HELP = `Usage: crm tools call <name> [--input <json>] [--out <path>] [--url <url>] [--token <token>]

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
  crm tools call get_lead --input '{"id":"65f0c2a1b3d4e5f601234567"}'`;

export function toolsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') return Promise.resolve(printHelp(HELP));
  if (sub === 'list') return toolsListCommand(rest);
  if (sub === 'call') return toolsCallCommand(rest);
  throw new UsageError(`unknown tools subcommand "${sub}" (see crm tools --help)`);
}

async function toolsListCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' } },
  });
  if (values.help) return printHelp(LIST_HELP);
  const { TOOLS } = await import('../tools/index.ts');
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
  const { requiredScopes } = await import('../core/access.ts');
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
  if (values.help) return printHelp(CALL_HELP);
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
