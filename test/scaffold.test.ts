// Proves that a new area touches its folder and one line: `npm run scaffold:area -- <name>` in a
// scratch copy of the repository changes only the area's folders, tools/index.ts, the migration
// files and the manifest, and the copy then type-checks and passes the central suites with the new
// area covered (docs/architecture.md "How to add a resource"). It clones, type-checks and runs
// suites, about a minute or more, so it runs in its own config (npm run test:scaffold, a step of
// .ci/run) and is skipped by the others.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const NAME = 'scaffold-probes';
const ONE = 'scaffold_probe';

/** The central suites the new area must pass in, and the ones whose test names name it. */
const CENTRAL = [
  'test/areas.test.ts',
  'test/layers.test.ts',
  'test/role-table.test.ts',
  'test/fixtures/kits.test.ts',
  'test/tenancy.test.ts',
  'test/input-rules.test.ts',
  'test/scopes.test.ts',
  'test/parity.test.ts',
  'test/route-consistency.test.ts',
  'test/manifest.test.ts',
  'test/rls.test.ts',
  'test/docs-areas.test.ts',
];
const NAMING_THE_AREA = [
  'areas.test.ts',
  'kits.test.ts',
  'tenancy.test.ts',
  'scopes.test.ts',
  'route-consistency.test.ts',
  `${NAME}.test.ts`,
];

let copy = '';

