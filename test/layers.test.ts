// Locks in the layer rules of the house: core/ imports no area, surface or HTTP code; rest/ and mcp/
// never import each other; http/ imports no area. Read from the import statements of every source file.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** The top-level folders a file's relative imports reach. */
function foldersImportedBy(file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const folders = new Set<string>();
  for (const [, target] of text.matchAll(IMPORT)) {
    if (!target?.startsWith('.')) continue;
    const [top] = relative(ROOT, resolve(ROOT, file, '..', target)).split('/');
    if (top) folders.add(top);
  }
  return folders;
}

const RULES: Record<string, string[]> = {
  core: ['tools', 'http', 'rest', 'mcp', 'workers', 'cli', 'providers', 'app'],
  http: ['tools'],
  rest: ['mcp'],
  mcp: ['rest'],
  // The composition root picks adapters (providers/) for the kernel's ports (core/) and knows no
  // area, surface, runtime or command.
  app: ['tools', 'http', 'rest', 'mcp', 'workers', 'cli'],
};

/**
 * Single files allowed past their layer's rule. None today: the composition root that names
 * providers/ moved out of the kernel to app/services.ts (docs/decisions.md).
 */
const ALLOWED: Record<string, string[]> = {};

describe('layer rules', () => {
  for (const [layer, forbidden] of Object.entries(RULES)) {
    it(`${layer}/ imports none of ${forbidden.join(', ')}`, () => {
      const files = sourceFiles(layer);
      expect(files.length).toBeGreaterThan(0);
      const breaches = files.flatMap((file) =>
        [...foldersImportedBy(file)]
          .filter((f) => forbidden.includes(f) && !ALLOWED[file]?.includes(f))
          .map((f) => `${file} -> ${f}/`),
      );
      expect(breaches).toEqual([]);
    });
  }
});

describe('the composition root', () => {
  // Only the entry points (cli/, bench/, test/) build services; everything else receives them.
  it('app/ is imported by no layer it serves', () => {
    const layers = ['core', 'tools', 'http', 'rest', 'mcp', 'workers', 'providers'];
    const breaches = layers.flatMap(sourceFiles).filter((file) => foldersImportedBy(file).has('app'));
    expect(breaches).toEqual([]);
  });
});
