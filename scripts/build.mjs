// The build: every TypeScript source of the server transpiled, file by file, to JavaScript under
// dist/ (same tree, `.ts` imports rewritten to `.js`), so `crm` and `npm start` run plain JavaScript
// and pay no transpiler at start (docs/decisions.md, "No TypeScript transpiling at run time").
// Types are not checked here (`npm run typecheck` does that); esbuild only strips them.
//
//   node scripts/build.mjs            clean build (npm run build, npm install's prepare)
//   node scripts/build.mjs --if-stale  build only when a source is newer than the last build
//
// Plain JavaScript, because it must run before anything is built. cli/bin.js imports
// `isBuildFresh` and `buildDist` from here to rebuild a stale tree before it starts.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = join(ROOT, 'dist');
/** Written last: its time is the build's, so any source newer than it makes the tree stale. */
const STAMP = join(DIST, '.build-stamp');

/** The folders the running server and the CLI load; tests and benchmarks run from the sources. */
const SOURCE_DIRS = ['app', 'core', 'tools', 'http', 'rest', 'mcp', 'providers', 'workers', 'cli'];
/**
 * Files read at run time relative to a module (`new URL('../package.json', import.meta.url)`, the
 * migrations folder, the manifest): copied beside the JavaScript so those paths hold under dist/.
 */
const ROOT_FILES = ['package.json', 'mcp-manifest.json'];

function isSource(name) {
  return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts');
}

/** Every file under the source folders (TypeScript sources and the assets beside them). */
function listInputs() {
  const files = [];
  for (const dir of SOURCE_DIRS) {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || entry.name.endsWith('.test.ts')) continue;
      files.push(relative(ROOT, join(entry.parentPath, entry.name)));
    }
  }
  return [...files, ...ROOT_FILES];
}

/** True when dist/ holds a build newer than every source file (a stat per file, a few milliseconds). */
export function isBuildFresh() {
  let built;
  try {
    built = statSync(STAMP).mtimeMs;
  } catch {
    return false;
  }
  for (const file of listInputs()) {
    if (statSync(join(ROOT, file)).mtimeMs > built) return false;
  }
  // The build script itself: a change in how files are built rebuilds them all.
  return statSync(fileURLToPath(import.meta.url)).mtimeMs <= built;
}

/** Relative `.ts` specifiers (static, dynamic and re-exports) point at the built `.js` files. */
function rewriteImports(code) {
  return code.replace(/((?:from|import)\s*\(?\s*)(["'])(\.\.?\/[^"'\n]*?)\.ts\2/g, '$1$2$3.js$2');
}

/**
 * Writes through a temporary file and a rename, so a process that starts while another rebuilds
 * never reads half a file (every writer writes the same bytes).
 */
function writeAtomically(file, contents) {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

/**
 * Transpiles every source to dist/ and copies the assets; `clean` empties dist/ first (so a
 * deleted source leaves no module behind). Returns the number of files and the time it took.
 */
export async function buildDist({ clean = false } = {}) {
  const started = performance.now();
  // esbuild is tsx's dependency and loads only when something is built, never on a fresh start.
  const { transform } = await import('esbuild');
  if (clean) rmSync(DIST, { recursive: true, force: true });
  const inputs = listInputs();
  await Promise.all(
    inputs.map(async (file) => {
      const text = readFileSync(join(ROOT, file));
      if (!isSource(file)) {
        writeAtomically(join(DIST, file), text);
        return;
      }
      const { code } = await transform(text.toString('utf8'), {
        loader: 'ts',
        format: 'esm',
        platform: 'node',
        target: 'node20',
        sourcefile: file,
        // The sources' own settings (verbatimModuleSyntax): type-only imports are already marked.
        tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
      });
      writeAtomically(join(DIST, file.replace(/\.ts$/, '.js')), rewriteImports(code));
    }),
  );
  writeAtomically(STAMP, `${new Date().toISOString()}\n`);
  return { files: inputs.length, ms: Math.round(performance.now() - started) };
}

const invoked = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (invoked) {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && isBuildFresh()) {
    process.stdout.write('dist/ is up to date\n');
  } else {
    const { files, ms } = await buildDist({ clean: !ifStale });
    process.stdout.write(`Built ${files} files into dist/ in ${ms} ms\n`);
  }
}
