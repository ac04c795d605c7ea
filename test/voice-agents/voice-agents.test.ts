// Locks in voice agents over REST: create with defaults and read back, each bound a 400 naming its field, the language tag rule, PATCH/PUT, the active <-> paused status and its filter, name search, trash and restore, roles, telephony scopes, another organization's 404, and the lookups other areas ask.
import { describe, expect } from 'vitest';
import { activeVoiceAgent, voiceAgentFacts } from '../../tools/voice-agents/lookups.ts';
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
import { AGENT_BODY } from './kit.ts';

const PATH = '/api/v1/voice-agents';

async function create(t: TestContext, org: TestOrg, body: Partial<InputOf<'create_voice_agent'>> = {}) {
  const res = await t.request('POST', PATH, { token: org.token, body: { ...AGENT_BODY, ...body } });
  return (await readOutput(res, TOOL.create_voice_agent, 201)).voice_agent;
}

async function list(t: TestContext, org: TestOrg, query = '') {
  const res = await t.request('GET', `${PATH}?limit=100${query}`, { token: org.token });
  return (await readOutput(res, TOOL.list_voice_agents)).voice_agents.map((a) => a._id);
}

describe('creating and reading', () => {
  test('creates an active agent with the defaults and reads it back', async ({ t, org }) => {
    const created = await create(t, org, { name: '  Front desk  ', language: 'EN-us' });
    expect(created).toMatchObject({
      ...AGENT_BODY,
      name: 'Front desk',
      language: 'en-US',
      use_knowledge_base: false,
      status: 'active',
      created_by: org.ownerId,
    });
    expect(created._id).toMatch(/^[0-9a-f]{24}$/);
    const res = await t.request('GET', `${PATH}/${created._id}`, { token: org.token });
    expect((await readOutput(res, TOOL.get_voice_agent)).voice_agent).toEqual(created);
  });

  test('keeps use_knowledge_base and a paused status sent on create', async ({ t, org }) => {
    const created = await create(t, org, {
      use_knowledge_base: true,
      status: 'paused',
      language: 'zh-hant-tw',
    });
    expect(created).toMatchObject({ use_knowledge_base: true, status: 'paused', language: 'zh-Hant-TW' });
  });

  test('refuses each field out of bounds with a 400 naming it', async ({ t, org }) => {
    const cases: [string, Record<string, unknown>][] = [
      ['name', { name: ' ' }],
      ['name', { name: 'n'.repeat(201) }],
      ['instructions', { instructions: '' }],
      ['instructions', { instructions: 'i'.repeat(20_001) }],
      ['greeting', { greeting: '' }],
      ['greeting', { greeting: 'g'.repeat(1001) }],
      ['voice', { voice: '' }],
      ['voice', { voice: 'v'.repeat(101) }],
      ['language', { language: 'english please' }],
      ['language', { language: 'e' }],
      ['language', { language: `en-${'abcdefgh-'.repeat(4)}x` }],
      ['use_knowledge_base', { use_knowledge_base: 'yes' }],
      ['status', { status: 'sleeping' }],
    ];
    for (const [field, patch] of cases) {
      const res = await t.request('POST', PATH, { token: org.token, body: { ...AGENT_BODY, ...patch } });
      expect(detailFields(await readError(res, 400)), JSON.stringify(patch)).toEqual([field]);
    }
    for (const field of ['name', 'instructions', 'greeting', 'voice', 'language'] as const) {
      const { [field]: _left, ...rest } = AGENT_BODY;
      const res = await t.request('POST', PATH, { token: org.token, body: rest });
      expect(detailFields(await readError(res, 400))).toEqual([field]);
    }
    const atBounds = await create(t, org, {
      name: 'n'.repeat(200),
      instructions: 'i'.repeat(20_000),
      greeting: 'g'.repeat(1000),
      voice: 'v'.repeat(100),
    });
    expect(atBounds.instructions).toHaveLength(20_000);
  });
});

