// Locks in the lead health score over REST: each factor's value, score, weight and contribution from seeded activities, opportunities, tasks and commitments, contributions summing to the score, grades, recommendations and access rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../core/ids.ts';
import { activities } from '../../tools/activities/tables.ts';
import { type Commitment, conversationMemories } from '../../tools/conversation-memory/tables.ts';
import { HEALTH_WEIGHTS } from '../../tools/lead-health/store.ts';
import { opportunities } from '../../tools/opportunities/tables.ts';
import { tasks } from '../../tools/tasks/tables.ts';
import {
  createLead as createLeadVia,
  createTestContext,
  type OutputOf,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

let t: TestContext;
let org: TestOrg;
let other: TestOrg;

type Health = OutputOf<'get_lead_health'>['health'];
type Factor = Health['factors'][number];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(Date.now() - ms);

beforeAll(async () => {
  t = await createTestContext({}, { withoutRateLimits: true });
  org = await t.createOrg();
  other = await t.createOrg({ name: 'Other Org' });
});
afterAll(() => t.close());

async function createLead(o: TestOrg = org): Promise<string> {
  return (await createLeadVia(t, o, { name: 'Health Lead' }))._id;
}

async function health(leadId: string, token = org.token): Promise<Health> {
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

const db = () => t.services.db.system;

function email(leadId: string, direction: 'inbound' | 'outbound', occurredAt: Date, deleted = false) {
  return {
    id: newId(),
    orgId: org.orgId,
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

function task(leadId: string, dueAt: Date | null, extra: Partial<typeof tasks.$inferInsert> = {}) {
  return {
    id: newId(),
    orgId: org.orgId,
    leadId,
    assignedTo: org.ownerId,
    text: 'Follow up',
    dueAt,
    ...extra,
  };
}

function commitment(status: Commitment['status'], dueAt: Date | null): Commitment {
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

  beforeAll(async () => {
    leadId = await createLead();
    await db()
      .insert(activities)
      .values([
        {
          id: newId(),
          orgId: org.orgId,
          leadId,
          type: 'note',
          userId: org.ownerId,
          occurredAt: ago(41 * DAY + HOUR),
          fields: { note: 'Went quiet' },
        },
        // A meeting planned for next week is not contact yet.
        {
          id: newId(),
          orgId: org.orgId,
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
        email(leadId, 'outbound', ago(45 * DAY)),
        email(leadId, 'inbound', ago(DAY), true),
      ]);
    await db()
      .insert(opportunities)
      .values([
        { id: newId(), orgId: org.orgId, leadId, value: 90_000, status: 'won' },
        { id: newId(), orgId: org.orgId, leadId, value: 5000, status: 'lost' },
      ]);
    await db()
      .insert(tasks)
      .values([
        task(leadId, ago(3 * DAY)),
        task(leadId, ago(HOUR)),
        task(leadId, ago(-DAY)),
        task(leadId, null),
        task(leadId, ago(DAY), { isComplete: true, completedAt: new Date() }),
        task(leadId, ago(DAY), { deletedAt: new Date(), deletedBy: org.ownerId }),
      ]);
    await db()
      .insert(conversationMemories)
      .values({
        leadId,
        orgId: org.orgId,
        commitments: [
          commitment('missed', null),
          commitment('open', ago(DAY)),
          commitment('open', ago(-DAY)),
          commitment('kept', ago(2 * DAY)),
          commitment('open', null),
        ],
      });
    h = await health(leadId);
  });

  it('scores each factor from the seeded data', () => {
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

  it('sums the contributions to the score and grades it critical', () => {
    expectConsistent(h);
    expect(h.score).toBe(33);
    expect(h.grade).toBe('critical');
    expect(h.lead_id).toBe(leadId);
    expect(Date.parse(h.computed_at)).not.toBeNaN();
  });

  it('recommends the weakest factors first', () => {
    expect(h.recommendations).toEqual([
      factor(h, 'open_opportunities').explanation,
      factor(h, 'activity_recency').explanation,
      factor(h, 'missed_commitments').explanation,
    ]);
  });
});

describe('an engaged lead', () => {
  it('scores high with recent activity, replies and an open deal', async () => {
    const leadId = await createLead();
    await db()
      .insert(activities)
      .values([
        email(leadId, 'inbound', ago(2 * HOUR)),
        email(leadId, 'outbound', ago(DAY)),
        email(leadId, 'outbound', ago(3 * DAY)),
      ]);
    await db()
      .insert(opportunities)
      .values([
        { id: newId(), orgId: org.orgId, leadId, value: 5000, status: 'active' },
        { id: newId(), orgId: org.orgId, leadId, value: 50_000, status: 'won' },
        { id: newId(), orgId: org.orgId, leadId, value: 70_000, status: 'active', deletedAt: new Date() },
      ]);
    const h = await health(leadId);
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

  it('marks unanswered outbound email low', async () => {
    const leadId = await createLead();
    await db()
      .insert(activities)
      .values([email(leadId, 'outbound', ago(DAY)), email(leadId, 'outbound', ago(2 * DAY))]);
    const h = await health(leadId);
    expect(factor(h, 'email_engagement')).toMatchObject({ score: 0.2, contribution: 4, value: 0 });
    expect(factor(h, 'email_engagement').explanation).toContain('no reply');
    expectConsistent(h);
  });
});

describe('a new lead', () => {
  it('has no activity, no deal and nothing overdue: at risk', async () => {
    const leadId = await createLead();
    const h = await health(leadId);
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
  it('answers 404 for an unknown, trashed or foreign lead and 400 for a bad id', async () => {
    const foreign = await createLead(other);
    const trashed = await createLead();
    await t.request('DELETE', `/api/v1/leads/${trashed}`, { token: org.token });
    for (const id of [foreign, trashed, '0123456789abcdef01234567']) {
      const res = await t.request('GET', `/api/v1/leads/${id}/health`, { token: org.token });
      expect(res.status).toBe(404);
    }
    const bad = await t.request('GET', '/api/v1/leads/nope/health', { token: org.token });
    expect(bad.status).toBe(400);
  });

  it('is readable by a viewer and needs read:leads on a token', async () => {
    const leadId = await createLead();
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await health(leadId, viewer.token)).lead_id).toBe(leadId);
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await health(leadId, reader.token)).lead_id).toBe(leadId);
    const contacts = await t.createPat(org.orgId, org.ownerId, ['read:contacts']);
    const res = await t.request('GET', `/api/v1/leads/${leadId}/health`, { token: contacts.token });
    expect(res.status).toBe(403);
  });
});
