// Locks in forecast accuracy: the daily snapshot job (idempotent per day) and GET /forecast/accuracy for a month, a quarter and a year against a hand-computed table, with its period validation, plan feature, role permission, scope and tenancy.
import { and, eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { snapshotForecasts } from '../../tools/forecast/jobs.ts';
import { forecastSnapshotDays, forecastSnapshots } from '../../tools/forecast/tables.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import {
  createLead,
  fileTest,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { seedOpportunities } from '../opportunities/seed.ts';

const ids: Record<string, string> = {};

type Seed = {
  key: string;
  value: number;
  currency?: string;
  confidence: number;
  close?: string;
  deleted?: boolean;
};

async function seed(t: TestContext, target: TestOrg, leadId: string, rows: Seed[]) {
  for (const row of rows) {
    const [id = ''] = await seedOpportunities(t, target.orgId, [
      {
        leadId,
        value: row.value,
        currency: row.currency ?? 'USD',
        confidence: row.confidence,
        status: 'active',
        expectedCloseDate: row.close ?? null,
        deletedAt: row.deleted ? new Date('2025-12-01T00:00:00Z') : null,
      },
    ]);
    ids[row.key] = id;
  }
}

async function close(t: TestContext, key: string, status: 'won' | 'lost', closedAt: string, value?: number) {
  await t.services.db.system
    .update(opportunities)
    .set({ status, closedAt: new Date(closedAt), ...(value === undefined ? {} : { value }) })
    .where(eq(opportunities.id, ids[key] ?? ''));
}

async function accuracy(t: TestContext, org: TestOrg, period: string, as: { token: string } = org) {
  const res = await t.request('GET', `/api/v1/forecast/accuracy?period=${period}`, { token: as.token });
  return (await readOutput(res, TOOL.get_forecast_accuracy, 200)).accuracy;
}

const test = fileTest({ plan: 'pro' });

test.beforeAll(async ({ t, org, other }) => {
  const lead = await createLead(t, org);
  await seed(t, org, lead._id, [
    { key: 'jan', value: 1000, confidence: 50, close: '2026-01-15' }, // weighted 500.00
    { key: 'feb', value: 2000, confidence: 90, close: '2026-02-10' }, // weighted 1800.00, commit 2000.00
    { key: 'mar', value: 333.33, confidence: 33, close: '2026-03-05' }, // 109.9989 -> 110.00
    { key: 'eur', value: 500, currency: 'EUR', confidence: 100, close: '2026-02-20' }, // 500.00, commit 500.00
    { key: 'jul', value: 999, confidence: 80, close: '2026-07-01' }, // 799.20
    { key: 'undated', value: 100, confidence: 50 }, // no close date: not in any forecast
    { key: 'trashed', value: 10000, confidence: 100, close: '2026-01-10', deleted: true },
  ]);
  const otherLead = await createLead(t, other);
  await seed(t, other, otherLead._id, [{ key: 'other', value: 7000, confidence: 100, close: '2026-01-05' }]);

  // The snapshot at the start of 2026, taken twice the same day.
  await snapshotForecasts(t.services, new Date('2026-01-01T00:05:00Z'));
  await snapshotForecasts(t.services, new Date('2026-01-01T18:00:00Z'));

  // What happened afterwards: later changes do not move the forecast taken on January 1st.
  await t.services.db.system
    .update(opportunities)
    .set({ confidence: 100 })
    .where(eq(opportunities.id, ids.jan ?? ''));
  await close(t, 'jan', 'won', '2026-01-20T10:00:00Z');
  await close(t, 'feb', 'won', '2026-02-25T10:00:00Z', 1500);
  await close(t, 'mar', 'lost', '2026-03-20T10:00:00Z');
  await close(t, 'eur', 'won', '2026-03-02T10:00:00Z');
  await close(t, 'jul', 'won', '2026-07-03T10:00:00Z');
  await seed(t, org, lead._id, [
    { key: 'late', value: 400, confidence: 10, close: '2026-03-31' },
    { key: 'old', value: 50, confidence: 10, close: '2025-12-20' },
  ]);
  await close(t, 'late', 'won', '2026-03-15T10:00:00Z');
  await close(t, 'old', 'won', '2025-12-20T10:00:00Z');
  await close(t, 'other', 'won', '2026-01-06T10:00:00Z');
  await snapshotForecasts(t.services, new Date('2026-02-01T00:05:00Z'));
});

describe('snapshot job', () => {
  test('writes one row per organization, day, currency and month of close, once per day', async ({
    t,
    org,
  }) => {
    const rows = await t.services.db.system
      .select()
      .from(forecastSnapshots)
      .where(and(eq(forecastSnapshots.orgId, org.orgId), eq(forecastSnapshots.snapshotOn, '2026-01-01')));
    const table = rows
      .map((r) => [r.currency, r.closeMonth, r.weightedMinor, r.commitMinor])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1])));
    expect(table).toEqual([
      ['EUR', '2026-02', 50000n, 50000n],
      ['USD', '2026-01', 50000n, 0n],
      ['USD', '2026-02', 180000n, 200000n],
      ['USD', '2026-03', 11000n, 0n],
      ['USD', '2026-07', 79920n, 0n],
    ]);
    const days = await t.services.db.system
      .select()
      .from(forecastSnapshotDays)
      .where(eq(forecastSnapshotDays.orgId, org.orgId));
    expect(days.map((d) => d.snapshotOn).sort()).toEqual(['2026-01-01', '2026-02-01']);
  });
});

