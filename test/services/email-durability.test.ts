// Locks in, on PostgreSQL and Redis with real `crm worker` processes, that a scheduled email is sent exactly once when its worker is killed (SIGKILL) between its claim and its send and the queue's Redis state is lost: a new worker on a fresh queue prefix finds the claim once its lease expired, through its sweeper, and sends it (the peer receives one message; the row is sent after 2 attempts).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { scheduledEmails } from '../../tools/email/tables.ts';
import {
  createLead,
  fileTest,
  insertConnectedAccount,
  scheduleBody,
  scheduledEmailRow,
  scheduleEmail,
  type TestContext,
} from '../fixtures/index.ts';
import { BIN, ROOT } from '../support/cli.ts';
import { startSmtpPeer } from '../support/smtp-peer.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const LOGIN = { username: 'durable', password: 'durable-secret' };
const RUN = `email-durability-${Date.now().toString(36)}`;
/** One secrets key and JWT secret for the test and its workers: the workers decrypt the SMTP password. */
const SECRETS_KEY = randomBytes(32).toString('base64');
const JWT_SECRET = randomBytes(32).toString('hex');

/** While set, the next MAIL FROM waits here (the first worker is killed while it waits). */
let hold: { reached: () => void; release: Promise<void> } | undefined;

// The SMTP peer the account sends through, and `crm worker` processes on the file's database, killed
// after the file's last test if still running.
const test = fileTest({ env: { SECRETS_KEY, JWT_SECRET }, options: { withoutRateLimits: true } })
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the peer has none.
  .extend('peer', { scope: 'file' }, async ({}, { onCleanup }) => {
    const peer = await startSmtpPeer({
      auth: LOGIN,
      onMailFrom: async () => {
        const held = hold;
        if (!held) return;
        hold = undefined;
        held.reached();
        await held.release;
      },
    });
    onCleanup(() => peer.close());
    return peer;
  })
  .extend('startWorker', { scope: 'file' }, async ({ t }, { onCleanup }) => {
    const workers: ChildProcess[] = [];
    onCleanup(async () => {
      for (const child of workers)
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    return (prefix: string) => {
      const child = spawnWorker(t, prefix);
      workers.push(child);
      return child;
    };
  });

/** `crm worker` on the test database and Redis, its queue under `prefix`. */
function spawnWorker(t: TestContext, prefix: string): ChildProcess {
  const databaseUrl = t.config.databaseUrl;
  if (!databaseUrl) throw new Error('the services suite runs on PostgreSQL');
  return spawn(process.execPath, [BIN, 'worker'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      ...(t.config.databaseDirectUrl ? { DATABASE_DIRECT_URL: t.config.databaseDirectUrl } : {}),
      REDIS_URL,
      CRM_QUEUE_PREFIX: prefix,
      CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS: 'true',
      SECRETS_KEY,
      JWT_SECRET,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

/** Resolves once `check` holds, polling; fails after `limitMs` (an event awaited, not a time asserted). */
async function eventually(check: () => Promise<boolean>, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a worker killed between claim and send', () => {
  test('is replaced by a worker on a fresh queue that sends the email once after the lease', {
    timeout: 180_000,
  }, async ({ t, org, peer, startWorker }) => {
    const account = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: org.ownerId },
      { host: peer.host, port: peer.port, ...LOGIN },
    );
    const lead = await createLead(t, org, { name: 'Globex' });
    const { job_id: id } = await scheduleEmail(
      t,
      org,
      scheduleBody(account.id, lead._id, { subject: 'Killed mid-send' }),
    );
    // The email came due a while ago (past the sweeper's grace): the worker's sweeper finds it at once.
    await t.services.db.system
      .update(scheduledEmails)
      .set({ nextAttemptAt: new Date(Date.now() - 120_000) })
      .where(eq(scheduledEmails.id, id));

    let reached!: () => void;
    const atMailFrom = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release!: () => void;
    hold = { reached, release: new Promise<void>((resolve) => (release = resolve)) };
    const first = startWorker(`${RUN}-first`);
    await atMailFrom;
    // Claimed (attempt 1, leased), connected, logged in, and held at MAIL FROM: kill it now.
    expect(await scheduledEmailRow(t, id)).toMatchObject({ status: 'sending', attempts: 1 });
    first.kill('SIGKILL');
    await exited(first);
    release();
    expect(peer.received.filter((m) => m.subject === 'Killed mid-send')).toHaveLength(0);

    // The lease runs out (as if 5 minutes passed); the first worker's Redis keys are not used again.
    await t.services.db.system
      .update(scheduledEmails)
      .set({ nextAttemptAt: new Date(Date.now() - 120_000) })
      .where(eq(scheduledEmails.id, id));
    const second = startWorker(`${RUN}-second`);
    await eventually(async () => (await scheduledEmailRow(t, id)).status === 'sent');
    second.kill('SIGTERM');
    await exited(second);

    const row = await scheduledEmailRow(t, id);
    expect(row).toMatchObject({ status: 'sent', attempts: 2 });
    const copies = peer.received.filter((m) => m.subject === 'Killed mid-send');
    expect(copies).toHaveLength(1);
    expect(copies[0]?.messageId).toBe(row.messageId);
    expect(row.activityId).toEqual(expect.any(String));
  });
});
