// `npm run bench:invoices`: invoicing at the size of a busy organization (issue 11 item 11). For each
// backend (the embedded default and PostgreSQL) it seeds one organization with 1,000 leads and
// 100,000 invoices of 5 lines each (set-based SQL: 20% drafts, 50% open, 25% paid, 5% void, numbers
// gap-free in creation order), starts a real server in-process and measures under concurrency:
//   (a) the first page of invoices, GET /api/v1/invoices?limit=25 (autocannon);
//   (b) a filtered page with its count, GET /api/v1/invoices?status=open&limit=25 (autocannon);
//   (c) creating a 5-line draft and finalizing it, one pair after the other on each of W workers
//       (POST /api/v1/invoices, then POST /api/v1/invoices/{id}/finalize); the pair's latency is one
//       sample. Afterwards every number handed out is checked to continue the seeded sequence
//       without a gap or a duplicate.
// Results are appended to bench/results.md and written to bench/results/invoices-<time>.json.
//
// Environment: INVOICES_COUNT (default 100000), BENCH_SECONDS (per scenario, default 10),
// BENCH_CONNECTIONS (autocannon connections, default 10), INVOICES_WORKERS (create+finalize
// workers, default 10), BENCH_BACKENDS (comma list of embedded,postgres), BENCH_DATABASE_URL,
// BENCH_APPEND=0 (print without appending to bench/results.md).

import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { createServices } from '../app/services.ts';
import { generatePat, hashToken, tokenPrefix } from '../core/auth/tokens.ts';
import { loadConfig } from '../core/config.ts';
import { apiKeys } from '../core/db/schema.ts';
import { rowsOf } from '../core/db/sql.ts';
import { newId } from '../core/ids.ts';
import type { LineItemInput } from '../core/line-items.ts';
import { readLiveCount } from '../core/live-counts.ts';
import { createLogger } from '../core/logger.ts';
import { documentTotals, formatMinor } from '../core/money.ts';
import type { Services } from '../core/services.ts';
import { createApp } from '../http/app.ts';
import { createDatabase } from '../test/support/postgres-admin.ts';
import { gitCommit, machine } from './environment.ts';
import { type LoadResult, runLoad } from './measure.ts';
import { seedOrganization } from './seed.ts';
import { listenOnLoopback } from './server-process.ts';

const env = z
  .object({
    INVOICES_COUNT: z.coerce.number().int().positive().default(100_000),
    BENCH_SECONDS: z.coerce.number().positive().default(10),
    BENCH_CONNECTIONS: z.coerce.number().int().positive().default(10),
    INVOICES_WORKERS: z.coerce.number().int().positive().default(10),
    BENCH_BACKENDS: z.string().default('embedded,postgres'),
    BENCH_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
    BENCH_APPEND: z.enum(['0', '1']).default('1'),
  })
  .parse(process.env);

const LEADS = 1000;
const CURRENCY = 'EUR';
const WARMUP_SECONDS = Math.min(3, env.BENCH_SECONDS);
const TOTAL_RUNS = 50;
const benchDir = fileURLToPath(new URL('.', import.meta.url));

const idRows = z.array(z.object({ id: z.string() }));
const countRows = z.array(z.object({ n: z.union([z.string(), z.number()]) }));

function log(message: string): void {
  process.stderr.write(`[bench:invoices] ${message}\n`);
}

/** Ten 5-line templates; each seeded invoice takes one, so its stored totals are the module's own. */
function templates(): Array<{ lines: LineItemInput[]; subtotal: bigint; tax: bigint; total: bigint }> {
  return Array.from({ length: 10 }, (_, k) => {
    const lines: LineItemInput[] = Array.from({ length: 5 }, (_, j) => ({
      description: `Service ${k}-${j}: consulting hours and materials`,
      quantity: 1 + ((k + j) % 4) * 0.25,
      unit_price: (4999 + k * 1000 + j * 100) / 100,
      ...(j % 2 === 0 ? { tax_percent: 20 } : {}),
      ...(j === 4 ? { discount_percent: 10 } : {}),
    }));
    const totals = documentTotals(lines, CURRENCY);
    return { lines, subtotal: totals.subtotal, tax: totals.taxTotal, total: totals.total };
  });
}

