// Locks in POST /proposal-ai/{id}/suggest-questions: without a model the rules ask about what is
// missing (budget, decision maker, timeline, unpriced sections, the deal); with a model (a local
// fake OpenAI-compatible server that checks the request) its validated answer is returned; a
// failing or malformed model answer falls back to the rules; the call writes nothing; AI_* settings
// come all three or none.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { proposals } from '../../tools/proposals/tables.ts';
import {
  createContact,
  createLead,
  createOpportunity,
  createProposal,
  createTestContext,
  outboxCount,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const suggest = (t: TestContext, org: TestOrg, id: string) =>
  t.request('POST', `/api/v1/proposal-ai/${id}/suggest-questions`, { token: org.token });

describe('without a model: the rules', () => {
  let t: TestContext;
  let org: TestOrg;
  beforeAll(async () => {
    t = await createTestContext({}, { withoutRateLimits: true });
    org = await t.createOrg();
  });
  afterAll(() => t.close());

  it('asks about budget, decision maker, timeline and the deal when they are missing, and writes nothing', async () => {
    const p = await createProposal(t, org);
    const [before] = await t.services.db.system.select().from(proposals).where(eq(proposals.id, p._id));
    const events = await outboxCount(t, org.orgId);
    const out = await readOutput(await suggest(t, org, p._id), TOOL.suggest_proposal_questions);
    expect(out.source).toBe('rules');
    const reasons = out.questions.map((q) => q.reason).join(' | ');
    expect(reasons).toContain('no priced lines');
    expect(reasons).toContain('decision maker');
    expect(reasons).toContain('no valid-until date');
    expect(reasons).toContain('not linked to an opportunity');
    const [after] = await t.services.db.system.select().from(proposals).where(eq(proposals.id, p._id));
    expect(after).toEqual(before);
    expect(await outboxCount(t, org.orgId)).toBe(events);
  });

  it('asks only about unpriced sections when prices, a decision maker, a timeline and a deal are there', async () => {
    const lead = await createLead(t, org, { name: 'Initech' });
    await createContact(t, org, { lead_id: lead._id, name: 'Bill', title: 'VP Engineering' });
    const deal = await createOpportunity(t, org, { lead_id: lead._id, expected_close_date: '2099-03-01' });
    const p = await createProposal(t, org, {
      lead_id: lead._id,
      opportunity_id: deal._id,
      valid_until: '2099-02-01',
      currency: 'USD',
      sections: [
        { heading: 'Licences', body_markdown: 'Seats' },
        { heading: 'Onboarding workshop', body_markdown: 'Two days' },
      ],
      line_items: [{ description: 'Licences for 10 seats', quantity: 10, unit_price: 20 }],
    });
    const out = await readOutput(await suggest(t, org, p._id), TOOL.suggest_proposal_questions);
    expect(out).toEqual({
      source: 'rules',
      questions: [
        {
          question: 'How would you expect "Onboarding workshop" to be priced or scoped?',
          reason: 'The section "Onboarding workshop" matches no priced line of the proposal.',
        },
      ],
    });
  });

  it('answers 404 for an unknown proposal', async () => {
    expect((await suggest(t, org, 'a'.repeat(24))).status).toBe(404);
  });
});

describe('with a model', () => {
  let t: TestContext;
  let org: TestOrg;
  let server: Server;
  let mode: 'ok' | 'fail' | 'garbage' = 'ok';
  const seen: { path: string; auth: string | undefined; body: Record<string, unknown> }[] = [];
  const CANNED = {
    questions: [
      { question: 'Who signs off on the Globex rollout?', reason: 'No contact has a decision-making title.' },
      {
        question: 'Has the pilot report been shared?',
        reason: 'An open commitment mentions the pilot report.',
      },
    ],
  };

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (chunk) => {
        text += chunk;
      });
      req.on('end', () => resolve(text));
    });

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
      seen.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      if (mode === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
        return;
      }
      const content =
        mode === 'garbage' ? 'I cannot help with that.' : `\`\`\`json\n${JSON.stringify(CANNED)}\n\`\`\``;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content } }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    t = await createTestContext(
      { AI_BASE_URL: `http://127.0.0.1:${port}/v1/`, AI_API_KEY: 'sk-test-key', AI_MODEL: 'fake-model-1' },
      { withoutRateLimits: true },
    );
    org = await t.createOrg();
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function proposalWithMemory() {
    const p = await createProposal(t, org, { title: 'Globex rollout' });
    const res = await t.request('POST', `/api/v1/leads/${p.lead_id}/conversation-memory/commitments`, {
      token: org.token,
      body: { text: 'Send the pilot report' },
    });
    expect(res.status).toBe(201);
    return p;
  }

  it('sends the proposal, lead, contacts and open commitments to the model and returns its questions', async () => {
    mode = 'ok';
    seen.length = 0;
    const p = await proposalWithMemory();
    const events = await outboxCount(t, org.orgId);
    const out = await readOutput(await suggest(t, org, p._id), TOOL.suggest_proposal_questions);
    expect(out).toEqual({ source: 'model', questions: CANNED.questions });
    expect(seen).toHaveLength(1);
    const [call] = seen;
    expect(call?.path).toBe('/v1/chat/completions');
    expect(call?.auth).toBe('Bearer sk-test-key');
    expect(call?.body.model).toBe('fake-model-1');
    const prompt = JSON.stringify(call?.body.messages);
    expect(prompt).toContain('Globex rollout');
    expect(prompt).toContain('Globex');
    expect(prompt).toContain('Hank Scorpio');
    expect(prompt).toContain('Send the pilot report');
    expect(prompt).toContain('never invent');
    expect(await outboxCount(t, org.orgId)).toBe(events);
  });

  it('falls back to the rules when the model fails or answers outside the shape', async () => {
    const p = await proposalWithMemory();
    for (const m of ['fail', 'garbage'] as const) {
      mode = m;
      const out = await readOutput(await suggest(t, org, p._id), TOOL.suggest_proposal_questions);
      expect(out.source).toBe('rules');
      expect(out.questions.length).toBeGreaterThan(0);
    }
  });
});

describe('AI settings', () => {
  it('takes AI_BASE_URL, AI_API_KEY and AI_MODEL together or not at all', () => {
    expect(loadConfig({}).ai).toBeUndefined();
    expect(() => loadConfig({ AI_BASE_URL: 'https://api.example.com/v1' })).toThrow(/must be set together/);
    const config = loadConfig({ AI_BASE_URL: 'https://api.example.com/v1/', AI_API_KEY: 'k', AI_MODEL: 'm' });
    expect(config.ai).toEqual({
      baseUrl: 'https://api.example.com/v1',
      apiKey: 'k',
      model: 'm',
      timeoutMs: 20_000,
    });
    expect(() => loadConfig({ AI_BASE_URL: 'ftp://x', AI_API_KEY: 'k', AI_MODEL: 'm' })).toThrow(
      /AI_BASE_URL/,
    );
  });
});
