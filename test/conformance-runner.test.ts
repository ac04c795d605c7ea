// Locks in how the conformance runner (scripts/conformance.mjs) judges the suite's results against
// an expected-failures file: an unlisted failure fails the run, so does a listed scenario or check
// that passes, a scenario that crashed counts as failed, a check entry excuses only that check; and
// the repository's own conformance/expected-failures.json is well-formed and consistent.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNNER = join(ROOT, 'scripts', 'conformance.mjs');
const REVISION = '2026-07-28';

const scratch = mkdtempSync(join(tmpdir(), 'conformance-runner-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Checks = Array<{ id: string; status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' }>;
interface Entry {
  scenario: string;
  version: string;
  check?: string;
  reason: string;
}

let runs = 0;

/**
 * Writes a results folder as the runner keeps it (the requirement set, one folder per scenario as
 * the suite names them; `null` = the folder without checks.json of a scenario that crashed), then
 * judges it with `--results`. Resolves with the exit code and the output.
 */
function judge(
  scenarios: Record<string, Checks | null>,
  failures: Entry[],
  notScored: Record<string, string> = {},
  revision = REVISION,
): Promise<{ code: number; out: string }> {
  const dir = join(scratch, String(++runs));
  const results = join(dir, revision, 'scenarios');
  mkdirSync(results, { recursive: true });
  const scored = Object.keys(scenarios).filter((s) => !(s in notScored));
  const yaml = [
    '# a requirement set',
    'server:',
    ...scored.map((s) => `  - ${s}`),
    'client:',
    '  - tools_call',
    'not_scored:',
    ...Object.entries(notScored).flatMap(([s, reason]) => [
      `  - scenario: ${s}`,
      '    leg: server',
      `    reason: ${reason}`,
    ]),
    '  - scenario: auth/dpop',
    '    leg: client',
    '    reason: extension',
  ].join('\n');
  writeFileSync(join(dir, revision, 'requirements.yaml'), `${yaml}\n`);
  for (const [scenario, checks] of Object.entries(scenarios)) {
    const folder = join(results, `server-${scenario}-2026-11-27T08-42-55-493Z`);
    mkdirSync(folder);
    if (checks) writeFileSync(join(folder, 'checks.json'), JSON.stringify(checks));
  }
  const expected = join(dir, 'expected-failures.json');
  writeFileSync(expected, JSON.stringify({ failures }));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [RUNNER, '--results', dir, '--expected', expected, '--revision', revision],
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, out: stdout + stderr }),
    );
  });
}

const pass = (...ids: string[]): Checks => ids.map((id) => ({ id, status: 'SUCCESS' }));
const fail = (...ids: string[]): Checks => ids.map((id) => ({ id, status: 'FAILURE' }));
const entry = (scenario: string, check?: string): Entry => ({
  scenario,
  version: REVISION,
  ...(check && { check }),
  reason: 'cannot apply: a fixture',
});