/**
 * One INSERT ... SELECT per chunk: the statuses cycle in blocks of 20 (4 drafts, 10 open, 5 paid,
 * 1 void), and a finalized invoice's number is its rank among the finalized ones, so the seeded
 * numbers are INV-000001.. without a gap, as finalize would have given them.
 */
async function seedInvoices(services: Services, orgId: string, ownerId: string): Promise<number> {
  const db = services.db.system;
  const leadIds = idRows
    .parse(rowsOf(await db.execute(sql`select id from leads where org_id = ${orgId} order by id`)))
    .map((r) => r.id);
  const sets = templates();
  await db.execute(sql`create temporary table bench_templates (k int primary key, lines jsonb,
    subtotal bigint, tax bigint, total bigint)`);
  for (const [k, t] of sets.entries()) {
    await db.execute(sql`insert into bench_templates values (${k}, ${JSON.stringify(t.lines)}::jsonb,
      ${t.subtotal.toString()}::bigint, ${t.tax.toString()}::bigint, ${t.total.toString()}::bigint)`);
  }
  await db.execute(sql`create temporary table bench_leads (n int primary key, id text)`);
  for (let i = 0; i < leadIds.length; i += 500) {
    const chunk = leadIds.slice(i, i + 500).map((id, j) => sql`(${i + j}, ${id})`);
    await db.execute(sql`insert into bench_leads values ${sql.join(chunk, sql`, `)}`);
  }
  const start = Math.floor(Date.now() / 1000) - env.INVOICES_COUNT * 60;
  const chunkSize = 25_000;
  for (let from = 1; from <= env.INVOICES_COUNT; from += chunkSize) {
    const to = Math.min(from + chunkSize - 1, env.INVOICES_COUNT);
    // Finalized invoices before position i: 16 per full block of 20, plus those of its own block.
    await db.execute(sql`
      insert into invoices (id, org_id, lead_id, number, status, currency, issue_date, due_date, notes,
        line_items, subtotal_minor, tax_total_minor, total_minor, amount_paid_minor, payments,
        is_overdue, finalized_at, paid_at, voided_at, created_by, created_at, updated_at)
      select
        lpad(to_hex(${start} + g.i * 60), 8, '0') || substr(md5(g.i::text || ${orgId}), 1, 16),
        ${orgId}, l.id,
        case when s.status = 'draft' then null
          else 'INV-' || lpad(((g.i - 1) / 20 * 16 + (g.i - 1) % 20 - 3)::text, 6, '0') end,
        s.status, ${CURRENCY},
        (to_timestamp(${start} + g.i * 60))::date,
        (to_timestamp(${start} + g.i * 60))::date + 30,
        'Seeded invoice ' || g.i,
        t.lines, t.subtotal, t.tax, t.total,
        case when s.status = 'paid' then t.total else 0 end,
        case when s.status = 'paid' then jsonb_build_array(jsonb_build_object(
          'amount', (t.total / 100)::text || '.' || lpad((t.total % 100)::text, 2, '0'),
          'paid_at', to_char(to_timestamp(${start} + g.i * 60 + 3600) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          'method', 'bank_transfer', 'reference', null, 'recorded_by', ${ownerId}::text))
          else '[]'::jsonb end,
        false,
        case when s.status = 'draft' then null else to_timestamp(${start} + g.i * 60 + 60) end,
        case when s.status = 'paid' then to_timestamp(${start} + g.i * 60 + 3600) end,
        case when s.status = 'void' then to_timestamp(${start} + g.i * 60 + 7200) end,
        ${ownerId}, to_timestamp(${start} + g.i * 60), to_timestamp(${start} + g.i * 60)
      from generate_series(${from}::int, ${to}::int) as g(i)
      cross join lateral (select case
        when (g.i - 1) % 20 < 4 then 'draft'
        when (g.i - 1) % 20 < 14 then 'open'
        when (g.i - 1) % 20 < 19 then 'paid'
        else 'void' end as status) s
      join bench_templates t on t.k = g.i % 10
      join bench_leads l on l.n = g.i % ${leadIds.length}`);
    log(`  ${to} invoices`);
  }
  const finalized = countRows.parse(
    rowsOf(
      await db.execute(
        sql`select count(*) as n from invoices where org_id = ${orgId} and number is not null`,
      ),
    ),
  )[0];
  const last = Number(finalized?.n ?? 0);
  await db.execute(sql`insert into document_counters (org_id, kind, last_number) values (${orgId}, 'invoice', ${last})
    on conflict (org_id, kind) do update set last_number = excluded.last_number`);
  await db.execute(sql`drop table bench_templates`);
  await db.execute(sql`drop table bench_leads`);
  await db.execute(sql`vacuum analyze invoices`);
  return last;
}

