// Locks in the layer rules of the house (docs/architecture.md "Layers" and "Boundaries"), read from
// the import statements of every source file:
// - core/ imports no area, surface or HTTP code; rest/ and mcp/ never import each other; http/
//   imports no area; tools/ no surface, worker, CLI or provider; workers/ no surface, CLI or
//   provider; providers/ only core/.
// - an area imports another area (or a shared kit) only when its defineArea declares it in `uses`,
//   and never the other's tables.ts except from its own tables.ts (a foreign key); the `uses` graph
//   has no cycle, so what would close one is a hook.
// - no cycle between files anywhere in the repository.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AREAS } from '../tools/index.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** `import … from '…'`, `export … from '…'` (group 2: `type ` when type-only), and `import '…'`. */
const IMPORT =
  /^\s*(?:import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;
/** Folders that hold no source of the project (dependencies, data, reports). */
const SKIPPED = new Set(['node_modules', 'coverage', 'test-artifacts', 'dist']);

/** Every .ts/.js source file under `dir` (repository-relative), dot folders and SKIPPED left out. */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) continue;
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...filesUnder(path));
    else if (entry.isFile() && /\.(?:ts|mts|js|mjs)$/.test(entry.name)) found.push(path);
  }
  return found;
}

interface ImportEdge {
  from: string;
  /** The imported file, repository-relative. */
  to: string;
  typeOnly: boolean;
}

const importCache = new Map<string, ImportEdge[]>();

/** The relative imports of a file that name an existing file (a path in a string template is no import). */
function importsOf(file: string): ImportEdge[] {
  const cached = importCache.get(file);
  if (cached) return cached;
  const text = readFileSync(join(ROOT, file), 'utf8');
  const edges: ImportEdge[] = [];
  for (const [, typeOnly, fromTarget, bareTarget] of text.matchAll(IMPORT)) {
    const target = fromTarget ?? bareTarget;
    if (!target?.startsWith('.')) continue;
    const to = relative(ROOT, resolve(ROOT, dirname(file), target));
    if (existsSync(join(ROOT, to))) edges.push({ from: file, to, typeOnly: typeOnly !== undefined });
  }
  importCache.set(file, edges);
  return edges;
}

function sourceFiles(dir: string): string[] {
  return filesUnder(dir).filter((f) => !f.endsWith('.test.ts'));
}

/** The top-level folders a file's relative imports reach. */
function foldersImportedBy(file: string): Set<string> {
  return new Set(importsOf(file).map((edge) => edge.to.split('/')[0] ?? ''));
}

const RULES: Record<string, string[]> = {
  core: ['tools', 'http', 'rest', 'mcp', 'workers', 'cli', 'providers', 'app'],
  http: ['tools'],
  rest: ['mcp'],
  mcp: ['rest'],
  // An area is business rules over core's ports: it is reached by the surfaces and the runtime,
  // never the other way round, and never picks an adapter.
  tools: ['http', 'rest', 'mcp', 'workers', 'cli', 'providers', 'app'],
  // The runtime runs what the areas declare; it serves no request and picks no adapter.
  workers: ['http', 'rest', 'mcp', 'cli', 'providers', 'app'],
  // An adapter implements one of core's ports and knows nothing else.
  providers: ['tools', 'http', 'rest', 'mcp', 'workers', 'cli', 'app'],
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

/** The area (or kit) folder of a file under tools/, and the file's path inside it. */
function areaOf(file: string): { area: string; inner: string } | null {
  const [top, area, ...rest] = file.split('/');
  if (top !== 'tools' || area === undefined || rest.length === 0) return null;
  return { area, inner: rest.join('/') };
}

const USES = new Map(AREAS.map((area) => [area.name, new Set(area.uses ?? [])]));
/** Shared kits: folders of tools/ that declare no area (tools/documents); they are named in `uses` too. */
const KITS = readdirSync(join(ROOT, 'tools'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && !USES.has(e.name))
  .map((e) => e.name);

/**
 * What a file of `area` may import from `target`: an area its `uses` names; a kit imports an area
 * only when every area using the kit names it too, so a kit adds no dependency of its own.
 */
function mayUse(
  area: string,
  target: string,
  uses: ReadonlyMap<string, ReadonlySet<string>> = USES,
): boolean {
  const own = uses.get(area);
  if (own) return own.has(target);
  const users = [...uses.values()].filter((names) => names.has(area));
  return users.length > 0 && users.every((names) => names.has(target));
}

/** Every area-to-area import that breaks the boundary, as `from -> to: why`. */
function boundaryBreaches(): { edge: string; why: string }[] {
  const found: { edge: string; why: string }[] = [];
  for (const file of sourceFiles('tools')) {
    const from = areaOf(file);
    if (!from) continue;
    for (const edge of importsOf(file)) {
      const to = areaOf(edge.to);
      if (!to || to.area === from.area) continue;
      const name = `${file} -> ${edge.to}`;
      if (!mayUse(from.area, to.area))
        found.push({ edge: name, why: `${from.area} does not declare uses ${to.area}` });
      else if (to.inner === 'tables.ts' && from.inner !== 'tables.ts') {
        found.push({ edge: name, why: `reads the tables of ${to.area} (use what its store exports)` });
      }
    }
  }
  return found;
}

/** One cycle of `graph` through its strongly connected components of more than one node (Tarjan). */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components;
}

/** A path `a -> b -> … -> a` inside one component, for a readable failure. */
function cyclePath(graph: ReadonlyMap<string, readonly string[]>, component: readonly string[]): string {
  const members = new Set(component);
  const start = component[0] ?? '';
  const seen = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() ?? '';
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = seen.get(at))
          path.splice(1, 0, at);
        return [...path, start].join(' -> ');
      }
      if (!seen.has(to)) {
        seen.set(to, node);
        queue.push(to);
      }
    }
  }
  return component.join(', ');
}

