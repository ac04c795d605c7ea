// `npm run bench:email`: 10,000 scheduled emails due in the same minute, sent by one `crm worker`
// process and then by two (issue 12 item 9), on PostgreSQL + Redis, to a real SMTP server with
// login. Each run: a fresh database and queue prefix; one organization, lead and connected account;
// EMAIL_BENCH_COUNT rows written as schedule_email writes them, each with its delayed 'email.send'
// job (wakeScheduledEmail), all due at the same instant T; the workers start before T. Measured from
// T to the last row `sent`: the time, emails per second, and at the SMTP server the messages per
// Message-ID (none may arrive twice). Every send is the real one: claim, SMTP session with AUTH,
// outgoing activity, email.sent, in one transaction per email.
//
// The SMTP server runs in this process and only counts (it reads each message's Message-ID header,
// no parsing); the workers are child processes, so they do not share its event loop.
//
// Environment: EMAIL_BENCH_COUNT (default 10000), EMAIL_BENCH_WORKERS (comma list, default "1,2"),
// EMAIL_BENCH_TIMEOUT_S (default 900), BENCH_DATABASE_URL, BENCH_REDIS_URL, BENCH_APPEND=0 (print
// without appending to bench/results.md).

import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, count, eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { SMTPServer } from 'smtp-server';
import { z } from 'zod';
import { createServices } from '../app/services.ts';
import { loadConfig } from '../core/config.ts';
import { newId } from '../core/ids.ts';
import { createLogger } from '../core/logger.ts';
import { createOrganizationWithOwner } from '../core/organizations.ts';
import type { Services } from '../core/services.ts';
import { createScratchDatabase } from '../test/fixtures/context.ts';
import { smtpPasswordContext } from '../tools/connected-accounts/store.ts';
import { connectedAccounts } from '../tools/connected-accounts/tables.ts';
import { emailJobId } from '../tools/email/schedule.ts';
import { scheduledEmails } from '../tools/email/tables.ts';
import { leads } from '../tools/leads/tables.ts';
import { gitCommit, machine } from './environment.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'cli', 'bin.js');
const LOGIN = { username: 'bench', password: randomBytes(12).toString('hex') };