/** Runs a command in the copy; its output on failure is the test's message. */
function inCopy(command: string, args: readonly string[], env: NodeJS.ProcessEnv = childEnv()): string {
  try {
    return execFileSync(command, args, { cwd: copy, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    throw new Error(
      `${command} ${args.join(' ')} failed:\n${outputOf(error, 'stdout')}\n${outputOf(error, 'stderr')}`,
    );
  }
}

/** What a failed child process wrote on one stream (execFileSync attaches both to its error). */
function outputOf(error: unknown, stream: 'stdout' | 'stderr'): string {
  if (typeof error !== 'object' || error === null || !(stream in error)) return String(error);
  const output: unknown = Reflect.get(error, stream);
  return typeof output === 'string' ? output : '';
}

/** The environment without this run's own vitest settings, so the copy's vitest starts as from a shell. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('VITEST') && key !== 'SCAFFOLD_TEST' && key !== 'NODE_ENV') env[key] = value;
  }
  return env;
}

function git(args: readonly string[], cwd = ROOT): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

interface VitestReport {
  numFailedTests: number;
  numPassedTests: number;
  testResults: {
    name: string;
    assertionResults: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

describe.skipIf(!process.env.SCAFFOLD_TEST)('npm run scaffold:area in a scratch copy', () => {
  beforeAll(() => {
    // The repository as it stands: HEAD, plus the working tree's changes and new files, committed
    // in the copy so its git status afterwards shows only what the generator did.
    copy = join(mkdtempSync(join(tmpdir(), 'crm-scaffold-')), 'repo');
    git(['clone', '--quiet', ROOT, copy]);
    const diff = git(['diff', 'HEAD', '--binary']);
    if (diff) execFileSync('git', ['apply', '--whitespace=nowarn'], { cwd: copy, input: diff });
    for (const file of git(['ls-files', '--others', '--exclude-standard']).split('\n').filter(Boolean)) {
      cpSync(join(ROOT, file), join(copy, file), { recursive: true });
    }
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(copy, 'node_modules'));
    const who = ['-c', 'user.name=scaffold test', '-c', 'user.email=scaffold@example.test'];
    inCopy('git', ['add', '-A']);
    inCopy('git', [...who, 'commit', '--quiet', '--allow-empty', '-m', 'working tree']);
    inCopy('npm', ['run', '--silent', 'scaffold:area', '--', NAME]);
  });
  afterAll(() => {
    if (copy && !process.env.KEEP_SCAFFOLD_COPY) rmSync(dirname(copy), { recursive: true, force: true });
  });

  it('refuses a name that is not kebab-case or names an existing area', () => {
    for (const bad of ['Bad_Name', 'tasks', NAME]) {
      expect(() => inCopy('node', ['scripts/scaffold-area.mjs', bad])).toThrow(/kebab-case|exists already/);
    }
  });

  it('changes only the area folders, tools/index.ts, its docs page, the migration files and the manifest', () => {
    const changed = inCopy('git', ['status', '--porcelain', '--untracked-files=all'])
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
    const allowed = [
      new RegExp(`^tools/${NAME}/(tables|store|tools|routes|catalogue|index)\\.ts$`),
      new RegExp(`^test/${NAME}/(kit|${NAME}\\.test)\\.ts$`),
      /^tools\/index\.ts$/,
      // Every area has its page (test/docs-areas.test.ts): the scaffold writes one to fill in.
      new RegExp(`^docs/areas/(${NAME}|README)\\.md$`),
      new RegExp(`^core/db/migrations/\\d{4}_${ONE}s\\.sql$`),
      /^core\/db\/migrations\/meta\/\d{4}_snapshot\.json$/,
      /^core\/db\/migrations\/meta\/_journal\.json$/,
      /^mcp-manifest\.json$/,
    ];
    expect(changed.filter((file) => !allowed.some((rule) => rule.test(file)))).toEqual([]);
    // Each kind of change is there: the area, its test kit, the registry line, the migration, the manifest.
    for (const rule of allowed) expect(changed.some((file) => rule.test(file))).toBe(true);
    const migration = changed.find((file) => file.endsWith('.sql')) ?? '';
    expect(readFileSync(join(copy, migration), 'utf8')).toMatch(
      /CREATE POLICY tenant_isolation ON scaffold_probes/,
    );
    const manifest = readFileSync(join(copy, 'mcp-manifest.json'), 'utf8');
    for (const tool of [`list_${ONE}s`, `get_${ONE}`, `create_${ONE}`, `update_${ONE}`, `delete_${ONE}`]) {
      expect(manifest).toContain(`"${tool}"`);
    }
  });

  it('type-checks, and passes the central suites and its own test with the new area covered', () => {
    inCopy('node_modules/.bin/tsc', ['--noEmit']);
    const report = join(copy, 'scaffold-report.json');
    const files = [...CENTRAL, `test/${NAME}`];
    // Its exit code says only that something failed; the report says what, so it is read either way.
    // One retry: the MCP tests of test/scopes.test.ts talk over a socket, which a loaded machine can drop.
    const run = spawnSync(
      'node_modules/.bin/vitest',
      ['run', ...files, '--retry=1', '--reporter=json', `--outputFile=${report}`],
      { cwd: copy, env: childEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    expect(existsSync(report), run.stderr).toBe(true);
    const result: VitestReport = JSON.parse(readFileSync(report, 'utf8'));
    const failed = result.testResults.flatMap((file) =>
      file.assertionResults
        .filter((test) => test.status !== 'passed')
        .map(
          (test) =>
            `${file.name}: ${test.fullName}: ${(test.failureMessages ?? []).join('\n').slice(0, 2000)}`,
        ),
    );
    expect(failed).toEqual([]);
    expect(result.numFailedTests).toBe(0);
    const naming = new Map<string, number>();
    for (const file of result.testResults) {
      const base = file.name.split('/').at(-1) ?? '';
      const own = file.assertionResults.filter(
        (test) => test.status === 'passed' && /scaffold[-_]probe/.test(test.fullName),
      );
      naming.set(base, (naming.get(base) ?? 0) + own.length);
    }
    for (const base of NAMING_THE_AREA)
      expect({ base, tests: naming.get(base) ?? 0 }).not.toEqual({ base, tests: 0 });
    const ran = new Set(result.testResults.map((file) => file.name.split('/').at(-1)));
    for (const file of CENTRAL) expect(ran).toContain(file.split('/').at(-1));
  });
});