describe('area boundaries', () => {
  it('every `uses` names another area or a kit of tools/', () => {
    const known = new Set([...USES.keys(), ...KITS]);
    const unknown = AREAS.flatMap((area) =>
      (area.uses ?? []).filter((name) => !known.has(name)).map((name) => `${area.name} uses ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('the `uses` graph has no cycle (what would close one is a hook)', () => {
    const graph = new Map([...USES].map(([name, uses]) => [name, [...uses]]));
    expect(cyclesOf(graph).map((c) => cyclePath(graph, c))).toEqual([]);
  });

  it('an area imports only the areas it uses, and never their tables outside its own tables.ts', () => {
    expect(boundaryBreaches().map((b) => `${b.edge}: ${b.why}`)).toEqual([]);
  });

  it('catches a breach (the rule is not vacuous)', () => {
    // tools/smart-views compiles its filters over the lead tables it declares in `uses`; a file of
    // an area that does not declare them would be refused.
    expect(mayUse('smart-views', 'leads')).toBe(true);
    expect(mayUse('leads', 'smart-views')).toBe(false);
    // A kit (no area of its name) may import what every area using it uses, and nothing else.
    const uses = new Map([
      ['invoices', new Set(['documents', 'contacts', 'leads'])],
      ['estimates', new Set(['documents', 'contacts'])],
    ]);
    expect(mayUse('documents', 'contacts', uses)).toBe(true);
    expect(mayUse('documents', 'leads', uses)).toBe(false);
    expect(mayUse('unused-kit', 'contacts', uses)).toBe(false);
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    const cycles = cyclesOf(graph);
    expect(cycles).toEqual([['a', 'b', 'c']]);
    expect(cyclePath(graph, cycles[0] ?? [])).toBe('a -> b -> c -> a');
  });
});

describe('file cycles', () => {
  it('no cycle between files anywhere in the repository', () => {
    const graph = new Map(filesUnder('').map((file) => [file, importsOf(file).map((edge) => edge.to)]));
    expect(graph.size).toBeGreaterThan(100);
    // Type-only imports count: a cycle through types still ties the files' meaning together.
    const cycles = cyclesOf(graph);
    expect(cycles.map((c) => `${c.join(', ')}: ${cyclePath(graph, c)}`)).toEqual([]);
  });
});

describe('the composition root', () => {
  // Only the entry points (cli/, bench/, test/) build services; everything else receives them.
  it('app/ is imported by no layer it serves', () => {
    const layers = ['core', 'tools', 'http', 'rest', 'mcp', 'workers', 'providers'];
    const breaches = layers.flatMap(sourceFiles).filter((file) => foldersImportedBy(file).has('app'));
    expect(breaches).toEqual([]);
  });
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