async function invoiceToken(services: Services, orgId: string, userId: string): Promise<string> {
  const token = generatePat();
  await services.db.system.insert(apiKeys).values({
    id: newId(),
    orgId,
    userId,
    label: 'invoice benchmark',
    tokenHash: hashToken(token),
    tokenPrefix: tokenPrefix(token),
    scopes: ['read:invoices', 'write:invoices', 'read:leads'],
  });
  return token;
}

/** Median milliseconds of the statement behind a list's total: count(*), or the live-count ledger's sum. */
interface TotalTimes {
  countAll: number;
  ledgerAll: number;
  countOpen: number;
  ledgerOpen: number;
}

/**
 * The statement behind a list's total, alone, alternated in one run on the seeded organization:
 * count(*) over the live invoices (what the list ran before the live-count ledger) against the
 * ledger's sum (core/live-counts.ts), unfiltered and for status=open. Medians of TOTAL_RUNS.
 */
async function timeTotals(services: Services, orgId: string): Promise<TotalTimes> {
  const db = services.db.system;
  const times: Record<keyof TotalTimes, number[]> = {
    countAll: [],
    ledgerAll: [],
    countOpen: [],
    ledgerOpen: [],
  };
  const timed = async (key: keyof TotalTimes, run: () => Promise<unknown>) => {
    const started = performance.now();
    await run();
    times[key].push(performance.now() - started);
  };
  for (let i = 0; i < TOTAL_RUNS; i++) {
    await timed('countAll', () =>
      db.execute(sql`select count(*) from invoices where org_id = ${orgId} and deleted_at is null`),
    );
    await timed('ledgerAll', () => readLiveCount(db, orgId, 'invoices'));
    await timed('countOpen', () =>
      db.execute(
        sql`select count(*) from invoices where org_id = ${orgId} and deleted_at is null and status = 'open'`,
      ),
    );
    await timed('ledgerOpen', () => readLiveCount(db, orgId, 'invoices', ['open']));
  }
  const median = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  return {
    countAll: median(times.countAll),
    ledgerAll: median(times.ledgerAll),
    countOpen: median(times.countOpen),
    ledgerOpen: median(times.ledgerOpen),
  };
}

interface Stats {
  count: number;
  perSecond: number;
  p50: number;
  p90: number;
  p99: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const createdBody = z.object({ invoice: z.object({ _id: z.string() }) });
const finalizedBody = z.object({ invoice: z.object({ number: z.string(), status: z.literal('open') }) });

/** W workers, each creating a draft and finalizing it in a loop for `seconds`; a pair is a sample. */
async function createAndFinalize(
  base: string,
  token: string,
  leadId: string,
  seconds: number,
): Promise<Stats & { numbers: string[] }> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const body = JSON.stringify({
    lead_id: leadId,
    currency: CURRENCY,
    due_date: '2027-01-31',
    line_items: templates()[3]?.lines,
    notes: 'Benchmark invoice',
  });
  const samples: number[] = [];
  const numbers: string[] = [];
  const until = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < until) {
      const started = performance.now();
      const created = await fetch(`${base}/api/v1/invoices`, { method: 'POST', headers, body });
      if (created.status !== 201)
        throw new Error(`create answered ${created.status}: ${await created.text()}`);
      const { invoice } = createdBody.parse(await created.json());
      const finalized = await fetch(`${base}/api/v1/invoices/${invoice._id}/finalize`, {
        method: 'POST',
        headers,
      });
      if (finalized.status !== 200)
        throw new Error(`finalize answered ${finalized.status}: ${await finalized.text()}`);
      numbers.push(finalizedBody.parse(await finalized.json()).invoice.number);
      samples.push(performance.now() - started);
    }
  };
  const begun = performance.now();
  await Promise.all(Array.from({ length: env.INVOICES_WORKERS }, worker));
  const elapsed = (performance.now() - begun) / 1000;
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: samples.length,
    perSecond: samples.length / elapsed,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    numbers,
  };
}

