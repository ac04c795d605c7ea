// Locks in phone numbers over REST: create with defaults and read back, each bound a 400 naming its field, PATCH/PUT, the default-voice-agent route (set, clear, malformed, another organization's, paused, trashed agent, unknown number), an agent deleted for good clears the reference, a deleted user's numbers go to the heir, live numbers unique across organizations (409, the trash frees one), trash and restore, roles, telephony scopes, another organization's 404, and the lookups (numberByE164 without a tenant).
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { purgeTrash } from '../../core/trash.ts';
import { TRASH_TYPES } from '../../tools/index.ts';
import { liveNumberOf, numberByE164 } from '../../tools/phone-numbers/lookups.ts';
import { voiceAgents } from '../../tools/voice-agents/tables.ts';
import {
  detailFields,
  type InputOf,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
  test,
} from '../fixtures/index.ts';
import { AGENT_BODY } from '../voice-agents/kit.ts';
import { freshNumber } from './kit.ts';

const PATH = '/api/v1/phone-numbers';

async function create(t: TestContext, org: TestOrg, body: Partial<InputOf<'create_phone_number'>> = {}) {
  const res = await t.request('POST', PATH, { token: org.token, body: { number: freshNumber(), ...body } });
  return (await readOutput(res, TOOL.create_phone_number, 201)).phone_number;
}

async function createAgent(t: TestContext, org: TestOrg, status: 'active' | 'paused' = 'active') {
  const res = await t.request('POST', '/api/v1/voice-agents', {
    token: org.token,
    body: { ...AGENT_BODY, status },
  });
  return (await readOutput(res, TOOL.create_voice_agent, 201)).voice_agent._id;
}

function setAgent(t: TestContext, org: TestOrg, id: string, agentId: unknown) {
  return t.request('PATCH', `${PATH}/${id}/default-voice-agent`, {
    token: org.token,
    body: { default_voice_agent_id: agentId },
  });
}

async function list(t: TestContext, org: TestOrg, query = '') {
  const res = await t.request('GET', `${PATH}?limit=100${query}`, { token: org.token });
  return (await readOutput(res, TOOL.list_phone_numbers)).phone_numbers.map((n) => n._id);
}

describe('creating and reading', () => {
  test('creates a number with the defaults, owned by its creator, and reads it back', async ({ t, org }) => {
    const number = freshNumber();
    const created = await create(t, org, { number: `  ${number} ` });
    expect(created).toMatchObject({
      number,
      label: null,
      capabilities: { voice: true, sms: true, whatsapp: false },
      default_voice_agent_id: null,
      forward_to: null,
      owner_id: org.ownerId,
      created_by: org.ownerId,
    });
    const res = await t.request('GET', `${PATH}/${created._id}`, { token: org.token });
    expect((await readOutput(res, TOOL.get_phone_number)).phone_number).toEqual(created);
  });

  test('keeps every field sent', async ({ t, org }) => {
    const agentId = await createAgent(t, org);
    const member = await t.createUser(org.orgId, 'member');
    const created = await create(t, org, {
      label: 'Sales line',
      capabilities: { whatsapp: true, sms: false },
      default_voice_agent_id: agentId,
      forward_to: '+442071838750',
      owner_id: member.userId,
    });
    expect(created).toMatchObject({
      label: 'Sales line',
      capabilities: { voice: true, sms: false, whatsapp: true },
      default_voice_agent_id: agentId,
      forward_to: '+442071838750',
      owner_id: member.userId,
    });
  });

  test('refuses each field out of bounds with a 400 naming it', async ({ t, org, other }) => {
    const otherUser = await t.createUser(other.orgId, 'member');
    const cases: [string, Record<string, unknown>][] = [
      ['number', { number: '14155550100' }],
      ['number', { number: '+04155550100' }],
      ['number', { number: '+123456' }],
      ['number', { number: '+1234567890123456' }],
      ['number', { number: '+1 415 555 0100' }],
      ['label', { label: 'l'.repeat(101) }],
      ['capabilities.voice', { capabilities: { voice: 'yes' } }],
      ['capabilities', { capabilities: { fax: true } }],
      ['default_voice_agent_id', { default_voice_agent_id: 'not-an-id' }],
      ['forward_to', { forward_to: '555-0100' }],
      ['owner_id', { owner_id: 'nobody' }],
      ['owner_id', { owner_id: otherUser.userId }],
    ];
    for (const [field, patch] of cases) {
      const res = await t.request('POST', PATH, {
        token: org.token,
        body: { number: freshNumber(), ...patch },
      });
      expect(detailFields(await readError(res, 400)), JSON.stringify(patch)).toEqual([field]);
    }
    const missing = await t.request('POST', PATH, { token: org.token, body: { label: 'No number' } });
    expect(detailFields(await readError(missing, 400))).toEqual(['number']);
    const atBounds = await create(t, org, { number: '+123456789012345', label: 'l'.repeat(100) });
    expect(atBounds.number).toBe('+123456789012345');
    expect((await create(t, org, { number: freshNumber(), label: '' })).label).toBeNull();
  });
});

