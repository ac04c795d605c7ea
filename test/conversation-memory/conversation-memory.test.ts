// Locks in conversation memory over REST: the lazily created memory, the summary, commitments with strict index validation (400 for bad or out-of-range indexes), idempotent kept/missed marks, the per-lead cap, locking and access rules.
import { describe, expect } from 'vitest';
import type { Commitment } from '../../tools/conversation-memory/tables.ts';
import { markCommitmentMissed } from '../../tools/conversation-memory/tools.ts';
import {
  createLead as createLeadVia,
  detailFields,
  fileTest,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { seedConversationMemories } from './seed.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

async function createLead(t: TestContext, org: TestOrg, o: TestOrg = org): Promise<string> {
  return (await createLeadVia(t, o, { name: 'Memory Lead' }))._id;
}

const base = (leadId: string) => `/api/v1/leads/${leadId}/conversation-memory`;

async function getMemory(t: TestContext, org: TestOrg, leadId: string, token = org.token) {
  const res = await t.request('GET', base(leadId), { token });
  return (await readOutput(res, TOOL.get_conversation_memory)).conversation_memory;
}

async function addCommitment(t: TestContext, org: TestOrg, leadId: string, body: Record<string, unknown>) {
  const res = await t.request('POST', `${base(leadId)}/commitments`, { token: org.token, body });
  return (await readOutput(res, TOOL.add_commitment, 201)).conversation_memory;
}

const mark = (
  t: TestContext,
  org: TestOrg,
  leadId: string,
  index: string,
  status: 'kept' | 'missed',
  body?: unknown,
  token = org.token,
) => t.request('POST', `${base(leadId)}/commitments/${index}/${status}`, { token, body });

describe('reading and the summary', () => {
  test('reads an empty memory for a lead with nothing recorded', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    expect(await getMemory(t, org, leadId)).toEqual({
      lead_id: leadId,
      summary: null,
      commitments: [],
      updated_at: null,
    });
  });

  test('answers 404 for an unknown, trashed or foreign lead, and 400 for a bad id', async ({
    t,
    org,
    other,
  }) => {
    const foreign = await createLead(t, org, other);
    const trashed = await createLead(t, org);
    await t.request('DELETE', `/api/v1/leads/${trashed}`, { token: org.token });
    for (const leadId of [foreign, trashed, '0123456789abcdef01234567']) {
      expect((await t.request('GET', base(leadId), { token: org.token })).status).toBe(404);
      const add = await t.request('POST', `${base(leadId)}/commitments`, {
        token: org.token,
        body: { text: 'x' },
      });
      expect(add.status).toBe(404);
      expect((await mark(t, org, leadId, '0', 'missed')).status).toBe(404);
    }
    expect((await t.request('GET', base('nope'), { token: org.token })).status).toBe(400);
  });

  test('replaces and clears the summary, keeping the commitments', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    await addCommitment(t, org, leadId, { text: 'Send pricing' });
    const put = await t.request('PUT', base(leadId), {
      token: org.token,
      body: { summary: 'Wants 20 seats.' },
    });
    expect(put.status).toBe(200);
    const memory = (await readOutput(put, TOOL.update_conversation_summary)).conversation_memory;
    expect(memory.summary).toBe('Wants 20 seats.');
    expect(memory.commitments).toHaveLength(1);
    expect(memory.updated_at).not.toBeNull();
    const cleared = await t.request('PUT', base(leadId), { token: org.token, body: { summary: null } });
    expect(
      (await readOutput(cleared, TOOL.update_conversation_summary)).conversation_memory.summary,
    ).toBeNull();

    for (const body of [{}, { summary: 'x'.repeat(20_001) }, { summary: 'a\u0000b' }, { summary: 5 }]) {
      const res = await t.request('PUT', base(leadId), { token: org.token, body });
      expect(res.status).toBe(400);
      expect(detailFields(await readError(res, 400))).toContain('summary');
    }
    expect(
      (await t.request('PUT', base(leadId), { token: org.token, body: { summary: 'x'.repeat(20_000) } }))
        .status,
    ).toBe(200);
  });
});

