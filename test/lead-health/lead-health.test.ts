// Locks in the lead health score over REST: each factor's value, score, weight and contribution from seeded activities, opportunities, tasks and commitments, contributions summing to the score, grades, recommendations and access rules.
import { describe, expect } from 'vitest';
import type { Commitment } from '../../tools/conversation-memory/tables.ts';
import { HEALTH_WEIGHTS } from '../../tools/lead-health/store.ts';
import { seedActivities } from '../activities/seed.ts';
import { seedConversationMemories } from '../conversation-memory/seed.ts';
import {
  createLead as createLeadVia,
  fileTest,
  type OutputOf,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { seedOpportunities } from '../opportunities/seed.ts';
import { seedTasks, type TaskSeed } from '../tasks/seed.ts';

type Health = OutputOf<'get_lead_health'>['health'];
type Factor = Health['factors'][number];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(Date.now() - ms);

const test = fileTest({ options: { withoutRateLimits: true } });

async function createLead(t: TestContext, org: TestOrg, o: TestOrg = org): Promise<string> {
  return (await createLeadVia(t, o, { name: 'Health Lead' }))._id;
}

async function health(t: TestContext, org: TestOrg, leadId: string, token = org.token): Promise<Health> {
  const res = await t.request('GET', `/api/v1/leads/${leadId}/health`, { token });
  return (await readOutput(res, TOOL.get_lead_health)).health;
}

function factor(h: Health, key: string): Factor {
  const found = h.factors.find((f) => f.key === key);
  if (!found) throw new Error(`no factor ${key}`);
  return found;
}

function expectConsistent(h: Health): void {
  expect(h.factors.reduce((s, f) => s + f.weight, 0)).toBe(100);
  expect(h.score).toBeCloseTo(
    h.factors.reduce((s, f) => s + f.contribution, 0),
    6,
  );
  for (const f of h.factors) {
    expect(f.weight).toBe(HEALTH_WEIGHTS[f.key]);
    expect(f.contribution).toBeCloseTo(Math.round(f.weight * f.score * 10) / 10, 6);
    expect(f.score).toBeGreaterThanOrEqual(0);
    expect(f.score).toBeLessThanOrEqual(1);
    expect(f.explanation.length).toBeGreaterThan(10);
  }
}

function email(
  org: TestOrg,
  leadId: string,
  direction: 'inbound' | 'outbound',
  occurredAt: Date,
  deleted = false,
) {
  return {
    leadId,
    type: 'email',
    userId: org.ownerId,
    occurredAt,
    fields: {
      direction,
      subject: 'Re: pricing',
      body_text: 'hello',
      from: 'a@example.test',
      to: ['b@example.test'],
      opened_at: null,
    },
    ...(deleted ? { deletedAt: new Date(), deletedBy: org.ownerId } : {}),
  };
}

function task(org: TestOrg, leadId: string, dueAt: Date | null, extra: Partial<TaskSeed> = {}) {
  return {
    leadId,
    assignedTo: org.ownerId,
    text: 'Follow up',
    dueAt,
    ...extra,
  };
}

function commitment(org: TestOrg, status: Commitment['status'], dueAt: Date | null): Commitment {
  return {
    text: 'Promise',
    due_at: dueAt ? dueAt.toISOString() : null,
    status,
    note: null,
    created_at: new Date().toISOString(),
    created_by: org.ownerId,
    resolved_at: status === 'open' ? null : new Date().toISOString(),
  };
}

describe('a cold lead', () => {
  let leadId: string;
  let h: Health;

  test.beforeAll(async ({ t, org }) => {
    leadId = await createLead(t, org);
    await seedActivities(t, org.orgId, [
      {
        leadId,
        type: 'note',
        userId: org.ownerId,
        occurredAt: ago(41 * DAY + HOUR),
        fields: { note: 'Went quiet' },
      },
      // A meeting planned for next week is not contact yet.
      {
        leadId,
        type: 'meeting',
        userId: org.ownerId,
        occurredAt: ago(-5 * DAY),
        fields: {
          title: 'Demo',
          starts_at: ago(-5 * DAY).toISOString(),
          ends_at: null,
          location: null,
          attendees: [],
          note: '',
        },
      },
      // Outside the 30-day email window, and a trashed one inside it: neither counts.
      email(org, leadId, 'outbound', ago(45 * DAY)),
      email(org, leadId, 'inbound', ago(DAY), true),
    ]);
    await seedOpportunities(t, org.orgId, [
      { leadId, value: 90_000, status: 'won' },
      { leadId, value: 5000, status: 'lost' },
    ]);
    await seedTasks(t, org.orgId, [
      task(org, leadId, ago(3 * DAY)),
      task(org, leadId, ago(HOUR)),
      task(org, leadId, ago(-DAY)),
      task(org, leadId, null),
      task(org, leadId, ago(DAY), { isComplete: true, completedAt: new Date() }),
      task(org, leadId, ago(DAY), { deletedAt: new Date(), deletedBy: org.ownerId }),
    ]);
    await seedConversationMemories(t, org.orgId, [
      {
        leadId,
        commitments: [
          commitment(org, 'missed', null),
          commitment(org, 'open', ago(DAY)),
          commitment(org, 'open', ago(-DAY)),
          commitment(org, 'kept', ago(2 * DAY)),
          commitment(org, 'open', null),
        ],
      },
    ]);
    h = await health(t, org, leadId);
  });

  test('scores each factor from the seeded data', () => {
    expect(factor(h, 'activity_recency')).toMatchObject({
      weight: 30,
      value: 41,
      score: 0.317,
      contribution: 9.5,
      explanation: 'No activity for 41 days: log a call or send an email.',
    });
    expect(factor(h, 'open_opportunities')).toMatchObject({
      weight: 20,
      value: 0,
      score: 0,
      contribution: 0,
      measures: { open_count: 0, open_value: 0 },
    });
    expect(factor(h, 'overdue_tasks')).toMatchObject({ weight: 15, value: 2, score: 0.5, contribution: 7.5 });
    expect(factor(h, 'missed_commitments')).toMatchObject({
      weight: 15,
      value: 2,
      score: 0.4,
      contribution: 6,
    });
    expect(factor(h, 'email_engagement')).toMatchObject({
      weight: 20,
      score: 0.5,
      contribution: 10,
      measures: { inbound: 0, outbound: 0 },
    });
  });

  test('sums the contributions to the score and grades it critical', () => {
    expectConsistent(h);
    expect(h.score).toBe(33);
    expect(h.grade).toBe('critical');
    expect(h.lead_id).toBe(leadId);
    expect(Date.parse(h.computed_at)).not.toBeNaN();
  });

  test('recommends the weakest factors first', () => {
    expect(h.recommendations).toEqual([
      factor(h, 'open_opportunities').explanation,
      factor(h, 'activity_recency').explanation,
      factor(h, 'missed_commitments').explanation,
    ]);
  });
});

describe('an engaged lead', () => {
  test('scores high with recent activity, replies and an open deal', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    await seedActivities(t, org.orgId, [
      email(org, leadId, 'inbound', ago(2 * HOUR)),
      email(org, leadId, 'outbound', ago(DAY)),
      email(org, leadId, 'outbound', ago(3 * DAY)),
    ]);
    await seedOpportunities(t, org.orgId, [
      { leadId, value: 5000, status: 'active' },
      { leadId, value: 50_000, status: 'won' },
      { leadId, value: 70_000, status: 'active', deletedAt: new Date() },
    ]);
    const h = await health(t, org, leadId);
    expect(factor(h, 'activity_recency')).toMatchObject({ value: 0, score: 1, contribution: 30 });
    expect(factor(h, 'open_opportunities')).toMatchObject({
      value: 5000,
      score: 0.8,
      contribution: 16,
      measures: { open_count: 1, open_value: 5000 },
    });
    expect(factor(h, 'email_engagement')).toMatchObject({
      value: 1,
      score: 0.8,
      contribution: 16,
      measures: { inbound: 1, outbound: 2 },
    });
    expect(factor(h, 'overdue_tasks').score).toBe(1);
    expect(factor(h, 'missed_commitments').score).toBe(1);
    expectConsistent(h);
    expect(h.score).toBe(92);
    expect(h.grade).toBe('healthy');
    expect(h.recommendations).toEqual([
      factor(h, 'open_opportunities').explanation,
      factor(h, 'email_engagement').explanation,
    ]);
  });

  test('marks unanswered outbound email low', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    await seedActivities(t, org.orgId, [
      email(org, leadId, 'outbound', ago(DAY)),
      email(org, leadId, 'outbound', ago(2 * DAY)),
    ]);
    const h = await health(t, org, leadId);
    expect(factor(h, 'email_engagement')).toMatchObject({ score: 0.2, contribution: 4, value: 0 });
    expect(factor(h, 'email_engagement').explanation).toContain('no reply');
    expectConsistent(h);
  });
});

