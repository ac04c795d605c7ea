// The JavaScript build that `crm` and `npm start` run (scripts/build.mjs, brought up to date by the
// suites' global setup, test/setup/build.ts): every source has its module, no built import still
// names a `.ts` file, and `crm --help` stays light (its static imports reach no area, no service).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const SOURCE_DIRS = ['app', 'core', 'tools', 'http', 'rest', 'mcp', 'providers', 'workers', 'cli'];
const STATIC_IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gm;
const ANY_RELATIVE_TS = /(?:from|import)\s*\(?\s*["'](\.\.?\/[^"']+\.ts)["']/g;

function filesUnder(root: string, dirs: string[], suffix: string): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith(suffix) && !e.name.endsWith('.test.ts'))
      .map((e) => relative(root, join(e.parentPath, e.name))),
  );
}

/** The built modules `file` reaches through static imports (dynamic `import()` loads on use). */
function staticClosure(file: string): Set<string> {
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const [, from, bare] of readFileSync(path, 'utf8').matchAll(STATIC_IMPORT)) {
      const target = from ?? bare;
      if (target?.startsWith('.')) visit(resolve(dirname(path), target));
    }
  };
  visit(join(DIST, file));
  return new Set([...seen].map((path) => relative(DIST, path)));
}

describe('the JavaScript build', () => {
  it('holds a module for every source file', () => {
    const missing = filesUnder(ROOT, SOURCE_DIRS, '.ts')
      .map((file) => file.replace(/\.ts$/, '.js'))
      .filter((file) => !readdirSync(join(DIST, dirname(file))).includes(file.split('/').at(-1) ?? ''));
    expect(missing).toEqual([]);
  });

  it('imports built modules only, never a .ts file', () => {
    const left = filesUnder(DIST, SOURCE_DIRS, '.js').flatMap((file) =>
      [...readFileSync(join(DIST, file), 'utf8').matchAll(ANY_RELATIVE_TS)].map((m) => `${file}: ${m[1]}`),
    );
    expect(left).toEqual([]);
  });

  it('keeps `crm --help` light: the entry reaches no area, service or server statically', () => {
    const reached = [...staticClosure('cli/main.js')];
    expect(reached).toEqual(expect.arrayContaining(['cli/main.js', 'cli/output.js', 'core/errors.js']));
    const heavy = reached.filter((file) => /^(tools|app|http|rest|mcp|workers|providers)\//.test(file));
    expect(heavy).toEqual([]);
  });
});
