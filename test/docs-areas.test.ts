// Locks in that the docs keep one page per area (docs/areas/<area>.md) and that each page is
// current: every area and kit has a page linked from the index, and every tool of an area is named on
// its page, so a new area or tool without its documentation fails here. And that the docs and the code
// comments point into the repository, never to a design file outside it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AREAS, KITS } from '../tools/index.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PAGES = join(ROOT, 'docs/areas');

function pageOf(name: string): string {
  return readFileSync(join(PAGES, `${name}.md`), 'utf8');
}

/** Every file under the folder whose name ends with one of the extensions. */
function filesUnder(dir: string, extensions: readonly string[]): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && extensions.some((x) => e.name.endsWith(x)))
    .map((e) => join(e.parentPath, e.name));
}

describe('docs/areas', () => {
  it('has a page for every area and kit, linked from the index', () => {
    const index = pageOf('README');
    for (const name of [...AREAS.map((a) => a.name), ...KITS]) {
      expect(existsSync(join(PAGES, `${name}.md`)), `docs/areas/${name}.md`).toBe(true);
      expect(index, `docs/areas/README.md links ${name}`).toContain(`(${name}.md)`);
    }
  });

  it("names every tool of an area on the area's page", () => {
    for (const area of AREAS) {
      const page = pageOf(area.name);
      const missing = area.tools.map((t) => t.name).filter((name) => !page.includes(`\`${name}\``));
      expect(missing, `tools missing from docs/areas/${area.name}.md`).toEqual([]);
    }
  });
});

describe('references', () => {
  it('name only files that exist (decisions.md, the history of the house, may name moved ones)', () => {
    const docs = [
      ...filesUnder('docs', ['.md']),
      join(ROOT, 'README.md'),
      join(ROOT, 'test/README.md'),
    ].filter((file) => !file.endsWith('decisions.md'));
    const path =
      /\b(?:app|bench|cli|core|http|mcp|providers|rest|scripts|test|tools|workers)\/[\w./-]+\.(?:ts|js|mjs)\b/g;
    const missing = docs.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(path)]
        .map((m) => m[0])
        .filter((p) => !existsSync(join(ROOT, p)))
        .map((p) => `${file.slice(ROOT.length)}: ${p}`),
    );
    expect(missing).toEqual([]);
  });

  it('point into the repository: no comment or doc sends the reader to DESIGN.md', () => {
    const sources = ['app', 'core', 'http', 'rest', 'mcp', 'tools', 'providers', 'workers', 'cli', 'scripts']
      .flatMap((dir) => filesUnder(dir, ['.ts', '.js', '.mjs']))
      .concat(filesUnder('docs', ['.md']), [join(ROOT, 'README.md'), join(ROOT, 'test/README.md')]);
    const offenders = sources.filter((file) => /\bDESIGN\b/.test(readFileSync(file, 'utf8')));
    expect(offenders.map((f) => f.slice(ROOT.length))).toEqual([]);
  });
});
