// `npm run bench:email`: scheduled email at volume (issue 12 item 9). 10,000 emails are scheduled for
// the same minute and sent through one connected account to a real SMTP server; the run measures how
// long after that minute the last one was accepted, first with one `crm worker` process and then with
// two, and checks that every email was sent exactly once.
//
// Each run, on PostgreSQL + Redis (two worker processes need a shared database and queue):
//   1. a fresh database and Redis database; one organization, its owner, a connected account pointing
//      at an SMTP peer on 127.0.0.1 (smtp-server, with login), 100 leads with one contact each;
//   2. EMAIL_COUNT scheduled_emails rows due at the next whole minute (at least 20 s ahead), written
//      with the same seam schedule_email uses (insertScheduledEmail) and woken the same way
//      (one delayed 'email.send' job each, added in batches);
//   3. W worker processes (`crm worker`, WORKER concurrency each) start and wait for the minute;
//   4. the run ends when every row is `sent` (or `failed`) or after a time limit.
// Reported: time from the scheduled minute to the last acceptance (and to 50% / 99%), emails per
// second, messages the peer accepted, distinct Message-IDs among them, rows sent, rows failed, and
// rows whose attempts exceeded 1. "None twice" holds when accepted == distinct == sent == count.
// Results are appended to bench/results.md and written to bench/results/email-<time>.json.
//
// Environment: EMAIL_COUNT (default 10000), BENCH_WORKERS (comma list of worker counts, default
// "1,2"), WORKER_CONCURRENCY (jobs at once per worker, default 8), BENCH_DATABASE_URL, BENCH_REDIS_URL
// (default redis://127.0.0.1:6379/7: the benchmark empties that Redis database), BENCH_APPEND=0
// (print without appending to bench/results.md), BENCH_TIMEOUT_S (default 900).

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { SMTPServer } from 'smtp-server';
import { z } from 'zod';
import { loadConfig } from '../core/config.ts';
import { rowsOf } from '../core/db/sql.ts';
import { newId } from '../core/ids.ts';
import { createLogger } from '../core/logger.ts';
import { createOrganizationWithOwner } from '../core/organizations.ts';
import { createServices, type Services } from '../core/services.ts';
import { createDatabase } from '../test/support/postgres-admin.ts';
import { connectedAccounts } from '../tools/connected-accounts/tables.ts';
import { contacts } from '../tools/contacts/tables.ts';
import { emailJobId, insertScheduledEmail } from '../tools/email/schedule.ts';
import { leads } from '../tools/leads/tables.ts';
import { gitCommit, machine } from './environment.ts';

const env = z
  .object({
    EMAIL_COUNT: z.coerce.number().int().positive().default(10_000),
    BENCH_WORKERS: z.string().default('1,2'),
    WORKER_CONCURRENCY: z.coerce.number().int().positive().default(8),
    BENCH_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
    BENCH_REDIS_URL: z.string().default('redis://127.0.0.1:6379/7'),
    BENCH_APPEND: z.enum(['0', '1']).default('1'),
    BENCH_TIMEOUT_S: z.coerce.number().positive().default(900),
  })
  .parse(process.env);

const LEADS = 100;
const SMTP_USER = 'bench-sender';
const SMTP_PASSWORD = 'bench-smtp-password';
const benchDir = fileURLToPath(new URL('.', import.meta.url));
const root = join(benchDir, '..');

function log(message: string): void {
  process.stderr.write(`[bench:email] ${message}\n`);
}

/** A counting SMTP peer: it reads each message's headers for its Message-ID and keeps no body. */
interface CountingPeer {
  port: number;
  accepted: number;
  messageIds: Map<string, number>;
  /** When each message was accepted (ms since the epoch), in order. */
  acceptedAt: number[];
  close(): Promise<void>;
}