describe('changing', () => {
  test('PATCH and PUT change only the fields sent; null clears', async ({ t, org }) => {
    const created = await create(t, org, { label: 'Before', forward_to: '+14155550123' });
    for (const method of ['PATCH', 'PUT'] as const) {
      const res = await t.request(method, `${PATH}/${created._id}`, {
        token: org.token,
        body: { label: `After ${method}`, capabilities: { whatsapp: true } },
      });
      expect((await readOutput(res, TOOL.update_phone_number)).phone_number).toMatchObject({
        number: created.number,
        label: `After ${method}`,
        capabilities: { voice: true, sms: true, whatsapp: true },
        forward_to: '+14155550123',
      });
    }
    const cleared = await t.request('PATCH', `${PATH}/${created._id}`, {
      token: org.token,
      body: { label: null, forward_to: null },
    });
    expect((await readOutput(cleared, TOOL.update_phone_number)).phone_number).toMatchObject({
      label: null,
      forward_to: null,
    });
    const bad = await t.request('PATCH', `${PATH}/${created._id}`, {
      token: org.token,
      body: { forward_to: '+0' },
    });
    expect(detailFields(await readError(bad, 400))).toEqual(['forward_to']);
  });
});

describe('the default voice agent', () => {
  test('sets an active agent of the organization and clears it with null', async ({ t, org }) => {
    const phone = await create(t, org);
    const agentId = await createAgent(t, org);
    const set = await setAgent(t, org, phone._id, agentId);
    expect((await readOutput(set, TOOL.set_phone_number_default_voice_agent)).phone_number).toMatchObject({
      _id: phone._id,
      default_voice_agent_id: agentId,
    });
    const cleared = await setAgent(t, org, phone._id, null);
    expect(
      (await readOutput(cleared, TOOL.set_phone_number_default_voice_agent)).phone_number
        .default_voice_agent_id,
    ).toBeNull();
  });

  test('refuses a missing or malformed id with a 400 naming default_voice_agent_id', async ({ t, org }) => {
    const phone = await create(t, org);
    for (const value of ['abc', 12, '0123456789abcdef0123456', true]) {
      const res = await setAgent(t, org, phone._id, value);
      expect(detailFields(await readError(res, 400)), String(value)).toEqual(['default_voice_agent_id']);
    }
    const missing = await t.request('PATCH', `${PATH}/${phone._id}/default-voice-agent`, {
      token: org.token,
      body: {},
    });
    expect(detailFields(await readError(missing, 400))).toEqual(['default_voice_agent_id']);
  });

  test("refuses another organization's, an unknown, a paused and a trashed agent alike", async ({
    t,
    org,
    other,
  }) => {
    const phone = await create(t, org);
    const foreign = await createAgent(t, other);
    const paused = await createAgent(t, org, 'paused');
    const trashed = await createAgent(t, org);
    expect((await t.request('DELETE', `/api/v1/voice-agents/${trashed}`, { token: org.token })).status).toBe(
      200,
    );
    const answers = [];
    for (const agentId of [foreign, paused, trashed, '0123456789abcdef01234567']) {
      const body = await readError(await setAgent(t, org, phone._id, agentId), 400);
      expect(detailFields(body)).toEqual(['default_voice_agent_id']);
      answers.push(JSON.stringify(body.details));
      const viaPatch = await t.request('PATCH', `${PATH}/${phone._id}`, {
        token: org.token,
        body: { default_voice_agent_id: agentId },
      });
      expect(detailFields(await readError(viaPatch, 400))).toEqual(['default_voice_agent_id']);
      const viaCreate = await t.request('POST', PATH, {
        token: org.token,
        body: { number: freshNumber(), default_voice_agent_id: agentId },
      });
      expect(detailFields(await readError(viaCreate, 400))).toEqual(['default_voice_agent_id']);
    }
    expect(new Set(answers).size).toBe(1);
    const after = await t.request('GET', `${PATH}/${phone._id}`, { token: org.token });
    expect((await readOutput(after, TOOL.get_phone_number)).phone_number.default_voice_agent_id).toBeNull();
  });

  test('answers 404 for an unknown number and for another organization’s', async ({ t, org, other }) => {
    const agentId = await createAgent(t, org);
    const unknown = await setAgent(t, org, '0123456789abcdef01234567', agentId);
    expect((await readError(unknown, 404)).message).toMatch(/Phone number not found/);
    const theirs = await create(t, other);
    expect((await setAgent(t, org, theirs._id, agentId)).status).toBe(404);
    const read = await t.request('GET', `${PATH}/${theirs._id}`, { token: other.token });
    expect((await readOutput(read, TOOL.get_phone_number)).phone_number.default_voice_agent_id).toBeNull();
  });

  test('keeps the reference when its agent is paused or trashed', async ({ t, org }) => {
    const agentId = await createAgent(t, org);
    const phone = await create(t, org, { default_voice_agent_id: agentId });
    await t.request('PATCH', `/api/v1/voice-agents/${agentId}`, {
      token: org.token,
      body: { status: 'paused' },
    });
    await t.request('DELETE', `/api/v1/voice-agents/${agentId}`, { token: org.token });
    const read = await t.request('GET', `${PATH}/${phone._id}`, { token: org.token });
    expect((await readOutput(read, TOOL.get_phone_number)).phone_number.default_voice_agent_id).toBe(agentId);
    const relabel = await t.request('PATCH', `${PATH}/${phone._id}`, {
      token: org.token,
      body: { label: 'Kept' },
    });
    expect((await readOutput(relabel, TOOL.update_phone_number)).phone_number.default_voice_agent_id).toBe(
      agentId,
    );
  });
});