/** The numbers finalize gave must be last+1 .. last+n exactly: no gap, no duplicate. */
function checkNumbers(numbers: readonly string[], lastSeeded: number): string {
  const values = numbers.map((n) => Number(n.slice('INV-'.length))).sort((a, b) => a - b);
  values.forEach((value, i) => {
    if (value !== lastSeeded + i + 1)
      throw new Error(`numbering broke: expected INV-${lastSeeded + i + 1}, got INV-${value}`);
  });
  return `${values.length} numbers INV-${String(lastSeeded + 1).padStart(6, '0')}..INV-${String(lastSeeded + values.length).padStart(6, '0')}, no gap, no duplicate`;
}

interface BackendResult {
  backend: string;
  seedSeconds: number;
  list: LoadResult;
  filtered: LoadResult;
  pair: Stats;
  numbering: string;
  totals: TotalTimes;
}

const listBody = z.object({ invoices: z.array(z.unknown()), total: z.number() });

async function benchBackend(key: string): Promise<BackendResult> {
  const prepared =
    key === 'embedded'
      ? (() => {
          const dir = mkdtempSync(join(tmpdir(), 'crm-bench-invoices-'));
          return {
            label: 'Embedded default (PGlite in a temporary DATA_DIR)',
            env: { DATA_DIR: dir },
            cleanup: async () => rmSync(dir, { recursive: true, force: true }),
          };
        })()
      : await createDatabase(env.BENCH_DATABASE_URL, 'crm_bench_invoices').then((db) => ({
          label: 'PostgreSQL',
          env: { DATABASE_URL: db.url },
          cleanup: db.drop,
        }));
  let services: Services | undefined;
  let server: ServerType | undefined;
  try {
    const config = loadConfig({
      LOG_LEVEL: 'warn',
      JWT_SECRET: randomBytes(32).toString('hex'),
      ...prepared.env,
    });
    services = await createServices(config, { withoutRateLimits: true, logger: createLogger('warn') });
    const seedStart = performance.now();
    const org = await seedOrganization(services, LEADS);
    const lastSeeded = await seedInvoices(services, org.orgId, org.ownerId);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    log(`${prepared.label}: seeded ${env.INVOICES_COUNT} invoices in ${seedSeconds.toFixed(1)} s`);
    const totals = await timeTotals(services, org.orgId);
    log(`totals: count(*) ${totals.countAll.toFixed(2)} ms, ledger ${totals.ledgerAll.toFixed(2)} ms`);
    const token = await invoiceToken(services, org.orgId, org.ownerId);
    server = createAdaptorServer({ fetch: createApp(services).fetch });
    const base = await listenOnLoopback(server);
    const auth = { authorization: `Bearer ${token}` };
    const common = { connections: env.BENCH_CONNECTIONS, seconds: env.BENCH_SECONDS };
    const listUrl = `${base}/api/v1/invoices?limit=25`;
    const filteredUrl = `${base}/api/v1/invoices?status=open&limit=25`;
    // One checked request of each kind first: a benchmark of errors measures nothing.
    const first = listBody.parse(await (await fetch(listUrl, { headers: auth })).json());
    if (first.invoices.length !== 25 || first.total !== env.INVOICES_COUNT)
      throw new Error(`list answered ${first.invoices.length} of ${first.total}`);
    const open = listBody.parse(await (await fetch(filteredUrl, { headers: auth })).json());
    if (open.total !== env.INVOICES_COUNT / 2) throw new Error(`open invoices: ${open.total}`);
    const measure = async (url: string): Promise<LoadResult> => {
      await runLoad({ ...common, url, method: 'GET', headers: auth, seconds: WARMUP_SECONDS });
      const result = await runLoad({ ...common, url, method: 'GET', headers: auth });
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${JSON.stringify(result)}`);
      return result;
    };
    const list = await measure(listUrl);
    log(`list: ${list.requestsPerSecond.toFixed(0)} req/s, p50 ${list.p50} ms`);
    const filtered = await measure(filteredUrl);
    log(`filtered list: ${filtered.requestsPerSecond.toFixed(0)} req/s, p50 ${filtered.p50} ms`);
    const leadId = idRows.parse(
      rowsOf(await services.db.system.execute(sql`select id from leads where org_id = ${org.orgId} limit 1`)),
    )[0]?.id;
    if (!leadId) throw new Error('no seeded lead');
    await createAndFinalize(base, token, leadId, WARMUP_SECONDS);
    const pairRun = await createAndFinalize(base, token, leadId, env.BENCH_SECONDS);
    const finalizedBefore = countRows.parse(
      rowsOf(
        await services.db.system.execute(
          sql`select max(substr(number, 5)::int) as n from invoices where org_id = ${org.orgId}`,
        ),
      ),
    )[0];
    const lastBeforeRun = Number(finalizedBefore?.n ?? 0) - pairRun.numbers.length;
    const numbering = checkNumbers(pairRun.numbers, lastBeforeRun);
    if (lastBeforeRun < lastSeeded) throw new Error('numbers went backwards');
    log(
      `create+finalize: ${pairRun.perSecond.toFixed(1)} pairs/s, p50 ${pairRun.p50.toFixed(1)} ms; ${numbering}`,
    );
    const { numbers: _numbers, ...pair } = pairRun;
    return { backend: prepared.label, seedSeconds, list, filtered, pair, numbering, totals };
  } finally {
    if (server) {
      const s = server;
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
    await services?.close();
    await prepared.cleanup();
  }
}

function section(date: string, results: readonly BackendResult[]): string {
  const ms = (v: number) => v.toFixed(1);
  const ms2 = (v: number) => v.toFixed(2);
  const exampleTotal = templates()[3]?.total ?? 0n;
  return [
    `## ${date} — invoices at 100,000 per organization (\`npm run bench:invoices\`)`,
    '',
    `- Commit: ${gitCommit()}`,
    `- Machine: ${machine()}`,
    `- Data: one organization, ${LEADS} leads, ${env.INVOICES_COUNT} invoices of 5 lines (20% draft, 50% open, 25% paid, 5% void). Lists: autocannon, ${env.BENCH_CONNECTIONS} connections, ${env.BENCH_SECONDS} s after a ${WARMUP_SECONDS} s warm-up. Create+finalize: ${env.INVOICES_WORKERS} concurrent workers for ${env.BENCH_SECONDS} s, each sample one POST /invoices (5 lines, total ${formatMinor(exampleTotal, CURRENCY)} ${CURRENCY}) followed by its POST /invoices/{id}/finalize. Request limits off, as in bench/run.ts.`,
    '',
    '| backend | seed | (a) list p50 / p99 ms | (a) req/s | (b) status=open p50 / p99 ms | (b) req/s | (c) create+finalize p50 / p90 / p99 ms | (c) pairs/s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.backend} | ${r.seedSeconds.toFixed(0)} s | ${r.list.p50} / ${r.list.p99} | ${r.list.requestsPerSecond.toFixed(0)} | ${r.filtered.p50} / ${r.filtered.p99} | ${r.filtered.requestsPerSecond.toFixed(0)} | ${ms(r.pair.p50)} / ${ms(r.pair.p90)} / ${ms(r.pair.p99)} | ${r.pair.perSecond.toFixed(1)} |`,
    ),
    '',
    ...results.map((r) => `- ${r.backend}: ${r.numbering}.`),
    ...results.map(
      (r) =>
        `- ${r.backend}, the statement behind a list's total alone (median of ${TOTAL_RUNS}, alternated): count(*) ${ms2(r.totals.countAll)} ms against the live-count ledger ${ms2(r.totals.ledgerAll)} ms; status=open ${ms2(r.totals.countOpen)} ms against ${ms2(r.totals.ledgerOpen)} ms.`,
    ),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const date = new Date().toISOString();
  const results: BackendResult[] = [];
  for (const key of env.BENCH_BACKENDS.split(',').map((s) => s.trim())) {
    if (key !== 'embedded' && key !== 'postgres') throw new Error(`unknown backend ${key}`);
    results.push(await benchBackend(key));
  }
  const text = section(date, results);
  if (env.BENCH_APPEND === '1') {
    appendFileSync(join(benchDir, 'results.md'), `\n${text}`);
    const dir = join(benchDir, 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, `invoices-${date.replace(/[:.]/g, '-')}.json`),
      `${JSON.stringify({ date, commit: gitCommit(), results }, null, 2)}\n`,
    );
  }
  process.stdout.write(`${text}\n`);
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