describe('commitments', () => {
  test('appends commitments as open with their index and due time', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    const due = new Date(Date.now() + 86_400_000).toISOString();
    const first = await addCommitment(t, org, leadId, { text: '  Send the proposal  ', due_at: due });
    expect(first.commitments).toEqual([
      {
        index: 0,
        text: 'Send the proposal',
        due_at: due,
        status: 'open',
        note: null,
        created_at: expect.any(String),
        created_by: org.ownerId,
        resolved_at: null,
      },
    ]);
    const second = await addCommitment(t, org, leadId, { text: 'Intro to CTO' });
    expect(second.commitments.map((c) => [c.index, c.text, c.due_at])).toEqual([
      [0, 'Send the proposal', due],
      [1, 'Intro to CTO', null],
    ]);
    for (const body of [{}, { text: '' }, { text: 'x'.repeat(2001) }, { text: 'ok', due_at: 'friday' }]) {
      const res = await t.request('POST', `${base(leadId)}/commitments`, { token: org.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  test('validates the index: not a canonical non-negative integer or out of range is a 400 with details', async ({
    t,
    org,
  }) => {
    const leadId = await createLead(t, org);
    await addCommitment(t, org, leadId, { text: 'One' });
    await addCommitment(t, org, leadId, { text: 'Two' });
    for (const index of ['01', '-1', '1.5', 'abc', '1e1', '+1', '%20', '0x1']) {
      const res = await mark(t, org, leadId, index, 'missed', {});
      expect(res.status, index).toBe(400);
      const body = await readError(res, 400);
      expect(
        body.details?.map((d) => d.field),
        index,
      ).toEqual(['index']);
    }
    for (const index of ['2', '99999999999999999999']) {
      const res = await mark(t, org, leadId, index, 'missed', { note: 'n' });
      expect(res.status, index).toBe(400);
      const body = await readError(res, 400);
      expect(body.details).toEqual([
        {
          field: 'index',
          code: 'out_of_range',
          message: expect.stringContaining('valid indexes are 0 to 1'),
        },
      ]);
    }
    const empty = await createLead(t, org);
    const none = await mark(t, org, empty, '0', 'missed');
    expect(none.status).toBe(400);
    expect((await readError(none, 400)).details?.[0]?.message).toContain('no commitments yet');
    // An empty path segment never reaches the route; the tool itself (as MCP calls it) refuses it.
    expect(markCommitmentMissed.input.safeParse({ id: leadId, index: '' }).success).toBe(false);
    expect((await getMemory(t, org, leadId)).commitments.every((c) => c.status === 'open')).toBe(true);
  });

  test('marks one missed with a note; again keeps the first resolved_at', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    await addCommitment(t, org, leadId, { text: 'One' });
    await addCommitment(t, org, leadId, { text: 'Two' });
    const res = await mark(t, org, leadId, '1', 'missed', { note: 'Forgot to send it' });
    expect(res.status).toBe(200);
    const memory = (await readOutput(res, TOOL.mark_commitment_missed)).conversation_memory;
    expect(memory.commitments[0]?.status).toBe('open');
    const missed = memory.commitments[1];
    expect(missed).toMatchObject({ index: 1, status: 'missed', note: 'Forgot to send it' });
    expect(missed?.resolved_at).not.toBeNull();

    await new Promise((r) => setTimeout(r, 5));
    const again = await mark(t, org, leadId, '1', 'missed');
    expect(again.status).toBe(200);
    const repeat = (await readOutput(again, TOOL.mark_commitment_missed)).conversation_memory.commitments[1];
    expect(repeat).toMatchObject({
      status: 'missed',
      note: 'Forgot to send it',
      resolved_at: missed?.resolved_at,
    });

    // No body at all is fine too; a note too long or not a string is a 400.
    expect(
      (await t.request('POST', `${base(leadId)}/commitments/0/missed`, { token: org.token })).status,
    ).toBe(200);
    for (const body of [{ note: 'x'.repeat(2001) }, { note: 7 }, { extra: true }]) {
      expect((await mark(t, org, leadId, '0', 'missed', body)).status).toBe(400);
    }
  });

  test('marks one kept, and a later missed mark corrects it with a new resolved_at', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    await addCommitment(t, org, leadId, { text: 'Demo on Monday' });
    const kept = await mark(t, org, leadId, '0', 'kept', { note: 'Done' });
    expect(kept.status).toBe(200);
    const first = (await readOutput(kept, TOOL.mark_commitment_kept)).conversation_memory.commitments[0];
    expect(first).toMatchObject({ status: 'kept', note: 'Done' });
    await new Promise((r) => setTimeout(r, 5));
    const missed = await mark(t, org, leadId, '0', 'missed');
    const corrected = (await readOutput(missed, TOOL.mark_commitment_missed)).conversation_memory
      .commitments[0];
    expect(corrected).toMatchObject({ status: 'missed', note: null });
    expect(corrected?.resolved_at).not.toBe(first?.resolved_at);
  });

  test('caps a lead at 200 commitments', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    const now = new Date().toISOString();
    const full: Commitment[] = Array.from({ length: 200 }, (_, i) => ({
      text: `c${i}`,
      due_at: null,
      status: 'open',
      note: null,
      created_at: now,
      created_by: org.ownerId,
      resolved_at: null,
    }));
    await seedConversationMemories(t, org.orgId, [{ leadId, commitments: full }]);
    const res = await t.request('POST', `${base(leadId)}/commitments`, {
      token: org.token,
      body: { text: 'one more' },
    });
    expect(res.status).toBe(400);
    expect((await readError(res, 400)).details?.[0]?.code).toBe('too_many_commitments');
    expect((await mark(t, org, leadId, '199', 'kept')).status).toBe(200);
    expect((await mark(t, org, leadId, '200', 'kept')).status).toBe(400);
  });

  test('loses no commitment when many are added at once', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.request('POST', `${base(leadId)}/commitments`, {
          token: org.token,
          body: { text: `Parallel ${i}` },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    const memory = await getMemory(t, org, leadId);
    expect(memory.commitments.map((c) => c.text).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => `Parallel ${i}`).sort(),
    );
  });

  test('lowers the lead health when a commitment is missed', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    await addCommitment(t, org, leadId, { text: 'Call back' });
    const factor = async () => {
      const res = await t.request('GET', `/api/v1/leads/${leadId}/health`, { token: org.token });
      const health = (await readOutput(res, TOOL.get_lead_health)).health;
      return {
        score: health.score,
        missed: health.factors.find((f) => f.key === 'missed_commitments')?.score,
      };
    };
    const before = await factor();
    expect(before.missed).toBe(1);
    expect((await mark(t, org, leadId, '0', 'missed')).status).toBe(200);
    const after = await factor();
    expect(after.missed).toBe(0.7);
    expect(after.score).toBeLessThan(before.score);
  });
});