async function startCountingPeer(): Promise<CountingPeer> {
  const peer: CountingPeer = {
    port: 0,
    accepted: 0,
    messageIds: new Map(),
    acceptedAt: [],
    close: async () => {},
  };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    maxClients: 1000,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD)
        return callback(null, { user: SMTP_USER });
      return callback(new Error('Invalid username or password'));
    },
    onData(stream, _session, callback) {
      let head = '';
      stream.on('data', (chunk: Buffer) => {
        if (head.length < 16_384) head += chunk.toString('latin1');
      });
      stream.on('end', () => {
        const match = /^message-id:\s*(<[^>\r\n]+>)/im.exec(head);
        const id = match?.[1] ?? `<none-${peer.accepted}>`;
        peer.messageIds.set(id, (peer.messageIds.get(id) ?? 0) + 1);
        peer.accepted += 1;
        peer.acceptedAt.push(Date.now());
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('SMTP peer not on TCP');
  peer.port = address.port;
  peer.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return peer;
}

interface Seeded {
  orgId: string;
  dueAt: Date;
}

/** The organization, its account and leads, and EMAIL_COUNT rows due at the next whole minute. */
async function seed(services: Services, smtpPort: number): Promise<Seeded> {
  const db = services.db;
  const { organization, owner } = await db.transaction((tx) =>
    createOrganizationWithOwner(tx, {
      name: 'Email Benchmark Org',
      plan: 'pro',
      owner: {
        name: 'Bench Sender',
        email: `bench-email-${Date.now()}@example.test`,
        password: 'bench-password-1',
      },
    }),
  );
  const orgId = organization.id;
  const accountId = newId();
  const token = randomBytes(32).toString('base64url');
  await db.system.insert(connectedAccounts).values({
    id: accountId,
    orgId,
    userId: owner.id,
    email: 'sender@bench.example.test',
    displayName: 'Bench Sender',
    smtpHost: '127.0.0.1',
    smtpPort,
    smtpSecure: false,
    smtpUsername: SMTP_USER,
    smtpPassword: services.secrets.encryptSecret(
      SMTP_PASSWORD,
      `connected_accounts.smtp_password:${accountId}`,
    ),
    status: 'verified',
    verifiedAt: new Date(),
    inboundTokenHash: randomBytes(32).toString('hex'),
    inboundToken: services.secrets.encryptSecret(token, `connected_accounts.inbound_token:${accountId}`),
    inboundSigningKey: services.secrets.encryptSecret(
      randomBytes(32).toString('hex'),
      `connected_accounts.inbound_signing_key:${accountId}`,
    ),
  });
  const leadRows = Array.from({ length: LEADS }, (_, i) => ({
    id: newId(),
    orgId,
    name: `Lead ${i}`,
    status: 'new',
    ownerId: owner.id,
    createdBy: owner.id,
  }));
  await db.system.insert(leads).values(leadRows);
  const contactRows = leadRows.map((lead, i) => ({
    id: newId(),
    orgId,
    leadId: lead.id,
    name: `Contact ${i}`,
    emails: [{ email: `contact-${i}@lead.example.test`, type: 'work' }],
    createdBy: owner.id,
  }));
  await db.system.insert(contacts).values(contactRows);

  // The next whole minute at least 20 s ahead: time to enqueue and to start the workers.
  const minute = 60_000;
  const dueAt = new Date(Math.ceil((Date.now() + 20_000) / minute) * minute);
  const ids: string[] = [];
  const BATCH = 500;
  for (let offset = 0; offset < env.EMAIL_COUNT; offset += BATCH) {
    const now = new Date();
    const batch = await db.withTenant(orgId, async (tx) => {
      const made: string[] = [];
      for (let i = offset; i < Math.min(offset + BATCH, env.EMAIL_COUNT); i++) {
        const k = i % LEADS;
        const row = await insertScheduledEmail(
          tx,
          orgId,
          {
            userId: owner.id,
            connectedAccountId: accountId,
            leadId: leadRows[k]?.id ?? '',
            contactId: contactRows[k]?.id ?? null,
            to: `contact-${k}@lead.example.test`,
            subject: `Benchmark email ${i}`,
            bodyHtml: `<p>Hello, this is benchmark email number ${i}.</p>`,
            bodyText: `Hello, this is benchmark email number ${i}.`,
            scheduledAt: dueAt,
          },
          now,
        );
        made.push(row.id);
      }
      return made;
    });
    ids.push(...batch);
  }
  // The same wake-up schedule_email gives each row, in batches (one Redis round trip each).
  for (let offset = 0; offset < ids.length; offset += BATCH) {
    const delayMs = Math.max(0, dueAt.getTime() - Date.now());
    await services.jobs.enqueueMany(
      'email.send',
      ids
        .slice(offset, offset + BATCH)
        .map((id) => ({ payload: { id }, options: { delayMs, jobId: emailJobId(id, 0) } })),
    );
  }
  return { orgId, dueAt };
}

function startWorker(index: number, databaseUrl: string, secretsKey: string): ChildProcess {
  const child = spawn(process.execPath, ['cli/bin.js', 'worker'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: env.BENCH_REDIS_URL,
      SECRETS_KEY: secretsKey,
      CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS: 'true',
      WORKER_CONCURRENCY: String(env.WORKER_CONCURRENCY),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString().trim();
    if (text) log(`worker ${index}: ${text.slice(0, 500)}`);
  });
  return child;
}

interface StatusCounts {
  sent: number;
  failed: number;
  retried: number;
  lastSentAt: Date | null;
}

async function statusCounts(services: Services, orgId: string): Promise<StatusCounts> {
  const rows = rowsOf(
    await services.db.system.execute(sql`
      select count(*) filter (where status = 'sent') as sent,
             count(*) filter (where status = 'failed') as failed,
             count(*) filter (where attempts > 1) as retried,
             max(sent_at) as last_sent_at
      from scheduled_emails where org_id = ${orgId}`),
  );
  const row = z
    .object({
      sent: z.coerce.number(),
      failed: z.coerce.number(),
      retried: z.coerce.number(),
      last_sent_at: z.union([z.string(), z.date(), z.null()]),
    })
    .parse(rows[0]);
  return {
    sent: row.sent,
    failed: row.failed,
    retried: row.retried,
    lastSentAt: row.last_sent_at === null ? null : new Date(row.last_sent_at),
  };
}

interface RunResult {
  workers: number;
  concurrency: number;
  emails: number;
  accepted: number;
  distinctMessageIds: number;
  sent: number;
  failed: number;
  retried: number;
  /** Seconds from the scheduled minute to the acceptance of 50%, 99% and all emails. */
  p50Seconds: number;
  p99Seconds: number;
  allSeconds: number;
  perSecond: number;
}

async function runOnce(workers: number): Promise<RunResult> {
  const peer = await startCountingPeer();
  const redis = new Redis(env.BENCH_REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
  const database = await createDatabase(env.BENCH_DATABASE_URL, 'crm_bench_email');
  const secretsKey = randomBytes(32).toString('base64');
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: env.BENCH_REDIS_URL,
    SECRETS_KEY: secretsKey,
    LOG_LEVEL: 'warn',
  });
  const services = await createServices(config, { logger: createLogger('warn') });
  const children: ChildProcess[] = [];
  try {
    log(`${workers} worker(s): seeding ${env.EMAIL_COUNT} emails`);
    const { orgId, dueAt } = await seed(services, peer.port);
    log(`due at ${dueAt.toISOString()}; starting ${workers} worker(s)`);
    for (let i = 0; i < workers; i++) children.push(startWorker(i + 1, database.url, secretsKey));
    const deadline = dueAt.getTime() + env.BENCH_TIMEOUT_S * 1000;
    let counts = await statusCounts(services, orgId);
    while (counts.sent + counts.failed < env.EMAIL_COUNT && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      counts = await statusCounts(services, orgId);
    }
    // A second's grace so a duplicate in flight would still be counted.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    counts = await statusCounts(services, orgId);
    const times = [...peer.acceptedAt].sort((a, b) => a - b);
    const at = (q: number) => {
      const t = times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)];
      return t === undefined ? Number.NaN : (t - dueAt.getTime()) / 1000;
    };
    const allSeconds = at(1);
    return {
      workers,
      concurrency: env.WORKER_CONCURRENCY,
      emails: env.EMAIL_COUNT,
      accepted: peer.accepted,
      distinctMessageIds: peer.messageIds.size,
      sent: counts.sent,
      failed: counts.failed,
      retried: counts.retried,
      p50Seconds: at(0.5),
      p99Seconds: at(0.99),
      allSeconds,
      perSecond: Math.round(peer.accepted / Math.max(allSeconds, 0.001)),
    };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) =>
            child.exitCode !== null ? resolve() : child.once('exit', () => resolve()),
          ),
      ),
    );
    await services.close();
    await peer.close();
    await database.drop();
  }
}