describe('an agent deleted for good', () => {
  test('the trash purge clears the reference of the numbers naming it', async ({ t, org }) => {
    const agentId = await createAgent(t, org);
    const phone = await create(t, org, { default_voice_agent_id: agentId });
    expect((await t.request('DELETE', `/api/v1/voice-agents/${agentId}`, { token: org.token })).status).toBe(
      200,
    );
    const longAgo = new Date(Date.now() - 400 * 24 * 60 * 60 * 1000);
    await t.services.db.system
      .update(voiceAgents)
      .set({ deletedAt: longAgo })
      .where(eq(voiceAgents.id, agentId));
    const counts = await purgeTrash(
      t.services.db.system,
      TRASH_TYPES,
      new Date(Date.now() - 300 * 24 * 60 * 60 * 1000),
      100,
    );
    expect(counts.voice_agent).toBe(1);
    const read = await t.request('GET', `${PATH}/${phone._id}`, { token: org.token });
    expect((await readOutput(read, TOOL.get_phone_number)).phone_number.default_voice_agent_id).toBeNull();
  });
});

describe('owners', () => {
  test('deleting a user hands their numbers to the heir, or refuses without one', async ({ t, org }) => {
    const leaving = await t.createUser(org.orgId, 'member');
    const heir = await t.createUser(org.orgId, 'manager');
    const phone = await create(t, org, { owner_id: leaving.userId });
    const refused = await t.request('DELETE', `/api/v1/users/${leaving.userId}`, {
      token: org.token,
      body: {},
    });
    expect((await readError(refused, 400)).code).toBe('user_owns_records');
    const deleted = await t.request('DELETE', `/api/v1/users/${leaving.userId}`, {
      token: org.token,
      body: { transfer_to_user_id: heir.userId },
    });
    expect(deleted.status).toBe(200);
    const read = await t.request('GET', `${PATH}/${phone._id}`, { token: org.token });
    expect((await readOutput(read, TOOL.get_phone_number)).phone_number.owner_id).toBe(heir.userId);
  });
});

