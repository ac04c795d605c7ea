// Locks in that a scheduled email survives a restart of the in-process runner: scheduled through the API, the server (its background work and services, with the in-memory job queue) stops before the email is due; the server opened again on the same PGlite data directory finds the due row with its sweeper and sends it exactly once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../app/services.ts';
import { signSession } from '../../core/auth/jwt.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/logger.ts';
import { createOrganizationWithOwner } from '../../core/organizations.ts';
import { InProcessQueue } from '../../core/queue-in-process.ts';
import type { Services } from '../../core/services.ts';
import { createApp } from '../../http/app.ts';
import { scheduledEmails } from '../../tools/email/tables.ts';
import { startBackgroundWork } from '../../workers/runtime.ts';
import { insertConnectedAccount, minutesFromNow, sweepDueEmails } from '../fixtures/email.ts';
import { seedDataDir } from '../support/cli.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

const LOGIN = { username: 'restart', password: 'restart-secret' };
let peer: SmtpPeer;
let dataDir: string;

beforeAll(async () => {
  peer = await startSmtpPeer({ auth: LOGIN });
  dataDir = await mkdtemp(join(tmpdir(), 'crm-email-restart-'));
  // The run's migrated database, so the first open skips initdb and every migration.
  await seedDataDir(dataDir);
});

afterAll(async () => {
  await peer?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The server's services on the data directory, as `crm serve` opens them. */
function open(): Promise<Services> {
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    CONNECTED_ACCOUNTS_ALLOW_PRIVATE_HOSTS: 'true',
  });
  return createServices(config, { logger: createLogger('silent'), withoutRateLimits: true });
}

/** Resolves once `check` holds, polling; fails after `limitMs` (an event awaited, not a time asserted). */
async function eventually(check: () => Promise<boolean> | boolean, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('restart of the in-process runner', () => {
  it('sends a scheduled email after the restart, exactly once', { timeout: 120_000 }, async () => {
    // First life: schedule it, then stop before it is due (its delayed job lives only in memory).
    const first = await open();
    const firstWork = await startBackgroundWork(first, { sweepIntervalMs: 60_000 });
    const { organization, owner } = await first.db.transaction((tx) =>
      createOrganizationWithOwner(tx, {
        name: 'Restart Org',
        plan: 'free',
        owner: { name: 'Owner', email: 'owner@restart.example', password: 'correct horse battery' },
      }),
    );
    const token = await signSession(first.jwtKey, { sub: owner.id, org: organization.id });
    const app = createApp(first);
    const call = async (path: string, body: unknown) => {
      const res = await app.request(path, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const out: unknown = await res.json();
      expect(res.status, JSON.stringify(out)).toBeLessThan(300);
      return out as Record<string, { _id: string }> & { job_id: string };
    };
    const lead = (await call('/api/v1/leads', { name: 'Globex' })).lead?._id ?? '';
    const account = await insertConnectedAccount(
      { services: first },
      { orgId: organization.id, userId: owner.id },
      { host: peer.host, port: peer.port, ...LOGIN },
    );
    const { job_id: id } = await call('/api/v1/email/schedule', {
      to: 'hank@globex.example',
      subject: 'Across a restart',
      body_html: '<p>Still here</p>',
      connected_account_id: account.id,
      lead_id: lead,
      scheduled_at: minutesFromNow(2),
    });
    await firstWork.stop();
    await first.close();
    expect(peer.received).toHaveLength(0);

    // Second life on the same data directory. The email came due while the server was down.
    const second = await open();
    try {
      await second.db.system
        .update(scheduledEmails)
        .set({ nextAttemptAt: new Date(Date.now() - 60_000) })
        .where(eq(scheduledEmails.id, id));
      const work = await startBackgroundWork(second, { sweepIntervalMs: 100, sweepGraceMs: 0 });
      try {
        await eventually(async () => {
          const [row] = await second.db.system
            .select()
            .from(scheduledEmails)
            .where(eq(scheduledEmails.id, id));
          return row?.status === 'sent';
        });
        // Later sweeps and a drained queue add nothing.
        expect(await sweepDueEmails(second, 0)).toBe(0);
        if (second.jobs instanceof InProcessQueue) await second.jobs.idle();
      } finally {
        await work.stop();
      }
      const [row] = await second.db.system.select().from(scheduledEmails).where(eq(scheduledEmails.id, id));
      expect(row).toMatchObject({ status: 'sent', attempts: 1 });
      const copies = peer.received.filter((m) => m.subject === 'Across a restart');
      expect(copies).toHaveLength(1);
      expect(copies[0]?.messageId).toBe(row?.messageId);
    } finally {
      await second.close();
    }
  });
});