function table(results: RunResult[]): string {
  const lines = [
    '| workers × concurrency | emails | accepted by the peer | distinct Message-IDs | rows sent / failed / retried | last sent after the minute | 50% / 99% after | emails/s |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.workers} × ${r.concurrency} | ${r.emails} | ${r.accepted} | ${r.distinctMessageIds} | ${r.sent} / ${r.failed} / ${r.retried} | ${r.allSeconds.toFixed(1)} s | ${r.p50Seconds.toFixed(1)} / ${r.p99Seconds.toFixed(1)} s | ${r.perSecond} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const counts = env.BENCH_WORKERS.split(',').map((s) => Number(s.trim()));
  const results: RunResult[] = [];
  for (const workers of counts) {
    const result = await runOnce(workers);
    log(JSON.stringify(result));
    results.push(result);
  }
  const ok = results.every(
    (r) => r.accepted === r.emails && r.distinctMessageIds === r.emails && r.sent === r.emails,
  );
  const when = new Date().toISOString();
  const markdown = [
    `### Scheduled email, ${env.EMAIL_COUNT} due in the same minute (${when.slice(0, 10)}, commit ${gitCommit()})`,
    '',
    `${machine()}. PostgreSQL + Redis (BullMQ); \`crm worker\` processes; one connected account to an SMTP server on 127.0.0.1 (smtp-server, with login, no TLS); every email a new SMTP session. ${ok ? 'Every email accepted exactly once.' : '**Not every email was accepted exactly once: see the counts.**'}`,
    '',
    table(results),
    '',
  ].join('\n');
  process.stdout.write(`${markdown}\n`);
  mkdirSync(join(benchDir, 'results'), { recursive: true });
  writeFileSync(
    join(benchDir, 'results', `email-${when.replaceAll(':', '-')}.json`),
    JSON.stringify(results, null, 2),
  );
  if (env.BENCH_APPEND === '1') appendFileSync(join(benchDir, 'results.md'), `\n${markdown}`);
  if (!ok) process.exitCode = 1;
}

await main();
