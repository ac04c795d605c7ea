// Locks in race-free state changes on PostgreSQL: parallel requests that change the same user or the
// same webhook delivery give exactly one success, and no live lead or task is ever left owned by a
// deleted user. Each case is repeated for several rounds, because one round of a race may happen to
// run in a harmless order.
import { sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { rowsOf } from '../../core/db/sql.ts';
import { fileTest } from '../fixtures/file-test.ts';
import { harnessTest } from '../fixtures/harness-test.ts';
import {
  onPostgres,
  type ReceiverContext,
  startReceiverContext,
  type TestContext,
  type TestOrg,
} from '../fixtures/index.ts';
import { json } from '../helpers.ts';

const ROUNDS = 12;

interface ErrorBody {
  code?: string;
  details?: { field: string }[];
}

const test = fileTest({ options: { withoutRateLimits: true } });

const deleteUser = (t: TestContext, org: TestOrg, id: string, body?: Record<string, unknown>) =>
  t.request('DELETE', `/api/v1/users/${id}`, { token: org.token, ...(body ? { body } : {}) });

/** A member who owns one live lead and one open task, all made through the API. */
async function memberWithRecords(t: TestContext, org: TestOrg): Promise<string> {
  const { userId } = await t.createUser(org.orgId, 'member');
  const lead = await t.request('POST', '/api/v1/leads', {
    token: org.token,
    body: { name: `Lead of ${userId}`, owner_id: userId },
  });
  expect(lead.status).toBe(201);
  const task = await t.request('POST', '/api/v1/tasks', {
    token: org.token,
    body: { text: 'Call back', assigned_to: userId },
  });
  expect(task.status).toBe(201);
  return userId;
}

/** Live leads and tasks owned by (assigned to) any of `userIds` that is deleted. */
async function orphans(t: TestContext, ...userIds: string[]): Promise<number> {
  const ids = sql.join(
    userIds.map((id) => sql`${id}`),
    sql`, `,
  );
  const result = await t.services.db.system.execute(sql`
    select
      (select count(*) from leads l join users u on u.id = l.owner_id
        where u.id in (${ids}) and l.deleted_at is null and u.deleted_at is not null)
      + (select count(*) from tasks k join users u on u.id = k.assigned_to
        where u.id in (${ids}) and k.deleted_at is null and u.deleted_at is not null) as n`);
  const [row] = rowsOf(result);
  return row && typeof row === 'object' && 'n' in row ? Number(row.n) : Number.NaN;
}

const statusesOf = (responses: Response[]) => responses.map((r) => r.status).sort();

describe.skipIf(!onPostgres)('parallel user deletions', { timeout: 240_000 }, () => {
  test('two users deleted at once, each naming the other heir: one succeeds, the other is told its heir is gone', async ({
    t,
    org,
  }) => {
    for (let round = 0; round < ROUNDS; round++) {
      const a = await memberWithRecords(t, org);
      const b = await memberWithRecords(t, org);
      const responses = await Promise.all([
        deleteUser(t, org, a, { transfer_to_user_id: b }),
        deleteUser(t, org, b, { transfer_to_user_id: a }),
      ]);
      expect(statusesOf(responses)).toEqual([200, 400]);
      const refused = responses.find((r) => r.status === 400);
      const body = refused ? await json<ErrorBody>(refused) : {};
      expect(body.details?.[0]?.field).toBe('transfer_to_user_id');
      expect(await orphans(t, a, b)).toBe(0);
    }
  });

  test('a user trashed with acknowledge_data_deletion while named heir of another: nothing is left with the deleted', async ({
    t,
    org,
  }) => {
    for (let round = 0; round < ROUNDS; round++) {
      const a = await memberWithRecords(t, org);
      const b = await memberWithRecords(t, org);
      const [trashing, transferring] = await Promise.all([
        deleteUser(t, org, a, { acknowledge_data_deletion: true }),
        deleteUser(t, org, b, { transfer_to_user_id: a }),
      ]);
      // Run one after the other, either order is valid: the transfer first (both succeed, the trash
      // takes what was transferred), or the trash first (the transfer is refused: its heir is gone).
      expect(trashing.status).toBe(200);
      expect([200, 400]).toContain(transferring.status);
      expect(await orphans(t, a, b)).toBe(0);
    }
  });

  test('ten parallel deletions of one user: exactly one succeeds, the others find no user', async ({
    t,
    org,
  }) => {
    for (let round = 0; round < ROUNDS; round++) {
      const a = await memberWithRecords(t, org);
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => deleteUser(t, org, a, { transfer_to_user_id: org.ownerId })),
      );
      expect(statusesOf(responses)).toEqual([200, ...Array<number>(9).fill(404)]);
      expect(await orphans(t, a)).toBe(0);
    }
  });

  test('records assigned to a user while the user is deleted end with a live owner or in the trash', async ({
    t,
    org,
  }) => {
    for (let round = 0; round < ROUNDS; round++) {
      const a = await memberWithRecords(t, org);
      const assignments = Array.from({ length: 4 }, (_, i) =>
        t.request('POST', '/api/v1/leads', {
          token: org.token,
          body: { name: `Late lead ${i}`, owner_id: a },
        }),
      );
      const [deletion, ...created] = await Promise.all([
        deleteUser(t, org, a, { acknowledge_data_deletion: true }),
        ...assignments,
      ]);
      expect(deletion.status).toBe(200);
      for (const res of created) expect([201, 400]).toContain(res.status);
      expect(await orphans(t, a)).toBe(0);
    }
  });
});

