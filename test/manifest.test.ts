// Locks in the committed mcp-manifest.json: it must equal a fresh build from the tool registry.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildManifest, MANIFEST_PATH, renderManifest } from '../mcp/manifest.ts';
import { TOOLS } from '../tools/index.ts';

describe('mcp-manifest.json', () => {
  it('is up to date with the registry (run npm run manifest after changing a tool)', () => {
    let committed: string;
    try {
      committed = readFileSync(MANIFEST_PATH, 'utf8');
    } catch {
      throw new Error('mcp-manifest.json is missing: run npm run manifest');
    }
    if (committed !== renderManifest()) {
      throw new Error('mcp-manifest.json differs from the tool registry: run npm run manifest');
    }
  });

  it('describes every tool once, with the scopes and access it needs', () => {
    const manifest = buildManifest();
    expect(manifest.tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name).sort());
    const getMe = manifest.tools.find((t) => t.name === 'get_me');
    expect(getMe).toMatchObject({
      toolset: 'core',
      access: { kind: 'read', mcp_scope: 'mcp:read', rest_scope: null, permission: null, feature: null },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      inputSchema: { type: 'object', additionalProperties: false },
      outputSchema: { type: 'object' },
    });
    for (const tool of manifest.tools) {
      expect(tool.access.mcp_scope, tool.name).toBe(tool.access.kind === 'read' ? 'mcp:read' : 'mcp:write');
      expect(tool.annotations.readOnlyHint, tool.name).toBe(tool.access.kind === 'read');
    }
  });

  it('renders as 2-space JSON with a trailing newline', () => {
    const text = renderManifest();
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.split('\n')[1]).toMatch(/^ {2}"name": /);
    expect(JSON.parse(text)).toEqual(buildManifest());
  });
});
