// mcp-manifest.json: every tool of the registry as MCP clients and reviewers see it (the compact
// schemas tools/list shows, annotations) plus what it takes to call it (scopes, permission, plan
// feature). Generated, never edited by hand: `npm run manifest` rewrites it and a test fails when
// it is out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { requiredScopes } from '../core/access.ts';
import { mcpSchemasOf, type ObjectJsonSchema } from '../core/json-schema.ts';
import type { Tool } from '../core/tool.ts';
import { TOOLS } from '../tools/index.ts';
import { MCP_PATH } from './http.ts';
import { SERVER_INFO } from './server.ts';

export const MANIFEST_PATH = fileURLToPath(new URL('../mcp-manifest.json', import.meta.url));

interface ManifestTool {
  name: string;
  title: string;
  description: string;
  toolset: string;
  access: {
    kind: 'read' | 'write';
    mcp_scope: string;
    rest_scope: string | null;
    permission: string | null;
    feature: string | null;
  };
  annotations: {
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
  inputSchema: ObjectJsonSchema;
  outputSchema: ObjectJsonSchema;
}

export interface Manifest {
  name: string;
  endpoint: string;
  tools: ManifestTool[];
}

// Keys are written in a fixed order here (and zod emits schemas deterministically), so the file
// only changes when a tool does.
function manifestTool(tool: Tool): ManifestTool {
  const { kind, resource, permission, feature } = tool.access;
  const schemas = mcpSchemasOf(tool);
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    toolset: tool.toolset,
    access: {
      kind,
      mcp_scope: kind === 'read' ? 'mcp:read' : 'mcp:write',
      rest_scope: requiredScopes('rest', kind, resource)?.[0] ?? null,
      permission,
      feature: feature ?? null,
    },
    annotations: {
      readOnlyHint: tool.annotations.readOnlyHint,
      destructiveHint: tool.annotations.destructiveHint,
      idempotentHint: tool.annotations.idempotentHint,
      openWorldHint: tool.annotations.openWorldHint,
    },
    inputSchema: schemas.input,
    outputSchema: schemas.output,
  };
}

export function buildManifest(tools: readonly Tool[] = TOOLS): Manifest {
  return {
    name: SERVER_INFO.name,
    endpoint: MCP_PATH,
    tools: [...tools].sort((a, b) => a.name.localeCompare(b.name)).map(manifestTool),
  };
}

/** The file's exact text: 2-space JSON with a trailing newline. */
export function renderManifest(manifest: Manifest = buildManifest()): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

function main(args: string[]): void {
  const text = renderManifest();
  if (args.includes('--write')) {
    writeFileSync(MANIFEST_PATH, text);
    process.stdout.write(`wrote ${MANIFEST_PATH}\n`);
  } else if (args.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(MANIFEST_PATH, 'utf8');
    } catch {
      // A missing file is simply out of date.
    }
    if (current !== text) {
      process.stderr.write('mcp-manifest.json is out of date: run npm run manifest\n');
      process.exitCode = 1;
    }
  } else {
    process.stdout.write(text);
  }
}

const entry = process.argv[1];
if (entry && import.meta.url === pathToFileURL(entry).href) main(process.argv.slice(2));