/** An SMTP server with login that counts accepted messages by Message-ID. */
async function startCountingPeer(): Promise<{
  port: number;
  byMessageId: Map<string, number>;
  total: () => number;
  close: () => Promise<void>;
}> {
  const byMessageId = new Map<string, number>();
  let total = 0;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    size: 0,
    onAuth(auth, _session, callback) {
      if (auth.username === LOGIN.username && auth.password === LOGIN.password)
        return callback(null, { user: auth.username });
      return callback(new Error('Invalid username or password'));
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const head = Buffer.concat(chunks).toString('latin1', 0, 8192);
        const id = /^Message-ID:\s*(\S+)/im.exec(head)?.[1] ?? `(none ${total})`;
        byMessageId.set(id, (byMessageId.get(id) ?? 0) + 1);
        total += 1;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('peer not on TCP');
  return {
    port: address.port,
    byMessageId,
    total: () => total,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

interface RunResult {
  workers: number;
  emails: number;
  seedSeconds: number;
  /** From the due instant to the last row sent. */
  seconds: number;
  perSecond: number;
  sent: number;
  failed: number;
  received: number;
  distinct: number;
  duplicates: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function statusCounts(services: Services, orgId: string): Promise<{ sent: number; failed: number }> {
  const rows = await services.db.system
    .select({ status: scheduledEmails.status, n: count() })
    .from(scheduledEmails)
    .where(eq(scheduledEmails.orgId, orgId))
    .groupBy(scheduledEmails.status);
  const of = (s: string) => rows.find((r) => r.status === s)?.n ?? 0;
  return { sent: of('sent'), failed: of('failed') };
}

async function run(
  workerCount: number,
  emails: number,
  env: { databaseUrl: string; redisUrl: string; timeoutS: number },
): Promise<RunResult> {
  const peer = await startCountingPeer();
  const scratch = await createScratchDatabase(env.databaseUrl, { empty: true });
  const prefix = `crm-bench-email-${randomBytes(6).toString('hex')}`;
  const secretsKey = randomBytes(32).toString('base64');
  const jwtSecret = randomBytes(32).toString('hex');
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    JWT_SECRET: jwtSecret,
    SECRETS_KEY: secretsKey,
    DATABASE_URL: scratch.url,
    REDIS_URL: env.redisUrl,
  });
  const services = await createServices(config, { logger: createLogger('warn'), queue: { prefix } });
  const children: ChildProcess[] = [];
  try {
    const seedStart = Date.now();
    const { organization, owner } = await services.db.transaction((tx) =>
      createOrganizationWithOwner(tx, {
        name: 'Email benchmark',
        plan: 'enterprise',
        owner: { name: 'Owner', email: 'owner@bench.invalid', password: randomBytes(16).toString('hex') },
      }),
    );
    const orgId = organization.id;
    const leadId = newId();
    await services.db.system
      .insert(leads)
      .values({ id: leadId, orgId, name: 'Bench lead', ownerId: owner.id });
    const accountId = newId();
    const token = randomBytes(16).toString('hex');
    await services.db.system.insert(connectedAccounts).values({
      id: accountId,
      orgId,
      userId: owner.id,
      email: 'sender@bench.example',
      smtpHost: '127.0.0.1',
      smtpPort: peer.port,
      smtpSecure: false,
      // The counting peer offers no STARTTLS (it runs on 127.0.0.1): the login goes in plain text.
      smtpRequireTls: false,
      smtpUsername: LOGIN.username,
      smtpPassword: services.secrets.encryptSecret(LOGIN.password, smtpPasswordContext(accountId)),
      status: 'verified',
      inboundTokenHash: createHash('sha256').update(token).digest('hex'),
      inboundToken: services.secrets.encryptSecret(token, `connected_accounts.inbound_token:${accountId}`),
      inboundSigningKey: services.secrets.encryptSecret(
        token,
        `connected_accounts.inbound_signing_key:${accountId}`,
      ),
    });
    // Rows and their delayed jobs, as schedule_email writes them; due together, after the workers start.
    const due = new Date(Date.now() + 45_000 + emails * 3);
    const ids: string[] = [];
    for (let start = 0; start < emails; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, emails - start) }, (_, i) => {
        const id = newId();
        ids.push(id);
        return {
          id,
          orgId,
          userId: owner.id,
          connectedAccountId: accountId,
          leadId,
          toAddress: `buyer${start + i}@customer.example`,
          subject: `Benchmark ${start + i}`,
          bodyHtml: '<p>Hello from the benchmark</p>',
          bodyText: 'Hello from the benchmark',
          scheduledAt: due,
          nextAttemptAt: due,
        };
      });
      await services.db.system.insert(scheduledEmails).values(batch);
    }
    for (let i = 0; i < ids.length; i += 200) {
      await Promise.all(
        ids
          .slice(i, i + 200)
          .map((id) =>
            services.jobs.enqueue(
              'email.send',
              { id },
              { delayMs: due.getTime() - Date.now(), jobId: emailJobId(id, 0) },
            ),
          ),
      );
    }
    const seedSeconds = (Date.now() - seedStart) / 1000;
    if (Date.now() > due.getTime() - 10_000)
      throw new Error('seeding took longer than the lead time; raise it');

    for (let i = 0; i < workerCount; i++) {
      const child = spawn(process.execPath, [BIN, 'worker'], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: scratch.url,
          REDIS_URL: env.redisUrl,
          CRM_QUEUE_PREFIX: prefix,
          SECRETS_KEY: secretsKey,
          JWT_SECRET: jwtSecret,
          CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS: 'true',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
    }
    await sleep(Math.max(0, due.getTime() - Date.now()));
    const deadline = Date.now() + env.timeoutS * 1000;
    let counts = await statusCounts(services, orgId);
    while (counts.sent + counts.failed < emails) {
      if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(counts)} of ${emails}`);
      await sleep(250);
      counts = await statusCounts(services, orgId);
    }
    const [last] = await services.db.system
      .select({ at: scheduledEmails.updatedAt })
      .from(scheduledEmails)
      .where(and(eq(scheduledEmails.orgId, orgId)))
      .orderBy(scheduledEmails.updatedAt)
      .limit(1)
      .offset(emails - 1);
    const seconds = ((last?.at.getTime() ?? Date.now()) - due.getTime()) / 1000;
    const duplicates = [...peer.byMessageId.values()].filter((n) => n > 1).length;
    return {
      workers: workerCount,
      emails,
      seedSeconds,
      seconds,
      perSecond: counts.sent / seconds,
      sent: counts.sent,
      failed: counts.failed,
      received: peer.total(),
      distinct: peer.byMessageId.size,
      duplicates,
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
    await scratch.drop();
    await deleteKeys(env.redisUrl, prefix);
    await peer.close();
  }
}

async function main(): Promise<void> {
  const env = z
    .object({
      EMAIL_BENCH_COUNT: z.coerce.number().int().positive().default(10_000),
      EMAIL_BENCH_WORKERS: z.string().default('1,2'),
      EMAIL_BENCH_TIMEOUT_S: z.coerce.number().positive().default(900),
      BENCH_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
      BENCH_REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
      BENCH_APPEND: z.string().default('1'),
    })
    .parse(process.env);
  const workerCounts = env.EMAIL_BENCH_WORKERS.split(',').map((w) => Number(w.trim()));
  const startedAt = new Date();
  const header = { date: startedAt.toISOString(), commit: gitCommit(), machine: machine() };
  const results: RunResult[] = [];
  for (const workers of workerCounts) {
    console.info(`email benchmark: ${env.EMAIL_BENCH_COUNT} emails, ${workers} worker process(es)...`);
    const result = await run(workers, env.EMAIL_BENCH_COUNT, {
      databaseUrl: env.BENCH_DATABASE_URL,
      redisUrl: env.BENCH_REDIS_URL,
      timeoutS: env.EMAIL_BENCH_TIMEOUT_S,
    });
    console.info(JSON.stringify(result));
    results.push(result);
  }
  const lines = [
    '',
    `## ${header.date} — scheduled email, ${env.EMAIL_BENCH_COUNT} due in the same minute (\`npm run bench:email\`)`,
    '',
    `- Commit: ${header.commit}`,
    `- Machine: ${header.machine}`,
    `- Setup: PostgreSQL + Redis (BullMQ), one organization, lead and connected account; each email a scheduled_emails row with its delayed 'email.send' job, all due at one instant; \`crm worker\` processes (concurrency 8 each) started before it; a local SMTP server with AUTH counting messages by Message-ID. Each send: claim, SMTP session (connect, EHLO, AUTH, one message), outgoing activity, email.sent, one transaction.`,
    '',
    '| workers | emails | all sent after (s) | emails/s | sent | failed | messages at the server | distinct Message-IDs | sent twice |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.workers} | ${r.emails} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(0)} | ${r.sent} | ${r.failed} | ${r.received} | ${r.distinct} | ${r.duplicates} |`,
    ),
    '',
  ];
  const text = lines.join('\n');
  console.info(text);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench', 'results', `${startedAt.toISOString().replace(/[:.]/g, '-')}-email.json`),
    JSON.stringify({ ...header, results }, null, 2),
  );
  if (env.BENCH_APPEND !== '0') appendFileSync(join(ROOT, 'bench', 'results.md'), text);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