/** A delivery's status as its webhook's delivery list reads it. */
async function deliveryStatus(replays: ReplayHarness): Promise<string | undefined> {
  const { t, org, webhookId, deliveryId } = replays;
  const res = await t.request('GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=100`, {
    token: org.token,
  });
  const { deliveries } = await json<{ deliveries: { _id: string; status: string }[] }>(res);
  return deliveries.find((d) => d._id === deliveryId)?.status;
}

async function untilDelivered(replays: ReplayHarness): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await deliveryStatus(replays)) === 'succeeded') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`delivery ${replays.deliveryId} never succeeded`);
}

/** The receiver's context, with an organization subscribed to it and one delivery made. */
interface ReplayHarness extends ReceiverContext {
  org: TestOrg;
  webhookId: string;
  deliveryId: string;
}

/** A context whose workers deliver to a local receiver, and one delivery of a test event already made. */
async function startReplays(): Promise<ReplayHarness> {
  const { t, receiver, close } = await startReceiverContext();
  try {
    const org = await t.createOrg({ plan: 'starter' });
    const created = await t.request('POST', '/api/v1/webhooks', {
      token: org.token,
      body: {
        name: 'Races',
        url: receiver.url('/races'),
        events: ['lead.created'],
        secret: 'races-secret-0123456789',
      },
    });
    const webhookId = (await json<{ webhook: { _id: string } }>(created)).webhook._id;
    const testEvent = await t.request('POST', `/api/v1/webhooks/test/${webhookId}`, { token: org.token });
    const deliveryId = (await json<{ delivery: { _id: string } }>(testEvent)).delivery._id;
    const replays = { t, org, receiver, webhookId, deliveryId, close };
    await untilDelivered(replays);
    return replays;
  } catch (err) {
    await close();
    throw err;
  }
}

// The replays' own context (workers trusting the receiver's CA), started on first use and closed with the file.
const replayTest = harnessTest(startReplays);

describe.skipIf(!onPostgres)('parallel webhook replays', { timeout: 240_000 }, () => {
  replayTest(
    'twenty parallel replays of one delivery: exactly one succeeds and exactly one request is sent',
    async ({ harness }) => {
      const { t, org, receiver, deliveryId } = harness;
      for (let round = 0; round < ROUNDS; round++) {
        const sentBefore = receiver.hits('/races').length;
        // The receiver holds its answer until every replay has been answered: the accepted replay's
        // attempt stays in flight, so no later replay may legitimately find the delivery finished.
        let release = () => {};
        receiver.setFallback({ until: new Promise<void>((resolve) => (release = resolve)) });
        const responses = await Promise.all(
          Array.from({ length: 20 }, () =>
            t.request('POST', `/api/v1/webhooks/deliveries/${deliveryId}/replay`, { token: org.token }),
          ),
        );
        release();
        expect(statusesOf(responses)).toEqual([200, ...Array<number>(19).fill(400)]);
        await untilDelivered(harness);
        // Only an accepted replay enqueues an attempt: once it has run, nothing more is on its way.
        expect(receiver.hits('/races').length).toBe(sentBefore + 1);
      }
    },
  );
});
