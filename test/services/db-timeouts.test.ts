// Locks in the database time limits on PostgreSQL: a request that waits for a row lock held elsewhere,
// or for a free pooled connection, answers a retriable 503 with Retry-After instead of waiting
// forever; unrelated requests keep being served; /readyz reports a saturated pool.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestContext, json, onPostgres, type TestContext, type TestOrg } from '../helpers.ts';
import { bearer, ERAS, envelopeOf, serveMcp } from '../mcp-clients.ts';

interface ErrorBody {
  code?: string;
  retry_after?: number;
}

interface Scene {
  t: TestContext;
  org: TestOrg;
  leadId: string;
  /** A separate session holding the lead's row lock in an open transaction. */
  locker: pg.Client;
  /** A separate session that watches the server's activity. */
  observer: pg.Client;
}

const scenes: Scene[] = [];

/** A context with `env`, one lead, and that lead's row locked FOR UPDATE by another session. */
async function lockedLead(env: Record<string, string>): Promise<Scene> {
  const t = await createTestContext(env, { withoutRateLimits: true });
  const org = await t.createOrg();
  const created = await t.request('POST', '/api/v1/leads', { token: org.token, body: { name: 'Held' } });
  const leadId = (await json<{ lead: { _id: string } }>(created)).lead._id;
  const locker = new pg.Client({ connectionString: t.config.databaseUrl });
  const observer = new pg.Client({ connectionString: t.config.databaseUrl });
  await locker.connect();
  await observer.connect();
  const scene = { t, org, leadId, locker, observer };
  scenes.push(scene);
  await locker.query('begin');
  await locker.query('select id from leads where id = $1 for update', [leadId]);
  return scene;
}

afterEach(async () => {
  // Releasing the lock first lets every request still waiting on it finish before the app closes.
  for (const scene of scenes.splice(0)) {
    await scene.locker.query('rollback').catch(() => undefined);
    await scene.locker.end();
    await scene.observer.end();
    await scene.t.close();
  }
});

const rename = (s: Scene, name: string) =>
  s.t.request('PATCH', `/api/v1/leads/${s.leadId}`, { token: s.org.token, body: { name } });
const listLeads = (s: Scene) => s.t.request('GET', '/api/v1/leads', { token: s.org.token });

/** Resolves once `count` sessions of the scene's database wait for a lock. */
async function untilWaitingOnLocks(s: Scene, count: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const { rows } = await s.observer.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if ((rows[0]?.n ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never saw ${count} sessions waiting for a lock`);
}

async function expectBusy(res: Response): Promise<void> {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  const body = await json<ErrorBody>(res);
  expect(body.code).toBe('unavailable');
  expect(body.retry_after).toBe(Number(res.headers.get('retry-after')));
}

describe.skipIf(!onPostgres)('database time limits', { timeout: 120_000 }, () => {
  it('a request waiting for a held row lock answers 503 with Retry-After, and an unrelated list is still served', async () => {
    const s = await lockedLead({
      DB_POOL_MAX: '4',
      DB_LOCK_TIMEOUT_MS: '300',
      DB_POOL_ACQUIRE_TIMEOUT_MS: '60000',
    });
    // Twice the pool: without a lock timeout these would hold every connection and the list would wait.
    const renames = Array.from({ length: 8 }, (_, i) => rename(s, `Renamed ${i}`));
    const [list, ...refused] = await Promise.all([listLeads(s), ...renames]);
    expect(list.status).toBe(200);
    for (const res of refused) await expectBusy(res);
  });

  it('over MCP, a tool call waiting for a held row lock is a tool error the model can retry', async () => {
    const s = await lockedLead({ DB_LOCK_TIMEOUT_MS: '300' });
    const server = await serveMcp(s.t);
    const era = ERAS[0];
    if (!era) throw new Error('no MCP client era');
    const mcp = await era.connect(server.url, bearer(s.org.token));
    try {
      const result = await mcp.callTool('update_lead', { id: s.leadId, name: 'Over MCP' });
      expect(result.isError).toBe(true);
      const body = envelopeOf(result);
      expect(body.code).toBe('unavailable');
      expect(body.retry_after).toEqual(expect.any(Number));
    } finally {
      await mcp.close();
      await server.stop();
    }
  });

  it('a request that gets no pooled connection in time answers 503 with Retry-After', async () => {
    const s = await lockedLead({
      DB_POOL_MAX: '1',
      DB_LOCK_TIMEOUT_MS: '60000',
      DB_POOL_ACQUIRE_TIMEOUT_MS: '300',
    });
    const waiting = rename(s, 'Waits for the lock');
    await untilWaitingOnLocks(s, 1);
    await expectBusy(await listLeads(s));
    await s.locker.query('rollback');
    expect((await waiting).status).toBe(200);
  });

  it('/readyz reports a saturated pool while every connection is busy and requests queue', async () => {
    const s = await lockedLead({
      DB_POOL_MAX: '2',
      DB_LOCK_TIMEOUT_MS: '60000',
      DB_POOL_ACQUIRE_TIMEOUT_MS: '60000',
    });
    const renames = [rename(s, 'First'), rename(s, 'Second')];
    await untilWaitingOnLocks(s, 2);
    const queued = listLeads(s);
    let saturated: Response | undefined;
    for (let i = 0; i < 20 && !saturated; i++) {
      const res = await s.t.request('GET', '/readyz');
      const body = await json<{ checks: Record<string, string> }>(res.clone());
      if (body.checks.database_pool === 'saturated') saturated = res;
    }
    expect(saturated?.status).toBe(503);

    await s.locker.query('rollback');
    expect((await Promise.all([...renames, queued])).map((r) => r.status)).toEqual([200, 200, 200]);
    const ready = await s.t.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect((await json<{ checks: Record<string, string> }>(ready)).checks.database_pool).toBe('ok');
  });
});
