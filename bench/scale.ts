// `npm run bench:scale`: the sales core at scale. Creates a scratch PostgreSQL database, runs the
// migrations by opening the services on it, seeds one organization with set-based SQL (1,000,000
// leads, 1,000,000 contacts, 300,000 opportunities, 2,000,000 activities, 200,000 tasks), then
// measures through the real app in-process (createApp + app.request, sequential, N requests after
// warm-ups): (a) the first page of leads, (b) a full-text lead search, (c) the results of a smart
// view with three filters, (d) filtered and searched lists whose `total` needs a count, and the
// count statements alone. Every statement a measured request sends is captured (pg's Client.query is
// wrapped) and EXPLAIN (ANALYZE, BUFFERS) of each goes to bench/results/scale-<time>-explain.txt.
// Results are appended to bench/results.md.
//
// Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
// SCALE_FACTOR (default 1: multiplies every row count; 0.01 for a quick try), SCALE_REQUESTS (200),
// SCALE_WARMUP (20), SCALE_KEEP_DATABASE=1 (keep the scratch database and print its URL),
// SCALE_REUSE_URL (measure an already seeded database instead of creating one), SCALE_APPEND=0 (do
// not append to bench/results.md: trial runs), SCALE_CASES=list,search,... (measure only these).

import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { z } from 'zod';
import { createServices } from '../app/services.ts';
import { DEFAULT_SCOPES } from '../core/access.ts';
import { generatePat, hashToken, tokenPrefix } from '../core/auth/tokens.ts';
import { loadConfig } from '../core/config.ts';
import { apiKeys } from '../core/db/schema.ts';
import { rowsOf } from '../core/db/sql.ts';
import { newId } from '../core/ids.ts';
import { createLogger } from '../core/logger.ts';
import { createOrganizationWithOwner } from '../core/organizations.ts';
import type { Services } from '../core/services.ts';
import { createApp } from '../http/app.ts';
import { createDatabase } from '../test/support/postgres-admin.ts';
import { gitCommit, machine } from './environment.ts';

const env = z
  .object({
    BENCH_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
    SCALE_FACTOR: z.coerce.number().positive().max(10).default(1),
    SCALE_REQUESTS: z.coerce.number().int().positive().default(200),
    SCALE_WARMUP: z.coerce.number().int().min(0).default(20),
    SCALE_KEEP_DATABASE: z.enum(['0', '1']).default('0'),
    SCALE_REUSE_URL: z.string().url().optional(),
    /** 0: print the section without appending it to bench/results.md (trial runs). */
    SCALE_APPEND: z.enum(['0', '1']).default('1'),
    /** Comma list of case keys to measure (list, search, smartView, filteredTotal, globalSearch); all by default. */
    SCALE_CASES: z.string().optional(),
  })
  .parse(process.env);

const ORG_NAME = 'Scale Benchmark Org';
const COUNTS = {
  leads: Math.round(1_000_000 * env.SCALE_FACTOR),
  contacts: Math.round(1_000_000 * env.SCALE_FACTOR),
  opportunities: Math.round(300_000 * env.SCALE_FACTOR),
  activities: Math.round(2_000_000 * env.SCALE_FACTOR),
  tasks: Math.round(200_000 * env.SCALE_FACTOR),
};
/** Rows per INSERT ... SELECT, so progress shows and no statement runs for minutes. */
const CHUNK = 250_000;
/** The word searched in (b): one of NOUNS, so about 1 lead in NOUNS.length has it in its name. */
const SEARCH_WORD = 'harbor';
const TARGETS = { list: 50, search: 50, smartView: 150 };

