// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against this
// server's /mcp, for the server scenarios of the 2025-11-25 and 2026-07-28 requirement sets, judged
// against conformance/expected-failures.json. See docs/mcp.md "Conformance".
//
// What it does: starts `crm serve` on a scratch embedded database, signs up a user, creates a
// personal access token with both MCP scopes, and puts a small reverse proxy in front of /mcp that
// adds `Authorization: Bearer <token>` and `X-MCP-Toolsets: all` to every request (the suite sends
// no Authorization header; a deployment gives an assistant a token the same way, through an
// OAuth-connected session or a fronting proxy: docs/decisions.md). The proxy keeps every other
// header, Host and Origin included, so the suite's DNS-rebinding scenario still reaches the
// server's own Host check. The suite runs under Node 22 (it needs it; .ci/node-binary fetches that
// binary without touching the system Node) from its own install in ~/.cache/crm-ci, so the
// project's dependencies and lockfile are untouched.
//
// A scenario passes when none of its checks is a FAILURE. The run fails when a scenario fails that
// the expected-failures file does not list, and when a listed scenario passes (remove its entry).
// Every scenario's checks are kept under test-artifacts/conformance/<revision>/.
//
//   node scripts/conformance.mjs                        both revisions (npm run conformance)
//   node scripts/conformance.mjs --revision 2026-07-28  one revision
//   node scripts/conformance.mjs --results <dir>        judge saved results only (no server, no suite)
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SUITE_PACKAGE = '@modelcontextprotocol/conformance';
const SUITE_VERSION = '0.2.0-alpha.12';
const REVISIONS = ['2025-11-25', '2026-07-28'];
const SUITE_NODE_MAJOR = '22';
const EXPECTED_FILE = join(ROOT, 'conformance', 'expected-failures.json');
const RESULTS_DIR = join(ROOT, 'test-artifacts', 'conformance');
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? tmpdir(), '.cache'), 'crm-ci');
const SUITE_DIR = join(CACHE, `conformance-${SUITE_VERSION}`);
const SUITE_BIN = join(SUITE_DIR, 'node_modules', ...SUITE_PACKAGE.split('/'), 'dist', 'index.js');

const log = (message) => process.stderr.write(`conformance: ${message}\n`);

// ---------------------------------------------------------------------------------------------
// The requirement sets and the results

/**
 * The server scenarios of one requirement set (the suite's requirements/<revision>.yaml): the
 * scored ones, and the ones run and reported but not scored, with the suite's reason. The file's
 * shape is fixed (frozen sets), so a line reader is enough: `server:` lists names, `not_scored:`
 * lists `- scenario:` entries with `leg:` and `reason:`.
 */