describe('GET /forecast/accuracy', () => {
  test('a month: forecast at its start against what was won in it', async ({ t, org }) => {
    const jan = await accuracy(t, org, '2026-01');
    expect(jan).toEqual({
      period: '2026-01',
      starts_on: '2026-01-01',
      ends_on: '2026-01-31',
      complete: true,
      snapshot_on: '2026-01-01',
      snapshots_since: '2026-01-01',
      note: null,
      currencies: [
        { currency: 'USD', forecast: 500, commit: 0, actual: 1000, accuracy: 0.5, bias: -0.5, mape: null },
      ],
      months: [],
    });
  });

  test('a quarter: totals per currency, each month, and the MAPE across months', async ({ t, org }) => {
    const q1 = await accuracy(t, org, '2026-Q1');
    expect(q1).toMatchObject({ starts_on: '2026-01-01', ends_on: '2026-03-31', snapshot_on: '2026-01-01' });
    expect(q1.currencies).toEqual([
      { currency: 'EUR', forecast: 500, commit: 500, actual: 500, accuracy: 1, bias: 0, mape: 1 },
      // 2410 vs 2900: |diff| / actual = 490 / 2900 = 0.16897 -> 0.1690
      {
        currency: 'USD',
        forecast: 2410,
        commit: 2000,
        actual: 2900,
        accuracy: 0.831,
        bias: -0.169,
        mape: 0.475,
      },
    ]);
    expect(q1.months).toEqual([
      {
        month: '2026-01',
        currencies: [
          { currency: 'EUR', forecast: 0, commit: 0, actual: 0, accuracy: null, bias: null },
          { currency: 'USD', forecast: 500, commit: 0, actual: 1000, accuracy: 0.5, bias: -0.5 },
        ],
      },
      {
        month: '2026-02',
        currencies: [
          { currency: 'EUR', forecast: 500, commit: 500, actual: 0, accuracy: null, bias: null },
          { currency: 'USD', forecast: 1800, commit: 2000, actual: 1500, accuracy: 0.8, bias: 0.2 },
        ],
      },
      {
        month: '2026-03',
        currencies: [
          { currency: 'EUR', forecast: 0, commit: 0, actual: 500, accuracy: 0, bias: -1 },
          { currency: 'USD', forecast: 110, commit: 0, actual: 400, accuracy: 0.275, bias: -0.725 },
        ],
      },
    ]);
  });

  test('a year: the snapshot of January 1st against the whole year', async ({ t, org }) => {
    const year = await accuracy(t, org, '2026');
    expect(year).toMatchObject({ starts_on: '2026-01-01', ends_on: '2026-12-31', snapshot_on: '2026-01-01' });
    expect(year.months).toHaveLength(12);
    // 3209.20 vs 3899: 689.80 / 3899 = 0.17692 -> 0.1769; MAPE (0.5 + 0.2 + 0.725 + 0.2) / 4 = 0.40625 -> 0.4063
    expect(year.currencies).toEqual([
      { currency: 'EUR', forecast: 500, commit: 500, actual: 500, accuracy: 1, bias: 0, mape: 1 },
      {
        currency: 'USD',
        forecast: 3209.2,
        commit: 2000,
        actual: 3899,
        accuracy: 0.8231,
        bias: -0.1769,
        mape: 0.4063,
      },
    ]);
  });

  test("a new organization's first ask takes its first snapshot and says from when snapshots exist", async ({
    t,
    org,
  }) => {
    const fresh = await t.createOrg({ plan: 'pro' });
    const lead = await createLead(t, fresh);
    await seed(t, fresh, lead._id, [{ key: 'fresh', value: 400, confidence: 50, close: '2999-06-15' }]);
    const today = new Date().toISOString().slice(0, 10);
    const asked = await accuracy(t, org, '2999-06', fresh);
    expect(asked).toMatchObject({ snapshots_since: today, snapshot_on: today, note: null });
    expect(asked.currencies).toEqual([
      { currency: 'USD', forecast: 200, commit: 0, actual: 0, accuracy: null, bias: null, mape: null },
    ]);
    const past = await accuracy(t, org, '2020', fresh);
    expect(past.snapshots_since).toBe(today);
    expect(past.note).toContain(`began on ${today}`);
    const days = await t.services.db.system
      .select()
      .from(forecastSnapshotDays)
      .where(eq(forecastSnapshotDays.orgId, fresh.orgId));
    expect(days.map((d) => d.snapshotOn)).toEqual([today]);
  });

  test('a period with no snapshot by its start says so with null forecast figures', async ({ t, org }) => {
    const before = await accuracy(t, org, '2025');
    expect(before.snapshot_on).toBeNull();
    expect(before.note).toContain('snapshots of this organization began on 2026-01-01');
    expect(before.currencies).toEqual([
      { currency: 'USD', forecast: null, commit: null, actual: 50, accuracy: null, bias: null, mape: null },
    ]);
    expect(before.months[11]).toEqual({
      month: '2025-12',
      currencies: [{ currency: 'USD', forecast: null, commit: null, actual: 50, accuracy: null, bias: null }],
    });
    // A later period uses the latest snapshot on or before its start.
    expect((await accuracy(t, org, '2026-03')).snapshot_on).toBe('2026-02-01');
    expect((await accuracy(t, org, '2999-01')).complete).toBe(false);
  });

  test.for(['2026-13', '2026-Q5', '26', '2026-1', '2026-Q0', '2026-00'])(
    '400 for period=%s',
    async (period, { t, org }) => {
      const res = await t.request('GET', `/api/v1/forecast/accuracy?period=${period}`, { token: org.token });
      const body = await readError(res, 400);
      expect(body.code).toBe('validation_failed');
      expect(JSON.stringify(body.details)).toContain('period');
    },
  );

  test('402 on a plan without forecasting', async ({ t }) => {
    const free = await t.createOrg({ plan: 'starter' });
    const res = await t.request('GET', '/api/v1/forecast/accuracy?period=2026', { token: free.token });
    expect((await readError(res, 402)).code).toBe('plan_upgrade_required');
  });

  test('owner, admin and manager may read it; member and viewer get 403', async ({ t, org }) => {
    for (const role of ['admin', 'manager'] as const) {
      const user = await t.createUser(org.orgId, role);
      expect((await accuracy(t, org, '2026-01', user)).snapshot_on).toBe('2026-01-01');
    }
    for (const role of ['member', 'viewer'] as const) {
      const user = await t.createUser(org.orgId, role);
      const res = await t.request('GET', '/api/v1/forecast/accuracy?period=2026', { token: user.token });
      expect((await readError(res, 403)).code).toBe('forbidden');
    }
  });

  test('a key needs read:opportunities', async ({ t, org }) => {
    const ok = await t.createPat(org.orgId, org.ownerId, ['read:opportunities']);
    expect((await accuracy(t, org, '2026-01', ok)).currencies).toHaveLength(1);
    const no = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    const res = await t.request('GET', '/api/v1/forecast/accuracy?period=2026', { token: no.token });
    expect(res.status).toBe(403);
  });

  test("sees only its own organization's snapshots and wins", async ({ t, org, other }) => {
    const jan = await accuracy(t, org, '2026-01', other);
    expect(jan.currencies).toEqual([
      { currency: 'USD', forecast: 7000, commit: 7000, actual: 7000, accuracy: 1, bias: 0, mape: null },
    ]);
  });
});

describe('get_forecast_accuracy', () => {
  test('is a read-only, idempotent tool of the sales toolset', () => {
    const tool = TOOL.get_forecast_accuracy;
    expect(tool.toolset).toBe('sales');
    expect(tool.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true,
      destructiveHint: false,
    });
    expect(tool.access).toEqual({
      kind: 'read',
      resource: 'opportunities',
      permission: 'forecast.view',
      feature: 'forecasting',
    });
  });
});
