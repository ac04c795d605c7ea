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
  core: ['tools', 'http', 'rest', 'mcp', 'workers', 'cli', 'providers'],
  http: ['tools'],
  rest: ['mcp'],
  mcp: ['rest'],
};

/**
 * The composition root builds the services from the configuration, so it alone picks each port's
 * production adapter; every other core/ module knows the ports only (docs/decisions.md).
 */
const ALLOWED: Record<string, string[]> = { 'core/services.ts': ['providers'] };

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

/** The files a file's relative imports reach, from the repository root. */
function filesImportedBy(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)]
    .map(([, target]) => target)
    .filter((target): target is string => target?.startsWith('.') === true)
    .map((target) => relative(ROOT, resolve(ROOT, file, '..', target)));
}

describe('workers/ is the runtime only (docs/architecture.md)', () => {
  it('imports core/ and the area list tools/index.ts, never an area’s own files', () => {
    const breaches = sourceFiles('workers').flatMap((file) =>
      filesImportedBy(file)
        .filter((target) => !target.startsWith('core/') && target !== 'tools/index.ts')
        .map((target) => `${file} -> ${target}`),
    );
    expect(breaches).toEqual([]);
  });

  it('is imported by no area and by nothing in core/: jobs are declared where their rule lives', () => {
    const breaches = [...sourceFiles('tools'), ...sourceFiles('core')].flatMap((file) =>
      filesImportedBy(file)
        .filter((target) => target.startsWith('workers/'))
        .map((target) => `${file} -> ${target}`),
    );
    expect(breaches).toEqual([]);
  });
});