const ADJECTIVES = [
  'Acme',
  'Blue',
  'Bright',
  'Cedar',
  'Coastal',
  'Crimson',
  'Delta',
  'Eagle',
  'Evergreen',
  'First',
  'Global',
  'Golden',
  'Granite',
  'Green',
  'Highland',
  'Horizon',
  'Iron',
  'Liberty',
  'Lunar',
  'Maple',
  'Metro',
  'Midwest',
  'North',
  'Nova',
  'Oak',
  'Pacific',
  'Pioneer',
  'Prime',
  'Quantum',
  'Rapid',
  'Red',
  'River',
  'Silver',
  'Smart',
  'Solar',
  'Summit',
  'Swift',
  'Titan',
  'Union',
  'United',
  'Urban',
  'Valley',
  'Vertex',
  'Vista',
  'West',
  'Zenith',
];
const NOUNS = [
  'Analytics',
  'Bakery',
  'Builders',
  'Capital',
  'Clinic',
  'Consulting',
  'Dental',
  'Design',
  'Dynamics',
  'Energy',
  'Engineering',
  'Farms',
  'Fitness',
  'Foods',
  'Freight',
  'Harbor',
  'Health',
  'Homes',
  'Hotels',
  'Insurance',
  'Labs',
  'Legal',
  'Logistics',
  'Marine',
  'Media',
  'Medical',
  'Motors',
  'Networks',
  'Outfitters',
  'Partners',
  'Pharma',
  'Plumbing',
  'Printing',
  'Realty',
  'Robotics',
  'Roofing',
  'Security',
  'Software',
  'Solutions',
  'Studios',
  'Supply',
  'Systems',
  'Textiles',
  'Travel',
  'Ventures',
  'Wellness',
  'Wireless',
  'Works',
];
const SUFFIXES = ['Inc', 'LLC', 'Ltd', 'Group', 'Co', 'GmbH', 'SA', 'Holdings'];
const FIRST_NAMES = [
  'Ada',
  'Alan',
  'Amara',
  'Ben',
  'Carla',
  'Chen',
  'Dana',
  'Diego',
  'Elena',
  'Farah',
  'Grace',
  'Hugo',
  'Ines',
  'Jamal',
  'Jane',
  'Kenji',
  'Lara',
  'Liam',
  'Maya',
  'Mohammed',
  'Nina',
  'Omar',
  'Priya',
  'Quinn',
  'Rosa',
  'Sam',
  'Sofia',
  'Tariq',
  'Uma',
  'Victor',
  'Wei',
  'Yara',
  'Zoe',
];
const LAST_NAMES = [
  'Adams',
  'Baker',
  'Costa',
  'Dubois',
  'Evans',
  'Fischer',
  'Garcia',
  'Haddad',
  'Ito',
  'Jensen',
  'Kim',
  'Lopez',
  'Moreau',
  'Nakamura',
  'Okafor',
  'Patel',
  'Quispe',
  'Rossi',
  'Schmidt',
  'Tanaka',
  'Ueda',
  'Varga',
  'Wong',
  'Xu',
  'Young',
  'Zimmer',
];
const INDUSTRIES = ['software', 'retail', 'health', 'finance', 'manufacturing', 'education'];

function log(message: string): void {
  process.stderr.write(`[bench:scale] ${message}\n`);
}

function sqlArray(words: readonly string[]): string {
  return `array[${words.map((w) => `'${w.replaceAll("'", "''")}'`).join(',')}]::text[]`;
}
/** A random element of a SQL text array literal. */
function pick(words: readonly string[]): string {
  return `(${sqlArray(words)})[1 + floor(random() * ${words.length})::int]`;
}
/** The id of the i-th seeded row of a table: a 2-hex table code and the number, 24 hex in all. */
function idOf(code: string, i: string): string {
  return `'${code}' || lpad(to_hex(${i}), 22, '0')`;
}

// ---------------------------------------------------------------------------------------------
// Scratch database and seed

async function createScratch(adminUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  return createDatabase(adminUrl, 'crm_scale');
}

/** Inserts `total` rows in chunks: `statement` selects from generate_series($1, $2) as i. */
async function insertChunked(
  client: pg.Client,
  table: string,
  total: number,
  statement: string,
): Promise<number> {
  const started = performance.now();
  for (let from = 1; from <= total; from += CHUNK) {
    const to = Math.min(total, from + CHUNK - 1);
    await client.query(statement, [from, to]);
    log(`${table}: ${to} / ${total}`);
  }
  return performance.now() - started;
}

interface SeedReport {
  ms: Record<string, number>;
  rows: Record<string, number>;
}