describe('changing', () => {
  test('PATCH and PUT change only the fields sent', async ({ t, org }) => {
    const created = await create(t, org);
    for (const method of ['PATCH', 'PUT'] as const) {
      const res = await t.request(method, `${PATH}/${created._id}`, {
        token: org.token,
        body: { greeting: `Hi from ${method}`, voice: 'alice', use_knowledge_base: true },
      });
      expect((await readOutput(res, TOOL.update_voice_agent)).voice_agent).toMatchObject({
        name: AGENT_BODY.name,
        instructions: AGENT_BODY.instructions,
        greeting: `Hi from ${method}`,
        voice: 'alice',
        use_knowledge_base: true,
        status: 'active',
      });
    }
    const bad = await t.request('PATCH', `${PATH}/${created._id}`, {
      token: org.token,
      body: { greeting: '' },
    });
    expect(detailFields(await readError(bad, 400))).toEqual(['greeting']);
  });

  test('pauses and resumes an agent; the list filters by status and searches by name', async ({ t, org }) => {
    const a = await create(t, org, { name: 'Alpha receptionist' });
    const b = await create(t, org, { name: 'Beta receptionist' });
    const paused = await t.request('PATCH', `${PATH}/${a._id}`, {
      token: org.token,
      body: { status: 'paused' },
    });
    expect((await readOutput(paused, TOOL.update_voice_agent)).voice_agent.status).toBe('paused');
    const pausedIds = await list(t, org, '&status=paused');
    expect(pausedIds).toContain(a._id);
    expect(pausedIds).not.toContain(b._id);
    const activeIds = await list(t, org, '&status=active');
    expect(activeIds).toContain(b._id);
    expect(activeIds).not.toContain(a._id);
    expect(await list(t, org, '&search=alpha')).toEqual([a._id]);
    const all = await list(t, org);
    expect(all.indexOf(b._id)).toBeLessThan(all.indexOf(a._id));
    const bad = await t.request('GET', `${PATH}?status=asleep`, { token: org.token });
    expect(detailFields(await readError(bad, 400))).toEqual(['status']);
    const resumed = await t.request('PATCH', `${PATH}/${a._id}`, {
      token: org.token,
      body: { status: 'active' },
    });
    expect((await readOutput(resumed, TOOL.update_voice_agent)).voice_agent.status).toBe('active');
  });
});

describe('the trash', () => {
  test('moves a deleted agent to the trash and restores it', async ({ t, org }) => {
    const agent = await create(t, org, { name: 'Trashed agent' });
    const del = await t.request('DELETE', `${PATH}/${agent._id}`, { token: org.token });
    expect((await readOutput(del, TOOL.delete_voice_agent)).message).toMatch(/trash/);
    expect((await t.request('GET', `${PATH}/${agent._id}`, { token: org.token })).status).toBe(404);
    expect(await list(t, org)).not.toContain(agent._id);
    const trash = await t.request('GET', '/api/v1/trash?limit=100', { token: org.token });
    expect((await readOutput(trash, TOOL.list_trash)).items.find((i) => i._id === agent._id)).toMatchObject({
      type: 'voice_agent',
      name: 'Trashed agent',
    });
    const restored = await t.request('POST', `/api/v1/trash/${agent._id}/restore`, { token: org.token });
    expect(restored.status).toBe(200);
    const back = await t.request('GET', `${PATH}/${agent._id}`, { token: org.token });
    expect((await readOutput(back, TOOL.get_voice_agent)).voice_agent.name).toBe('Trashed agent');
  });
});

