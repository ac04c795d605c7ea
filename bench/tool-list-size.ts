// `node --import tsx bench/tool-list-size.ts`: how many bytes an MCP tools/list result costs a
// model, and where they are. It builds the result the tools/list handler answers (mcp/server.ts
// listedTools) for an owner session on the enterprise plan, who sees every tool of the selection,
// for the default selection, each toolset alone and all of them, and splits the bytes into names,
// titles, descriptions, input schemas, output schemas and annotations. Prints a Markdown section
// for bench/results.md; nothing is measured over the network (the figures are sizes, not times,
// and test/mcp-tool-list-size.test.ts checks the same budgets over real HTTP calls).
import { DEFAULT_TOOLSETS, type ToolsetName } from '../core/toolsets.ts';
import { listedTools } from '../mcp/server.ts';
import { CATALOGUE } from '../tools/index.ts';
import { gitCommit } from './environment.ts';

/** The budgets issue 21 sets: the default list and every toolset together, in bytes of JSON. */
const DEFAULT_LIST_BUDGET = 40_000;
const ALL_TOOLSETS_BUDGET = 250_000;

const bytes = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));

interface Figures {
  tools: number;
  total: number;
  name: number;
  title: number;
  description: number;
  inputSchema: number;
  outputSchema: number;
  annotations: number;
}

function figuresOf(selection: ReadonlySet<ToolsetName>): Figures {
  const call = {
    auth: {
      tokenKind: 'session' as const,
      orgId: '000000000000000000000001',
      userId: '000000000000000000000002',
      role: 'owner' as const,
      plan: 'enterprise',
      disabledFeatures: [],
      scopes: null,
      credentialId: null,
    },
    surface: 'mcp' as const,
    requestId: 'bench',
    access: CATALOGUE.access,
    plans: CATALOGUE.plans,
  };
  const result = listedTools(call, selection);
  const figures: Figures = {
    tools: result.tools.length,
    total: bytes(result),
    name: 0,
    title: 0,
    description: 0,
    inputSchema: 0,
    outputSchema: 0,
    annotations: 0,
  };
  for (const tool of result.tools) {
    figures.name += bytes(tool.name);
    figures.title += bytes(tool.title);
    figures.description += bytes(tool.description);
    figures.inputSchema += bytes(tool.inputSchema);
    figures.outputSchema += bytes(tool.outputSchema);
    figures.annotations += bytes(tool.annotations);
  }
  return figures;
}

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;

function row(label: string, f: Figures): string {
  return `| ${label} | ${f.tools} | **${kb(f.total)}** | ${kb(f.description)} | ${kb(f.inputSchema)} | ${kb(f.outputSchema)} | ${kb(f.annotations)} | ${kb(f.name + f.title)} |`;
}

function main(): void {
  const defaults = figuresOf(new Set(DEFAULT_TOOLSETS));
  const all = figuresOf(new Set(CATALOGUE.toolsetNames));
  const lines = [
    `## ${new Date().toISOString()} — MCP tools/list size (\`node --import tsx bench/tool-list-size.ts\`)`,
    '',
    `- Commit: ${gitCommit()}`,
    '- Bytes of the JSON tools/list result for an owner session on the enterprise plan (every tool of the selection visible); 1 KB = 1,000 bytes.',
    '',
    '| selection | tools | total | descriptions | inputSchema | outputSchema | annotations | names + titles |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row(`default (${DEFAULT_TOOLSETS.join(', ')})`, defaults),
    row('all toolsets', all),
    ...CATALOGUE.toolsetNames.map((name) => row(`${name} alone`, figuresOf(new Set([name])))),
    '',
    '| budget | limit | measured | result |',
    '|---|---:|---:|---|',
    `| default list | ${kb(DEFAULT_LIST_BUDGET)} | ${kb(defaults.total)} | ${defaults.total <= DEFAULT_LIST_BUDGET ? 'met' : '**not met**'} |`,
    `| all toolsets | ${kb(ALL_TOOLSETS_BUDGET)} | ${kb(all.total)} | ${all.total <= ALL_TOOLSETS_BUDGET ? 'met' : '**not met**'} |`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