async function seed(url: string, orgId: string, ownerId: string): Promise<SeedReport> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const ms: Record<string, number> = {};
  try {
    await client.query(`set maintenance_work_mem = '256MB'`);
    await client.query('select setseed(0.42)');
    const org = `'${orgId}'`;
    const owner = `'${ownerId}'`;
    // Creation times spread evenly over the two years before now, oldest first.
    const span = 730 * 24 * 3600;
    const leadAt = (i: string) =>
      `now() - make_interval(secs => ${span} - ${i}::float8 * ${span / COUNTS.leads})`;
    const leadOf = (expr: string) => idOf('01', `1 + ((${expr}) % ${COUNTS.leads})`);
    // Activities land on random leads, so their types do not line up with the leads' own patterns.
    const randomLead = idOf('01', `1 + floor(random() * ${COUNTS.leads})::int`);
    const spread = `now() - make_interval(secs => random() * ${span})`;

    ms.leads = await insertChunked(
      client,
      'leads',
      COUNTS.leads,
      `insert into leads (id, org_id, name, description, url, status, owner_id, tags, custom, created_by, created_at, updated_at)
       select ${idOf('01', 'i')}, ${org},
         ${pick(ADJECTIVES)} || ' ' || ${pick(NOUNS)} || ' ' || ${pick(SUFFIXES)},
         'Seeded lead ' || i || ', found through ' || ${pick(['referral', 'webinar', 'cold outreach', 'trade show', 'website'])},
         'https://lead-' || i || '.example.test',
         ${pick(['new', 'new', 'contacted', 'qualified', 'unqualified', 'client', 'lost'])},
         ${owner},
         case when i % 3 = 0 then '{seeded,vip}'::text[] else '{seeded}'::text[] end,
         case when random() < 0.25 then jsonb_build_object('industry', ${pick(INDUSTRIES)}, 'employees', (random() * 5000)::int) else '{}'::jsonb end,
         ${owner}, ${leadAt('i')}, ${leadAt('i')}
       from generate_series($1::int, $2::int) as i`,
    );
    ms.contacts = await insertChunked(
      client,
      'contacts',
      COUNTS.contacts,
      `insert into contacts (id, org_id, lead_id, name, title, emails, phones, created_by, created_at, updated_at)
       select ${idOf('02', 'i')}, ${org}, ${leadOf('i - 1')}, first || ' ' || last,
         ${pick(['CEO', 'CTO', 'Buyer', 'Office Manager', 'Head of Sales', 'Founder'])},
         jsonb_build_array(jsonb_build_object('email', lower(first) || '.' || lower(last) || i || '@example.test', 'type', 'office')),
         jsonb_build_array(jsonb_build_object('phone', '+1555' || lpad(i::text, 7, '0'), 'type', 'mobile')),
         ${owner}, at, at
       from (select i, ${pick(FIRST_NAMES)} as first, ${pick(LAST_NAMES)} as last, ${spread} as at
             from generate_series($1::int, $2::int) as i) s`,
    );
    ms.opportunities = await insertChunked(
      client,
      'opportunities',
      COUNTS.opportunities,
      `insert into opportunities (id, org_id, lead_id, note, value, currency, confidence, status, pipeline_stage, owner_id, created_by, created_at, updated_at)
       select ${idOf('03', 'i')}, ${org}, ${leadOf('i * 3')},
         case when i % 2 = 0 then ${pick(['Renewal', 'Upsell', 'Pilot', 'Expansion', 'New contract'])} || ' ' || ${pick(NOUNS)} else null end,
         round((random() * 100000)::numeric, 2), ${pick(['USD', 'USD', 'EUR', 'GBP'])}, (random() * 100)::int,
         ${pick(['active', 'active', 'active', 'won', 'lost'])}, ${pick(['lead', 'proposal', 'negotiation', 'closing'])},
         ${owner}, ${owner}, ${spread}, now()
       from generate_series($1::int, $2::int) as i`,
    );
    ms.activities = await insertChunked(
      client,
      'activities',
      COUNTS.activities,
      `insert into activities (id, org_id, lead_id, type, user_id, occurred_at, fields, created_by, created_at, updated_at)
       select ${idOf('04', 'i')}, ${org}, ${randomLead}, type, ${owner}, at,
         case type
           when 'note' then jsonb_build_object('note', 'Note ' || i)
           when 'call' then jsonb_build_object('direction', ${pick(['inbound', 'outbound'])}, 'status', 'completed',
             'duration_seconds', (random() * 900)::int,
             'outcome', ${pick(['connected', 'no_answer', 'voicemail', 'busy', 'failed'])},
             'recording_url', null, 'phone', '+1555' || lpad(i::text, 7, '0'), 'note', 'Call ' || i)
           when 'email' then jsonb_build_object('direction', ${pick(['inbound', 'outbound'])}, 'subject', 'Re: proposal ' || i,
             'body_text', 'Hello, following up on our proposal.', 'from', 'rep@example.test',
             'to', jsonb_build_array('buyer' || i || '@example.test'), 'opened_at', null)
           else jsonb_build_object('title', 'Meeting ' || i, 'starts_at', to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
             'ends_at', null, 'location', null, 'attendees', '[]'::jsonb, 'note', '')
         end,
         ${owner}, at, at
       from (select i, (array['note','call','email','meeting'])[1 + (i % 4)] as type, ${spread} as at
             from generate_series($1::int, $2::int) as i) s`,
    );
    ms.tasks = await insertChunked(
      client,
      'tasks',
      COUNTS.tasks,
      `insert into tasks (id, org_id, lead_id, assigned_to, text, due_at, is_complete, completed_at, created_by, created_at, updated_at)
       select ${idOf('05', 'i')}, ${org}, ${leadOf('i * 5')}, ${owner}, 'Follow up ' || i,
         now() + make_interval(secs => (random() - 0.5) * 60 * 24 * 3600),
         i % 3 = 0, case when i % 3 = 0 then now() else null end, ${owner}, ${spread}, now()
       from generate_series($1::int, $2::int) as i`,
    );
    const vacuumStarted = performance.now();
    // The steady state, as bench/seed.ts does: vacuumed (visibility map) and analyzed. The whole
    // database, not a list: the tables triggers fill beside the seeded ones (words tables, smart view
    // facts) need their visibility map too, or their index ranges read the heap (a list that missed
    // the newer ones made a smart view 1.3 s instead of 0.1 s on a fresh seed).
    await client.query('vacuum analyze');
    ms.vacuumAnalyze = performance.now() - vacuumStarted;
    const rows: Record<string, number> = {};
    for (const table of Object.keys(COUNTS)) {
      const result = await client.query(`select count(*)::int as n from ${table}`);
      rows[table] = Number(result.rows[0]?.n ?? 0);
    }
    return { ms, rows };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Statement capture: every query the app sends while `capturing` is set.

interface Captured {
  text: string;
  values: unknown[];
}
let capturing: Captured[] | null = null;
type QueryFn = (this: pg.Client, ...args: unknown[]) => unknown;
const originalQuery = pg.Client.prototype.query as unknown as QueryFn;
const capturingQuery: QueryFn = function (this: pg.Client, ...args: unknown[]) {
  const [first, second] = args;
  if (capturing) {
    if (typeof first === 'string')
      capturing.push({ text: first, values: Array.isArray(second) ? second : [] });
    else if (typeof first === 'object' && first !== null && 'text' in first) {
      const q = first as { text: string; values?: unknown[] };
      capturing.push({ text: q.text, values: q.values ?? (Array.isArray(second) ? second : []) });
    }
  }
  return originalQuery.apply(this, args);
};
(pg.Client.prototype as unknown as { query: QueryFn }).query = capturingQuery;

// ---------------------------------------------------------------------------------------------
// Measurement

interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

function statsOf(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    n: sorted.length,
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    mean: round(sorted.reduce((s, x) => s + x, 0) / sorted.length),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

interface Case {
  key: string;
  label: string;
  path: string;
  target?: number;
}

interface CaseResult extends Case {
  stats?: Stats;
  total?: number;
  error?: string;
  statements: Captured[];
}

type App = ReturnType<typeof createApp>;

async function timeRequest(
  app: App,
  path: string,
  token: string,
): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now();
  const res = await app.request(path, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.text();
  return { ms: performance.now() - started, status: res.status, body };
}

async function measureCase(app: App, token: string, c: Case): Promise<CaseResult> {
  // One captured request first: it checks the answer and records the statements to explain.
  capturing = [];
  const first = await timeRequest(app, c.path, token);
  const statements = capturing;
  capturing = null;
  if (first.status !== 200) {
    return { ...c, error: `${first.status}: ${first.body.slice(0, 300)}`, statements };
  }
  const total = z.object({ total: z.number().optional() }).loose().parse(JSON.parse(first.body)).total;
  for (let i = 0; i < env.SCALE_WARMUP; i++) await timeRequest(app, c.path, token);
  const samples: number[] = [];
  for (let i = 0; i < env.SCALE_REQUESTS; i++) {
    const r = await timeRequest(app, c.path, token);
    if (r.status !== 200) return { ...c, error: `request ${i} answered ${r.status}`, statements };
    samples.push(r.ms);
  }
  const stats = statsOf(samples);
  log(`${c.label}: p50 ${stats.p50} ms, p99 ${stats.p99} ms (total ${total ?? '-'})`);
  return { ...c, stats, total, statements };
}

/** Times one statement alone, as the app runs it: in a transaction under crm_app with the tenant set. */
async function timeStatement(
  url: string,
  orgId: string,
  statement: string,
  values: unknown[],
): Promise<Stats> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const samples: number[] = [];
    const runs = Math.max(20, Math.round(env.SCALE_REQUESTS / 4));
    for (let i = 0; i < runs + 5; i++) {
      await client.query('begin');
      await client.query(`select set_config('app.org_id', $1, true), set_config('role', 'crm_app', true)`, [
        orgId,
      ]);
      const started = performance.now();
      await client.query(statement, values);
      const ms = performance.now() - started;
      await client.query('rollback');
      if (i >= 5) samples.push(ms);
    }
    return statsOf(samples);
  } finally {
    await client.end();
  }
}