describe('access', () => {
  test('a viewer and a member read; only a manager and up create, edit and delete', async ({ t, org }) => {
    const agent = await create(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    const member = await t.createUser(org.orgId, 'member');
    const manager = await t.createUser(org.orgId, 'manager');
    for (const who of [viewer, member]) {
      expect((await t.request('GET', PATH, { token: who.token })).status).toBe(200);
      expect((await t.request('GET', `${PATH}/${agent._id}`, { token: who.token })).status).toBe(200);
    }
    const refused = await t.request('POST', PATH, { token: viewer.token, body: AGENT_BODY });
    expect(await readError(refused, 403)).toMatchObject({ required_permission: 'voice_agents.create' });
    const byMember = await t.request('PATCH', `${PATH}/${agent._id}`, {
      token: member.token,
      body: { name: 'No' },
    });
    expect(await readError(byMember, 403)).toMatchObject({ required_permission: 'voice_agents.edit' });
    expect((await t.request('DELETE', `${PATH}/${agent._id}`, { token: member.token })).status).toBe(403);
    expect((await t.request('POST', PATH, { token: manager.token, body: AGENT_BODY })).status).toBe(201);
    expect((await t.request('DELETE', `${PATH}/${agent._id}`, { token: manager.token })).status).toBe(200);
  });

  test('read:telephony lists, write:telephony creates, and neither is a default scope', async ({
    t,
    org,
  }) => {
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:telephony']);
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:telephony', 'write:telephony']);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    expect((await t.request('GET', PATH, { token: reader.token })).status).toBe(200);
    const byReader = await t.request('POST', PATH, { token: reader.token, body: AGENT_BODY });
    expect((await readError(byReader, 403)).code).toBe('scope_missing');
    expect((await t.request('POST', PATH, { token: writer.token, body: AGENT_BODY })).status).toBe(201);
    expect((await readError(await t.request('GET', PATH, { token: leadsOnly.token }), 403)).code).toBe(
      'scope_missing',
    );
    const key = await t.request('POST', '/api/v1/settings/api-keys', {
      token: org.token,
      body: { label: 'Defaults' },
    });
    expect((await readOutput(key, TOOL.create_api_key, 201)).key.scopes).not.toContain('read:telephony');
  });

  test("answers 404 for another organization's agent and leaves it alone", async ({ t, org, other }) => {
    const agent = await create(t, org, { name: 'Private agent' });
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'Hijacked' }],
      ['PUT', { name: 'Hijacked' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await t.request(method, `${PATH}/${agent._id}`, { token: other.token, body });
      expect(res.status, method).toBe(404);
    }
    expect(await list(t, other)).not.toContain(agent._id);
    const mine = await t.request('GET', `${PATH}/${agent._id}`, { token: org.token });
    expect((await readOutput(mine, TOOL.get_voice_agent)).voice_agent.name).toBe('Private agent');
  });
});

describe('lookups', () => {
  test('voiceAgentFacts answers a live agent of the organization; activeVoiceAgent only an active one', async ({
    t,
    org,
    other,
  }) => {
    const agent = await create(t, org, { use_knowledge_base: true });
    const db = t.services.db.system;
    const facts = {
      id: agent._id,
      name: AGENT_BODY.name,
      instructions: AGENT_BODY.instructions,
      greeting: AGENT_BODY.greeting,
      voice: AGENT_BODY.voice,
      language: AGENT_BODY.language,
      useKnowledgeBase: true,
      status: 'active',
    };
    expect(await voiceAgentFacts(db, org.orgId, agent._id)).toEqual(facts);
    expect(await activeVoiceAgent(db, org.orgId, agent._id)).toEqual(facts);
    expect(await voiceAgentFacts(db, other.orgId, agent._id)).toBeNull();
    expect(await activeVoiceAgent(db, other.orgId, agent._id)).toBeNull();

    await t.request('PATCH', `${PATH}/${agent._id}`, { token: org.token, body: { status: 'paused' } });
    expect(await voiceAgentFacts(db, org.orgId, agent._id)).toEqual({ ...facts, status: 'paused' });
    expect(await activeVoiceAgent(db, org.orgId, agent._id)).toBeNull();

    await t.request('PATCH', `${PATH}/${agent._id}`, { token: org.token, body: { status: 'active' } });
    expect((await t.request('DELETE', `${PATH}/${agent._id}`, { token: org.token })).status).toBe(200);
    expect(await voiceAgentFacts(db, org.orgId, agent._id)).toBeNull();
    expect(await activeVoiceAgent(db, org.orgId, agent._id)).toBeNull();
  });
});