describe('the conformance runner', () => {
  it('passes when every failure is listed, and prints each scenario with its result', async () => {
    const { code, out } = await judge(
      { 'tools-list': pass('tools-list'), 'tools-call-simple-text': fail('tools-call-simple-text') },
      [entry('tools-call-simple-text')],
    );
    expect(code, out).toBe(0);
    expect(out).toMatch(/^tools-list\s+2026-07-28\s+scored\s+pass$/m);
    expect(out).toMatch(
      /^tools-call-simple-text\s+2026-07-28\s+scored\s+expected failure \(cannot apply\)$/m,
    );
    expect(out).toContain('2026-07-28: 1 of 2 scored scenarios pass');
  });

  it('fails on a failure the file does not list, naming the failed checks', async () => {
    const { code, out } = await judge({ 'tools-list': fail('tools-list', 'wire-schema-valid') }, []);
    expect(code).toBe(1);
    expect(out).toContain('UNEXPECTED FAILURE: tools-list, wire-schema-valid');
    expect(out).toContain(
      '2026-07-28 tools-list (tools-list, wire-schema-valid): fails, and the expected failures do not list it',
    );
  });

  it('fails when a listed scenario passes: its entry must go', async () => {
    const { code, out } = await judge({ 'prompts-list': pass('prompts-list') }, [entry('prompts-list')]);
    expect(code).toBe(1);
    expect(out).toContain('2026-07-28 prompts-list: passes now; remove it from the expected failures');
  });

  it('counts a scenario that crashed (no checks.json) as failed', async () => {
    const { code, out } = await judge({ caching: null }, []);
    expect(code).toBe(1);
    expect(out).toContain('UNEXPECTED FAILURE: (no result: the scenario did not run to the end)');
  });

  it('judges not-scored scenarios too, and shows why the suite does not score them', async () => {
    const results = { 'tools-list': pass('tools-list'), 'tasks-lifecycle': fail('tasks-sync-tool-call') };
    const { code, out } = await judge(results, [], {
      'tasks-lifecycle': 'extension',
    });
    expect(code).toBe(1);
    expect(out).toMatch(/^tasks-lifecycle\s+2026-07-28\s+not scored \(extension\)\s+UNEXPECTED FAILURE/m);
  });

  it('excuses only the listed check of a scenario, and fails when that check passes', async () => {
    const stateless = [...pass('discover'), ...fail('needs-fixture')];
    const excused = await judge({ 'server-stateless': stateless }, [
      entry('server-stateless', 'needs-fixture'),
    ]);
    expect(excused.code, excused.out).toBe(0);
    expect(excused.out).toContain('pass but for 1 listed check');

    const another = await judge({ 'server-stateless': [...stateless, ...fail('discover')] }, [
      entry('server-stateless', 'needs-fixture'),
    ]);
    expect(another.code).toBe(1);
    expect(another.out).toContain('UNEXPECTED FAILURE: discover');

    const fixed = await judge({ 'server-stateless': pass('discover', 'needs-fixture') }, [
      entry('server-stateless', 'needs-fixture'),
    ]);
    expect(fixed.code).toBe(1);
    expect(fixed.out).toContain(
      'server-stateless (needs-fixture): passes now; remove it from the expected failures',
    );
  });

  it('fails on an entry for a scenario the requirement set does not have', async () => {
    const { code, out } = await judge({ 'tools-list': pass('tools-list') }, [entry('tools-list-typo')]);
    expect(code).toBe(1);
    expect(out).toContain('2026-07-28 tools-list-typo: listed, but not a server scenario of this set');
  });

  it('refuses a malformed file: an entry without a reason, or a scenario listed whole and by check', async () => {
    const { reason: _reason, ...noReason } = entry('caching');
    const missing = await judge({ caching: fail('x') }, [noReason as Entry]);
    expect(missing.code).toBe(2);
    expect(missing.out).toContain('each entry needs "scenario", "version"');

    const both = await judge({ caching: fail('x') }, [entry('caching'), entry('caching', 'x')]);
    expect(both.code).toBe(2);
    expect(both.out).toContain('listed both whole and by check');
  });
});

describe("the repository's expected-failures file", () => {
  const file = JSON.parse(readFileSync(join(ROOT, 'conformance', 'expected-failures.json'), 'utf8')) as {
    failures: Entry[];
  };

  it('gives every entry a reason that says whether it cannot apply or is pending', () => {
    for (const e of file.failures) expect(e.reason, e.scenario).toMatch(/^(cannot apply|pending): \S/);
  });

  it.for(['2025-11-25', '2026-07-28'])(
    'is consistent for %s: judged against results where exactly its entries fail, the run passes',
    async (revision) => {
      const entries = file.failures.filter((e) => e.version === revision);
      expect(entries.length).toBeGreaterThan(0);
      const scenarios: Record<string, Checks> = {};
      for (const e of entries)
        scenarios[e.scenario] = [...(scenarios[e.scenario] ?? []), ...fail(e.check ?? e.scenario)];
      const { code, out } = await judge(scenarios, entries, {}, revision);
      expect(code, out).toBe(0);
    },
  );
});