/** EXPLAIN (ANALYZE, BUFFERS) of the captured statements that read the sales tables. */
async function explainStatements(url: string, orgId: string, statements: Captured[]): Promise<string[]> {
  const interesting = statements.filter(
    (s) =>
      /^\s*(select|with)/i.test(s.text) &&
      /"?(leads|contacts|opportunities|activities|tasks)"?/i.test(s.text) &&
      !/set_config/i.test(s.text),
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const out: string[] = [];
  try {
    for (const s of interesting) {
      await client.query('begin');
      await client.query(`select set_config('app.org_id', $1, true), set_config('role', 'crm_app', true)`, [
        orgId,
      ]);
      const result = await client.query(`explain (analyze, buffers) ${s.text}`, s.values);
      await client.query('rollback');
      const plan = result.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      out.push(`-- params: ${JSON.stringify(s.values)}\n${s.text}\n${plan}`);
    }
  } finally {
    await client.end();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Smart view: status in [...], a custom field and "has a call whose outcome is connected".

const SMART_VIEW_BODY = {
  name: 'Scale: open software leads with a connected call',
  scope: 'leads',
  query: {
    logic: 'and',
    filters: [
      {
        id: 'status',
        field: 'status',
        field_type: 'lead',
        op: 'in',
        value: ['new', 'contacted', 'qualified'],
      },
      { id: 'industry', field: 'industry', field_type: 'custom_field', op: 'eq', value: 'software' },
      {
        id: 'call',
        field: 'activity',
        field_type: 'activity',
        op: 'eq',
        activity_type: 'call',
        activity_field: 'outcome',
        activity_field_value: 'connected',
      },
    ],
  },
  visibility: 'shared',
};

async function createSmartView(app: App, token: string): Promise<{ id?: string; error?: string }> {
  const res = await app.request('/api/v1/smart-views', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(SMART_VIEW_BODY),
  });
  const text = await res.text();
  if (res.status !== 201)
    return { error: `POST /api/v1/smart-views answered ${res.status}: ${text.slice(0, 300)}` };
  const parsed = z
    .object({ smart_view: z.object({ _id: z.string() }).loose() })
    .loose()
    .safeParse(JSON.parse(text));
  return parsed.success
    ? { id: parsed.data.smart_view._id }
    : { error: `unexpected body: ${text.slice(0, 300)}` };
}

// ---------------------------------------------------------------------------------------------

async function findOrg(services: Services): Promise<{ orgId: string; ownerId: string } | undefined> {
  const result = await services.db.system.execute(
    sql`select o.id as org_id, u.id as owner_id from organizations o join users u on u.org_id = o.id and u.role = 'owner' where o.name = ${ORG_NAME} limit 1`,
  );
  const row = z.array(z.object({ org_id: z.string(), owner_id: z.string() })).parse(rowsOf(result))[0];
  return row ? { orgId: row.org_id, ownerId: row.owner_id } : undefined;
}

function fmt(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const header = { date: startedAt.toISOString(), commit: gitCommit(), machine: machine() };
  const scratch = env.SCALE_REUSE_URL ? undefined : await createScratch(env.BENCH_DATABASE_URL);
  const url = env.SCALE_REUSE_URL ?? scratch?.url ?? '';
  let services: Services | undefined;
  try {
    const config = loadConfig({
      LOG_LEVEL: 'warn',
      JWT_SECRET: randomBytes(32).toString('hex'),
      DATABASE_URL: url,
    });
    services = await createServices(config, { withoutRateLimits: true, logger: createLogger('warn') });
    let seeded: SeedReport | undefined;
    let org = await findOrg(services);
    if (!org) {
      const created = await services.db.transaction((tx) =>
        createOrganizationWithOwner(tx, {
          name: ORG_NAME,
          plan: 'enterprise',
          owner: {
            name: 'Scale Owner',
            email: `scale-${Date.now()}@example.test`,
            password: 'bench-password-1',
          },
        }),
      );
      org = { orgId: created.organization.id, ownerId: created.owner.id };
      const seedStarted = performance.now();
      seeded = await seed(url, org.orgId, org.ownerId);
      log(`seeded in ${fmt(performance.now() - seedStarted)}: ${JSON.stringify(seeded.rows)}`);
    }
    const token = generatePat();
    await services.db.system.insert(apiKeys).values({
      id: newId(),
      orgId: org.orgId,
      userId: org.ownerId,
      label: `scale ${Date.now()}`,
      tokenHash: hashToken(token),
      tokenPrefix: tokenPrefix(token),
      scopes: [...DEFAULT_SCOPES],
    });
    const app = createApp(services);

    const view = await createSmartView(app, token);
    const cases: Case[] = [
      {
        key: 'list',
        label: '(a) GET /api/v1/leads?limit=25',
        path: '/api/v1/leads?limit=25',
        target: TARGETS.list,
      },
      {
        key: 'search',
        label: `(b) GET /api/v1/leads?search=${SEARCH_WORD}`,
        path: `/api/v1/leads?search=${SEARCH_WORD}&limit=25`,
        target: TARGETS.search,
      },
      ...(view.id
        ? [
            {
              key: 'smartView',
              label: '(c) GET /api/v1/smart-views/:id/results (3 filters)',
              path: `/api/v1/smart-views/${view.id}/results?limit=25`,
              target: TARGETS.smartView,
            },
          ]
        : []),
      {
        key: 'filteredTotal',
        label: '(d) GET /api/v1/leads?status=qualified (total by count)',
        path: '/api/v1/leads?status=qualified&limit=25',
      },
      {
        key: 'globalSearch',
        label: `(e) GET /api/v1/search?q=${SEARCH_WORD} (search_crm, 3 types)`,
        path: `/api/v1/search?q=${SEARCH_WORD}`,
        target: TARGETS.search,
      },
    ];
    const wanted = env.SCALE_CASES?.split(',').map((k) => k.trim());
    const results: CaseResult[] = [];
    for (const c of cases) {
      if (!wanted || wanted.includes(c.key)) results.push(await measureCase(app, token, c));
    }

    // (d) the count statements alone, as list_leads sends them (captured above).
    const countTimings: { label: string; stats: Stats }[] = [];
    for (const r of results) {
      const count = r.statements.find((s) => /count\(/i.test(s.text) && !/set_config/i.test(s.text));
      if (count && (r.key === 'filteredTotal' || r.key === 'search' || r.key === 'smartView')) {
        const stats = await timeStatement(url, org.orgId, count.text, count.values);
        countTimings.push({ label: `count of ${r.label}`, stats });
        log(`count of ${r.label}: p50 ${stats.p50} ms, p99 ${stats.p99} ms`);
      }
    }

    const explains: string[] = [];
    for (const r of results) {
      explains.push(`==== ${r.label}`);
      explains.push(...(await explainStatements(url, org.orgId, r.statements)));
    }
    const resultsDir = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
    mkdirSync(resultsDir, { recursive: true });
    const stamp = header.date.replace(/[:.]/g, '-');
    const explainFile = join(resultsDir, `scale-${stamp}-explain.txt`);
    writeFileSync(explainFile, `${explains.join('\n\n')}\n`);
    writeFileSync(
      join(resultsDir, `scale-${stamp}.json`),
      `${JSON.stringify({ ...header, counts: COUNTS, seeded, results: results.map(({ statements, ...r }) => r), countTimings }, null, 2)}\n`,
    );

    const lines = [
      `## ${header.date} — Scale (issue 5) (\`npm run bench:scale\`)`,
      '',
      `- Commit: ${header.commit}`,
      `- Machine: ${header.machine}`,
      `- Database: PostgreSQL scratch database on ${new URL(env.BENCH_DATABASE_URL).host} (server settings untouched: shared_buffers etc. as installed)${env.SCALE_REUSE_URL ? '; reused an already seeded database' : ''}.`,
      seeded
        ? `- Seed (set-based INSERT ... SELECT generate_series, ${CHUNK.toLocaleString('en-US')} rows per statement, then VACUUM ANALYZE): ${Object.entries(
            seeded.ms,
          )
            .map(([k, v]) => `${k} ${fmt(v)}`)
            .join(', ')}; total ${fmt(Object.values(seeded.ms).reduce((s, x) => s + x, 0))}.`
        : '- Seed: reused.',
      seeded
        ? `- Rows: ${Object.entries(seeded.rows)
            .map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`)
            .join(', ')} (one organization).`
        : `- Rows: as seeded before (${JSON.stringify(COUNTS)}).`,
      `- Method: in-process \`createApp(services).request()\`, sequential, ${env.SCALE_WARMUP} warm-ups then N=${env.SCALE_REQUESTS} per case; a PAT with the default scopes; request limits off. Times include routing, auth, the tenant transaction and JSON.`,
      ...(view.error ? [`- (c) smart view not measured: ${view.error}`] : []),
      '',
      '| case | p50 ms | p99 ms | mean ms | total | target (p50) | result |',
      '|---|---:|---:|---:|---:|---|---|',
      ...results.map((r) =>
        r.stats
          ? `| ${r.label} | ${r.stats.p50} | ${r.stats.p99} | ${r.stats.mean} | ${r.total ?? '-'} | ${r.target ? `< ${r.target} ms` : '-'} | ${r.target ? (r.stats.p50 < r.target ? 'met' : '**not met**') : '-'} |`
          : `| ${r.label} | - | - | - | - | ${r.target ? `< ${r.target} ms` : '-'} | error: ${r.error ?? ''} |`,
      ),
      ...countTimings.map(
        (c) =>
          `| ${c.label}: the count statement alone | ${c.stats.p50} | ${c.stats.p99} | ${c.stats.mean} | - | - | - |`,
      ),
      '',
      `- EXPLAIN (ANALYZE, BUFFERS) of every statement above: bench/results/${`scale-${stamp}-explain.txt`}.`,
      '',
    ];
    const section = lines.join('\n');
    if (env.SCALE_APPEND === '1') appendFileSync(join(resultsDir, '..', 'results.md'), `\n${section}`);
    process.stdout.write(`${section}\n`);
    if (env.SCALE_KEEP_DATABASE === '1' && scratch) log(`kept the database: SCALE_REUSE_URL=${scratch.url}`);
  } finally {
    await services?.close();
    if (scratch && env.SCALE_KEEP_DATABASE !== '1') await scratch.drop();
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