describe('access', () => {
  test('lets a viewer read but not write', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    await addCommitment(t, org, leadId, { text: 'Viewer test' });
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await getMemory(t, org, leadId, viewer.token)).commitments).toHaveLength(1);
    for (const res of [
      await mark(t, org, leadId, '0', 'missed', {}, viewer.token),
      await t.request('PUT', base(leadId), { token: viewer.token, body: { summary: 'x' } }),
      await t.request('POST', `${base(leadId)}/commitments`, { token: viewer.token, body: { text: 'x' } }),
    ]) {
      expect(res.status).toBe(403);
      expect(await readError(res, 403)).toMatchObject({
        error: 'Forbidden',
        required_permission: 'leads.edit',
      });
    }
  });

  test('holds a PAT to the leads scopes', async ({ t, org }) => {
    const leadId = await createLead(t, org);
    await addCommitment(t, org, leadId, { text: 'Scoped' });
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await t.request('GET', base(leadId), { token: reader.token })).status).toBe(200);
    const res = await mark(t, org, leadId, '0', 'missed', {}, reader.token);
    expect(res.status).toBe(403);
    expect((await readError(res, 403)).error).toContain('write:leads');
    const contacts = await t.createPat(org.orgId, org.ownerId, ['read:contacts', 'write:contacts']);
    expect((await t.request('GET', base(leadId), { token: contacts.token })).status).toBe(403);
  });
});