describe('one live number across the service', () => {
  test('a number live in one organization is a 409 naming number in another; the trash frees it', async ({
    t,
    org,
    other,
  }) => {
    const number = freshNumber();
    const mine = await create(t, org, { number });
    for (const who of [other, org]) {
      const res = await t.request('POST', PATH, { token: who.token, body: { number } });
      const body = await readError(res, 409);
      expect(detailFields(body)).toEqual(['number']);
      expect(body.message).toContain(number);
    }
    const second = await create(t, org);
    const moved = await t.request('PATCH', `${PATH}/${second._id}`, { token: org.token, body: { number } });
    expect(detailFields(await readError(moved, 409))).toEqual(['number']);

    expect((await t.request('DELETE', `${PATH}/${mine._id}`, { token: org.token })).status).toBe(200);
    const theirs = await create(t, other, { number });
    expect(theirs.number).toBe(number);
    const restore = await t.request('POST', `/api/v1/trash/${mine._id}/restore`, { token: org.token });
    expect(detailFields(await readError(restore, 409))).toEqual(['number']);
    expect((await t.request('GET', `${PATH}/${mine._id}`, { token: org.token })).status).toBe(404);
  });
});

describe('the trash', () => {
  test('moves a deleted number to the trash and restores it', async ({ t, org }) => {
    const phone = await create(t, org, { label: 'Trashed line' });
    const del = await t.request('DELETE', `${PATH}/${phone._id}`, { token: org.token });
    expect((await readOutput(del, TOOL.delete_phone_number)).message).toMatch(/trash/);
    expect((await t.request('GET', `${PATH}/${phone._id}`, { token: org.token })).status).toBe(404);
    expect(await list(t, org)).not.toContain(phone._id);
    const trash = await t.request('GET', '/api/v1/trash?limit=100', { token: org.token });
    expect((await readOutput(trash, TOOL.list_trash)).items.find((i) => i._id === phone._id)).toMatchObject({
      type: 'phone_number',
      name: phone.number,
    });
    const restored = await t.request('POST', `/api/v1/trash/${phone._id}/restore`, { token: org.token });
    expect(restored.status).toBe(200);
    const back = await t.request('GET', `${PATH}/${phone._id}`, { token: org.token });
    expect((await readOutput(back, TOOL.get_phone_number)).phone_number.label).toBe('Trashed line');
  });

  test('the list searches the number and the label', async ({ t, org }) => {
    const a = await create(t, org, { label: 'Helpdesk overflow' });
    const b = await create(t, org, { label: 'Billing' });
    expect(await list(t, org, '&search=overflow')).toEqual([a._id]);
    expect(await list(t, org, `&search=${encodeURIComponent(b.number.slice(1))}`)).toEqual([b._id]);
  });
});