function serverScenariosOf(yamlText) {
  const scored = [];
  const notScored = new Map();
  let section = '';
  let entry;
  const flush = () => {
    if (entry?.leg === 'server' && entry.scenario)
      notScored.set(entry.scenario, entry.reason ?? 'not scored');
    entry = undefined;
  };
  for (const line of yamlText.split('\n')) {
    if (/^\s*(#|$)/.test(line)) continue;
    const top = /^([a-z_]+):\s*$/.exec(line);
    if (top) {
      flush();
      section = top[1];
      continue;
    }
    if (section === 'server') {
      const item = /^\s+-\s+([\w/.-]+)\s*$/.exec(line);
      if (item) scored.push(item[1]);
    } else if (section === 'not_scored') {
      const start = /^\s+-\s+scenario:\s*([\w/.-]+)\s*$/.exec(line);
      if (start) {
        flush();
        entry = { scenario: start[1] };
        continue;
      }
      const field = /^\s+(leg|reason):\s*([\w-]+)\s*$/.exec(line);
      if (field && entry) entry[field[1]] = field[2];
    }
  }
  flush();
  if (scored.length === 0) throw new Error('the requirement set lists no server scenario');
  return { scored, notScored };
}

/**
 * The outcome of each scenario from a results folder the suite wrote with `-o`: one folder per
 * scenario, `server-<scenario>-<timestamp>/checks.json`, each check `{id, status, errorMessage}`.
 * A check id can occur more than once; its verdict is the worst. A scenario whose run crashed
 * leaves no checks.json (`ran: false`), which counts as a failure.
 */
function readResults(dir, scenarios) {
  const folders = existsSync(dir) ? readdirSync(dir) : [];
  const outcomes = new Map();
  for (const scenario of scenarios) {
    const pattern = new RegExp(`^server-${scenario.replace(/[/.]/g, '\\$&')}-\\d{4}-\\d{2}-\\d{2}T[\\dZ-]+$`);
    const folder = folders
      .filter((name) => pattern.test(name))
      .sort()
      .at(-1);
    // The suite makes the folder first and writes checks.json only when the scenario ran through.
    if (!folder || !existsSync(join(dir, folder, 'checks.json'))) {
      outcomes.set(scenario, { ran: false, failed: new Set(), passed: new Set() });
      continue;
    }
    const checks = JSON.parse(readFileSync(join(dir, folder, 'checks.json'), 'utf8'));
    if (!Array.isArray(checks)) throw new Error(`${folder}/checks.json is not a list of checks`);
    const failed = new Set(checks.filter((check) => check.status === 'FAILURE').map((check) => check.id));
    const passed = new Set(
      checks.filter((check) => check.status === 'SUCCESS' && !failed.has(check.id)).map((check) => check.id),
    );
    outcomes.set(scenario, { ran: true, failed, passed });
  }
  return outcomes;
}

/**
 * The expected-failures file, checked: each entry names a scenario, a known revision and the
 * reason; with `check` it excuses that one check of the scenario instead of the whole scenario.
 */
function readExpectedFailures(path) {
  const file = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(file.failures)) throw new Error(`${path}: "failures" must be a list`);
  const seen = new Set();
  for (const entry of file.failures) {
    const { scenario, version, check, reason } = entry ?? {};
    if (
      typeof scenario !== 'string' ||
      !REVISIONS.includes(version) ||
      typeof reason !== 'string' ||
      !reason
    ) {
      throw new Error(
        `${path}: each entry needs "scenario", "version" (${REVISIONS.join(' or ')}) and "reason"`,
      );
    }
    if (check !== undefined && (typeof check !== 'string' || !check)) {
      throw new Error(`${path}: "check" of ${scenario} must be a check id`);
    }
    const key = `${version} ${scenario}`;
    if (seen.has(`${key} *`) || (check === undefined && [...seen].some((k) => k.startsWith(`${key} `)))) {
      throw new Error(`${path}: ${scenario} (${version}) is listed both whole and by check`);
    }
    if (seen.has(`${key} ${check ?? '*'}`))
      throw new Error(`${path}: ${scenario} ${check ?? ''} is listed twice for ${version}`);
    seen.add(`${key} ${check ?? '*'}`);
  }
  return file.failures;
}

/** An entry's kind for the table: the words of its reason before the first colon. */
const kindOf = (entry) => entry.reason.split(':')[0];

/**
 * Judges one revision's outcomes against the expected failures: every row for the table, the
 * unexpected failures, the listed scenarios or checks that pass (stale) and the listed ones the set
 * does not have (unknown). A whole-scenario entry expects the scenario to fail; a check entry
 * excuses that check (a check the scenario never reached is tolerated, as the suite's own baseline
 * does: a failed prerequisite reports itself).
 */
function judge(revision, sets, outcomes, expected) {
  const mine = expected.filter((e) => e.version === revision);
  const rows = [];
  const unexpected = [];
  const stale = [];
  const scenarios = [...sets.scored, ...sets.notScored.keys()];
  for (const scenario of scenarios) {
    const outcome = outcomes.get(scenario);
    const entries = mine.filter((e) => e.scenario === scenario);
    const whole = entries.find((e) => e.check === undefined);
    const excused = new Set(entries.flatMap((e) => (e.check === undefined ? [] : [e.check])));
    const scoring = sets.notScored.has(scenario) ? `not scored (${sets.notScored.get(scenario)})` : 'scored';
    const failing = outcome.ran ? [...outcome.failed] : ['(no result: the scenario did not run to the end)'];
    let result;
    if (whole) {
      result = failing.length > 0 ? `expected failure (${kindOf(whole)})` : 'PASSES BUT LISTED: remove it';
      if (failing.length === 0) stale.push(scenario);
    } else {
      const surprising = failing.filter((id) => !excused.has(id));
      const passingExcused = [...excused].filter((id) => outcome.passed.has(id));
      if (surprising.length > 0) {
        result = `UNEXPECTED FAILURE: ${surprising.join(', ')}`;
        unexpected.push(`${scenario} (${surprising.join(', ')})`);
      } else if (passingExcused.length > 0) {
        result = `LISTED CHECK PASSES: remove ${passingExcused.join(', ')}`;
        stale.push(`${scenario} (${passingExcused.join(', ')})`);
      } else if (failing.length > 0) {
        result = `pass but for ${failing.length} listed check${failing.length > 1 ? 's' : ''}`;
      } else {
        result = 'pass';
      }
    }
    rows.push({ scenario, version: revision, scoring, result });
  }
  const known = new Set(scenarios);
  const unknown = mine.filter((e) => !known.has(e.scenario)).map((e) => e.scenario);
  return { rows, unexpected, stale, unknown };
}

function printTable(rows) {
  const headers = { scenario: 'scenario', version: 'version', scoring: 'scoring', result: 'result' };
  const keys = Object.keys(headers);
  const width = Object.fromEntries(
    keys.map((k) => [k, Math.max(...[headers, ...rows].map((r) => r[k].length))]),
  );
  const line = (row) =>
    keys.map((k, i) => (i === keys.length - 1 ? row[k] : row[k].padEnd(width[k]))).join('  ');
  console.log(line(headers));
  console.log(keys.map((k) => '-'.repeat(width[k])).join('  '));
  for (const row of rows) console.log(line(row));
}

/** Judges every revision's results folder, prints the table and the verdict; returns the exit code. */
function report(resultsDir, revisions, expectedPath) {
  const expected = readExpectedFailures(expectedPath);
  const rows = [];
  const problems = [];
  const summaries = [];
  for (const revision of revisions) {
    const sets = serverScenariosOf(readFileSync(join(resultsDir, revision, 'requirements.yaml'), 'utf8'));
    const outcomes = readResults(join(resultsDir, revision, 'scenarios'), [
      ...sets.scored,
      ...sets.notScored.keys(),
    ]);
    const verdict = judge(revision, sets, outcomes, expected);
    rows.push(...verdict.rows);
    const scoredPassing = sets.scored.filter(
      (s) => outcomes.get(s).ran && outcomes.get(s).failed.size === 0,
    ).length;
    summaries.push(`${revision}: ${scoredPassing} of ${sets.scored.length} scored scenarios pass`);
    for (const s of verdict.unexpected)
      problems.push(`${revision} ${s}: fails, and the expected failures do not list it`);
    for (const s of verdict.stale)
      problems.push(`${revision} ${s}: passes now; remove it from the expected failures`);
    for (const s of verdict.unknown)
      problems.push(`${revision} ${s}: listed, but not a server scenario of this set`);
  }
  printTable(rows);
  console.log('');
  for (const summary of summaries) console.log(summary);
  if (problems.length > 0) {
    console.log(`\nConformance FAILED (${expectedPath.replace(`${ROOT}`, '')}):`);
    for (const problem of problems) console.log(`  ${problem}`);
    return 1;
  }
  console.log('\nConformance as expected: every failure is listed, every listed scenario fails.');
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The run: Node 22, the suite, the server, the token, the proxy

/** The Node 22 binary (CONFORMANCE_NODE overrides it), fetched once by .ci/node-binary. */
function suiteNode() {
  if (process.env.CONFORMANCE_NODE) return process.env.CONFORMANCE_NODE;
  return execFileSync(join(ROOT, '.ci', 'node-binary'), [SUITE_NODE_MAJOR], { encoding: 'utf8' }).trim();
}

/** Installs the pinned suite into the cache once (beside the project, never into it). */
function installSuite(node) {
  if (existsSync(SUITE_BIN)) return;
  log(`installing ${SUITE_PACKAGE}@${SUITE_VERSION} into ${SUITE_DIR}`);
  mkdirSync(CACHE, { recursive: true });
  const staging = mkdtempSync(join(CACHE, 'conformance-install-'));
  writeFileSync(join(staging, 'package.json'), '{ "private": true }\n');
  // npm itself runs on the Node 22 binary (first on PATH), the Node the suite runs on.
  execFileSync(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--save-exact',
      '--ignore-scripts',
      `${SUITE_PACKAGE}@${SUITE_VERSION}`,
    ],
    {
      cwd: staging,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` },
    },
  );
  rmSync(SUITE_DIR, { recursive: true, force: true });
  renameSync(staging, SUITE_DIR);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * `crm serve` on a scratch embedded database; resolves once /healthz answers. Browsers' origins
 * are those of the proxy in front (MCP_ALLOWED_ORIGINS, as a deployment behind a proxy on another
 * port configures it): the suite's DNS-rebinding scenario sends its own loopback Origin.
 */
async function startServer(dataDir, proxyPort) {
  const port = await freePort();
  const origins = ['localhost', '127.0.0.1', '[::1]'].map((host) => `http://${host}:${proxyPort}`);
  const child = spawn(process.execPath, [join(ROOT, 'cli', 'bin.js'), 'serve'], {
    cwd: ROOT,
    // RATE_LIMITS=off: the suite is one client sending some 300 requests within seconds, far over
    // the 120 MCP messages a minute a key may send (test/rate-limits.test.ts locks those limits).
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      RATE_LIMITS: 'off',
      MCP_ALLOWED_ORIGINS: origins.join(','),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    const up = await fetch(`${base}/healthz`).then(
      (res) => res.ok,
      () => false,
    );
    if (up) return { base, child, exited };
    if (child.exitCode !== null)
      throw new Error(`crm serve exited with ${child.exitCode} before it answered`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  child.kill('SIGTERM');
  throw new Error('crm serve did not answer /healthz within 120 s');
}

async function postJson(url, body, token) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  if (!res.ok) throw new Error(`POST ${url} answered ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** A signed-up owner's personal access token holding both MCP scopes. */
async function mcpToken(base) {
  const { token } = await postJson(`${base}/api/v1/auth/signup`, {
    organization_name: 'Conformance',
    name: 'Conformance Suite',
    email: 'conformance@example.com',
    password: 'conformance-password-1',
  });
  const key = await postJson(
    `${base}/api/v1/settings/api-keys`,
    { label: 'MCP conformance suite', scopes: ['mcp:read', 'mcp:write'] },
    token,
  );
  return key.plain_token;
}

/**
 * The fronting proxy: every request goes to the server (`upstream.base`, set once it runs)
 * unchanged, Host, Origin and the body streamed as they came, but for the token and the toolset
 * selection it adds; answers, server-sent event streams included, come back as they are.
 */
async function startProxy(upstream) {
  const server = createServer((req, res) => {
    const target = new URL(upstream.base);
    const headers = { ...req.headers, authorization: `Bearer ${upstream.token}` };
    headers['x-mcp-toolsets'] ??= 'all';
    const forward = httpRequest(
      { hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${err.message}`);
    });
    req.pipe(forward);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/mcp`, port, server };
}

/** One revision's requirement set through the suite; its output goes to a log beside the results. */
function runSuite(node, url, revision) {
  const dir = join(RESULTS_DIR, revision);
  mkdirSync(join(dir, 'scenarios'), { recursive: true });
  const requirements = join(dirname(dirname(SUITE_BIN)), 'requirements', `${revision}.yaml`);
  writeFileSync(join(dir, 'requirements.yaml'), readFileSync(requirements));
  const logFile = join(dir, 'suite.log');
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      node,
      [SUITE_BIN, 'server', '--url', url, '--requirements', revision, '-o', join(dir, 'scenarios')],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    child.once('error', reject);
    // The suite exits non-zero whenever a scored scenario fails; the judging is ours, from its files.
    child.once('close', (code) => {
      writeFileSync(logFile, Buffer.concat(chunks));
      log(
        `${revision}: the suite ran in ${((Date.now() - started) / 1000).toFixed(1)} s (exit ${code}; log ${logFile})`,
      );
      resolve();
    });
  });
}

async function run(revisions) {
  const node = suiteNode();
  installSuite(node);
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-conformance-'));
  let server;
  let proxy;
  try {
    const upstream = { base: '', token: '' };
    proxy = await startProxy(upstream);
    server = await startServer(dataDir, proxy.port);
    upstream.base = server.base;
    upstream.token = await mcpToken(server.base);
    log(
      `server ${server.base}, suite at ${proxy.url} on Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()}`,
    );
    // One revision after the other: side by side they would only compete for the same two cores.
    for (const revision of revisions) await runSuite(node, proxy.url, revision);
  } finally {
    proxy?.server.closeAllConnections();
    proxy?.server.close();
    if (server) {
      server.child.kill('SIGTERM');
      const stopped = await server.exited;
      if (stopped !== 0) log(`crm serve stopped with ${stopped}`);
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
  return report(RESULTS_DIR, revisions, EXPECTED_FILE);
}

async function main() {
  const { values } = parseArgs({
    options: {
      revision: { type: 'string', multiple: true },
      results: { type: 'string' },
      expected: { type: 'string' },
    },
  });
  const revisions = values.revision ?? REVISIONS;
  for (const revision of revisions) {
    if (!REVISIONS.includes(revision))
      throw new Error(`unknown revision ${revision}: ${REVISIONS.join(' or ')}`);
  }
  if (values.results) return report(values.results, revisions, values.expected ?? EXPECTED_FILE);
  if (values.expected) throw new Error('--expected is only for judging saved --results');
  return run(revisions);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      log(err instanceof Error ? (err.stack ?? err.message) : String(err));
      process.exit(2);
    },
  );
}