describe('a new lead', () => {
  test('has no activity, no deal and nothing overdue: at risk', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    const h = await health(t, org, leadId);
    expect(h.factors.map((f) => [f.key, f.score, f.value])).toEqual([
      ['activity_recency', 0, null],
      ['open_opportunities', 0, 0],
      ['overdue_tasks', 1, 0],
      ['missed_commitments', 1, 0],
      ['email_engagement', 0.5, 0],
    ]);
    expectConsistent(h);
    expect(h.score).toBe(40);
    expect(h.grade).toBe('at_risk');
  });
});

describe('access', () => {
  test('answers 404 for an unknown, trashed or foreign lead and 400 for a bad id', async ({
    t,
    org,
    other,
  }) => {
    const foreign = await createLead(t, org, other);
    const trashed = await createLead(t, org);
    await t.request('DELETE', `/api/v1/leads/${trashed}`, { token: org.token });
    for (const id of [foreign, trashed, '0123456789abcdef01234567']) {
      const res = await t.request('GET', `/api/v1/leads/${id}/health`, { token: org.token });
      expect(res.status).toBe(404);
    }
    const bad = await t.request('GET', '/api/v1/leads/nope/health', { token: org.token });
    expect(bad.status).toBe(400);
  });

  test('is readable by a viewer and needs read:leads on a token', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await health(t, org, leadId, viewer.token)).lead_id).toBe(leadId);
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await health(t, org, leadId, reader.token)).lead_id).toBe(leadId);
    const contacts = await t.createPat(org.orgId, org.ownerId, ['read:contacts']);
    const res = await t.request('GET', `/api/v1/leads/${leadId}/health`, { token: contacts.token });
    expect(res.status).toBe(403);
  });
});