describe('access', () => {
  test('a viewer and a member read; only a manager and up create, edit and delete', async ({ t, org }) => {
    const phone = await create(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    const member = await t.createUser(org.orgId, 'member');
    const manager = await t.createUser(org.orgId, 'manager');
    for (const who of [viewer, member]) {
      expect((await t.request('GET', PATH, { token: who.token })).status).toBe(200);
      expect((await t.request('GET', `${PATH}/${phone._id}`, { token: who.token })).status).toBe(200);
    }
    const refused = await t.request('POST', PATH, { token: viewer.token, body: { number: freshNumber() } });
    expect(await readError(refused, 403)).toMatchObject({ required_permission: 'phone_numbers.create' });
    const byMember = await setAgent(t, { ...org, token: member.token }, phone._id, null);
    expect(await readError(byMember, 403)).toMatchObject({ required_permission: 'phone_numbers.edit' });
    expect((await t.request('DELETE', `${PATH}/${phone._id}`, { token: member.token })).status).toBe(403);
    const byManager = await t.request('POST', PATH, {
      token: manager.token,
      body: { number: freshNumber() },
    });
    expect((await readOutput(byManager, TOOL.create_phone_number, 201)).phone_number.owner_id).toBe(
      manager.userId,
    );
    expect((await t.request('DELETE', `${PATH}/${phone._id}`, { token: manager.token })).status).toBe(200);
  });

  test('read:telephony lists, write:telephony creates, and without them a 403', async ({ t, org }) => {
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:telephony']);
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:telephony', 'write:telephony']);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    expect((await t.request('GET', PATH, { token: reader.token })).status).toBe(200);
    const byReader = await t.request('POST', PATH, { token: reader.token, body: { number: freshNumber() } });
    expect((await readError(byReader, 403)).code).toBe('scope_missing');
    expect(
      (await t.request('POST', PATH, { token: writer.token, body: { number: freshNumber() } })).status,
    ).toBe(201);
    expect((await readError(await t.request('GET', PATH, { token: leadsOnly.token }), 403)).code).toBe(
      'scope_missing',
    );
  });

  test("answers 404 for another organization's number and leaves it alone", async ({ t, org, other }) => {
    const phone = await create(t, org, { label: 'Private line' });
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { label: 'Hijacked' }],
      ['PUT', { label: 'Hijacked' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await t.request(method, `${PATH}/${phone._id}`, { token: other.token, body });
      expect(res.status, method).toBe(404);
    }
    expect(await list(t, other)).not.toContain(phone._id);
    const mine = await t.request('GET', `${PATH}/${phone._id}`, { token: org.token });
    expect((await readOutput(mine, TOOL.get_phone_number)).phone_number.label).toBe('Private line');
  });
});

describe('lookups', () => {
  test('liveNumberOf answers a live number of the organization; numberByE164 finds it without a tenant', async ({
    t,
    org,
    other,
  }) => {
    const agentId = await createAgent(t, org);
    const phone = await create(t, org, {
      default_voice_agent_id: agentId,
      forward_to: '+14155550199',
      capabilities: { whatsapp: true },
    });
    const facts = {
      id: phone._id,
      orgId: org.orgId,
      number: phone.number,
      capabilities: { voice: true, sms: true, whatsapp: true },
      defaultVoiceAgentId: agentId,
      forwardTo: '+14155550199',
      ownerId: org.ownerId,
    };
    const db = t.services.db.system;
    expect(await liveNumberOf(db, org.orgId, phone._id)).toEqual(facts);
    expect(await liveNumberOf(db, other.orgId, phone._id)).toBeNull();
    expect(await numberByE164(db, phone.number)).toEqual(facts);
    expect(await numberByE164(db, freshNumber())).toBeNull();
    expect(await numberByE164(db, 'not a number')).toBeNull();

    await t.request('DELETE', `${PATH}/${phone._id}`, { token: org.token });
    expect(await liveNumberOf(db, org.orgId, phone._id)).toBeNull();
    expect(await numberByE164(db, phone.number)).toBeNull();
    const theirs = await create(t, other, { number: phone.number });
    expect(await numberByE164(db, phone.number)).toMatchObject({ id: theirs._id, orgId: other.orgId });
  });
});
