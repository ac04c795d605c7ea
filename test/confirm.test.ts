// Locks in the one `confirm` convention over every tool that declares `sends` (taken from the
// registry): over REST the route acts unless the body says "confirm": false, which answers 200
// {sent: false, preview} and writes nothing (no mail, scheduled email, enrollment or event); over
// MCP (the official client) the tool previews unless confirm is true; the string "true" is a
// validation error naming `confirm` on both; the preview names recipients, subject, amounts and
// sender. Also: every open-world write tool either declares `sends` or says what it reaches without sending.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { sendPreviewSchema } from '../core/confirm.ts';
import { outboxEvents, outgoingMails } from '../core/db/schema.ts';
import { defineTool } from '../core/tool.ts';
import { scheduledEmails } from '../tools/email/tables.ts';
import { ROUTES, TOOLS } from '../tools/index.ts';
import { workflowEnrollments } from '../tools/workflows/tables.ts';
import {
  createEstimate,
  createInvoice,
  createLeadWithContact,
  createProposal,
  createWorkflow,
  detailFields,
  ESTIMATE_LINES,
  fileTest,
  insertConnectedAccount,
  readError,
  readJson,
  scheduleBody,
  type TestContext,
  type TestOrg,
} from './fixtures/index.ts';
import { bearer, type Connection, ERAS, envelopeOf, serveMcp } from './mcp-clients.ts';
import { createNumber, leadWithPhone, unverifiedTelephony } from './messages/kit.ts';

const test = fileTest({ plan: 'enterprise' })
  /** An MCP client of `org` with every toolset, on the file's app served over HTTP. */
  .extend('mcp', { scope: 'file' }, async ({ t, org }, { onCleanup }): Promise<Connection> => {
    const era = ERAS[0];
    if (!era) throw new Error('no MCP client era');
    const served = await serveMcp(t);
    const mcp = await era.connect(served.url, { ...bearer(org.token), 'X-MCP-Toolsets': 'all' });
    onCleanup(async () => {
      await mcp.close();
      await served.stop();
    });
    return mcp;
  });

/** A fresh call of one sending tool: its path parameters, body, and what its preview must name. */
interface Prepared {
  params: Record<string, string>;
  body: Record<string, unknown>;
  to: string;
  subject: string;
  amounts: number[];
  sender: string;
}

/** A send of a text message: the organization's telephony (unverified: the provider is unreachable here), a number, a lead. */
async function prepareMessage(t: TestContext, org: TestOrg, channel: 'sms' | 'whatsapp'): Promise<Prepared> {
  await unverifiedTelephony(t, org);
  const from = await createNumber(t, org);
  const lead = await leadWithPhone(t, org);
  const body = {
    lead_id: lead.leadId,
    to: lead.phone,
    from_phone_number_id: from.id,
    body: 'Quick question',
  };
  return {
    params: {},
    // Outside the WhatsApp window: only a template may go.
    body: channel === 'sms' ? body : { ...body, template_sid: `HX${'0'.repeat(32)}` },
    to: lead.phone,
    subject: 'Quick question',
    amounts: [],
    sender: from.number,
  };
}

/** How to set up a call of each sending tool. A sending tool without an entry fails below. */
const PREPARE: Record<string, (t: TestContext, org: TestOrg) => Promise<Prepared>> = {
  async send_invoice(t, org) {
    const { leadId, email } = await createLeadWithContact(t, org);
    const invoice = await createInvoice(t, org, { lead_id: leadId });
    return {
      params: { id: invoice._id },
      body: {},
      to: email,
      subject: 'Invoice (number on sending) from Test Org',
      amounts: [invoice.total],
      sender: t.config.mailFrom,
    };
  },
  async send_estimate(t, org) {
    const { leadId, email } = await createLeadWithContact(t, org);
    const estimate = await createEstimate(t, org, { lead_id: leadId, line_items: ESTIMATE_LINES });
    return {
      params: { id: estimate._id },
      body: {},
      to: email,
      subject: `Estimate ${estimate.number} from Test Org`,
      amounts: [estimate.total],
      sender: t.config.mailFrom,
    };
  },
  async send_proposal(t, org) {
    const proposal = await createProposal(t, org, {
      currency: 'USD',
      line_items: [{ description: 'Design', quantity: 2, unit_price: 150 }],
    });
    return {
      params: { id: proposal._id },
      body: {},
      to: 'hank@globex.test',
      subject: 'Proposal: Website redesign',
      amounts: [300],
      sender: t.config.mailFrom,
    };
  },
  async schedule_email(t, org) {
    const { leadId } = await createLeadWithContact(t, org);
    const account = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: org.ownerId },
      { host: '127.0.0.1', port: 2525, username: 'sender', password: 'sender-password' },
    );
    return {
      params: {},
      body: scheduleBody(account.id, leadId),
      to: 'hank@globex.example',
      subject: 'Our proposal',
      amounts: [],
      sender: account.email,
    };
  },
  send_sms: (t, org) => prepareMessage(t, org, 'sms'),
  send_whatsapp: (t, org) => prepareMessage(t, org, 'whatsapp'),
  async enroll_in_workflow(t, org) {
    const workflow = await createWorkflow(t, org, {
      steps: [
        {
          type: 'email',
          delay: { amount: 1, unit: 'days' },
          subject: 'Checking in',
          body_html: '<p>Hello</p>',
        },
      ],
    });
    const { leadId, email } = await createLeadWithContact(t, org);
    const account = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: org.ownerId },
      { host: '127.0.0.1', port: 2525, username: 'sender', password: 'sender-password' },
    );
    return {
      params: { id: workflow._id },
      body: { lead_id: leadId, connected_account_id: account.id },
      to: email,
      subject: 'Checking in',
      amounts: [],
      sender: account.email,
    };
  },
};

/** Everything a send could leave behind in the organization: mails, scheduled emails, enrollments, events. */
async function footprint(t: TestContext, org: TestOrg): Promise<number[]> {
  const db = t.services.db.system;
  return Promise.all([
    db.$count(outgoingMails, eq(outgoingMails.orgId, org.orgId)),
    db.$count(scheduledEmails, eq(scheduledEmails.orgId, org.orgId)),
    db.$count(workflowEnrollments, eq(workflowEnrollments.orgId, org.orgId)),
    db.$count(outboxEvents, eq(outboxEvents.orgId, org.orgId)),
  ]);
}

const grew = (before: number[], after: number[]) => after.some((n, i) => n > (before[i] ?? 0));

const previewAnswer = z.strictObject({ sent: z.literal(false), preview: sendPreviewSchema.strict() });
const actedAnswer = z.looseObject({ sent: z.literal(true) });

function expectNames(preview: z.output<typeof sendPreviewSchema>, call: Prepared): void {
  expect(preview.to).toEqual([call.to]);
  expect(preview.subject).toBe(call.subject);
  expect(preview.amounts.map((a) => a.amount)).toEqual(call.amounts);
  expect(preview.sender).toContain(call.sender);
  expect(preview.action.length).toBeGreaterThan(10);
}

const SENDING = TOOLS.filter((tool) => tool.sends);

describe('which tools follow the convention', () => {
  test('finds the sending tools in the registry', () => {
    expect(SENDING.map((tool) => tool.name).sort()).toEqual(Object.keys(PREPARE).sort());
  });

  test('makes every open-world write declare `sends`, or say what it reaches without sending', () => {
    const undeclared = TOOLS.filter(
      (tool) =>
        tool.annotations.openWorldHint &&
        tool.access.kind === 'write' &&
        !tool.sends &&
        !tool.reachesWithoutSending,
    ).map((tool) => tool.name);
    expect(undeclared).toEqual([]);
    const quiet = {
      name: 'ping_thing',
      title: 'Ping a thing',
      description: 'Reaches an outside system and sends nothing to a person.',
      input: z.strictObject({}),
      output: z.object({}),
      access: { kind: 'write' as const, resource: null, permission: null },
      annotations: { openWorldHint: true },
      async handler() {
        return {};
      },
    };
    expect(() => defineTool(quiet)).toThrow(/declares `sends` or says in `reachesWithoutSending`/);
    expect(defineTool({ ...quiet, reachesWithoutSending: 'pings the organization’s own server' }).name).toBe(
      'ping_thing',
    );
  });

  test('refuses a tool with a `confirm` field of its own and no `sends` declaration', () => {
    const [sample] = SENDING;
    if (!sample) throw new Error('no sending tool');
    expect(() =>
      defineTool({
        name: 'send_thing',
        title: 'Send a thing',
        description: 'Sends a thing, with a confirm convention of its own.',
        input: z.strictObject({ confirm: z.boolean().optional().describe('Whether to send') }),
        output: sample.output,
        access: { kind: 'write', resource: null, permission: null },
        annotations: { openWorldHint: true },
        async handler() {
          return { sent: true };
        },
      }),
    ).toThrow(/does not declare `sends`/);
  });
});

describe.each(SENDING.map((tool) => ({ name: tool.name, tool })))('$name', ({ name, tool }) => {
  const route = ROUTES.find((r) => r.tool === tool);
  const prepare = PREPARE[name];
  const pathOf = (params: Record<string, string>) =>
    `/api/v1${(route?.path ?? '').replace(/:(\w+)/g, (_m, key: string) => params[key] ?? '')}`;
  const rest = (t: TestContext, org: TestOrg, call: Prepared, extra: Record<string, unknown>) =>
    t.request('POST', pathOf(call.params), { token: org.token, body: { ...call.body, ...extra } });
  const viaMcp = (mcp: Connection, call: Prepared, extra: Record<string, unknown>) =>
    mcp.callTool(name, { ...call.body, ...call.params, ...extra });
  const ready = async (t: TestContext, org: TestOrg): Promise<Prepared> => {
    if (!prepare) throw new Error(`${name} sends but test/confirm.test.ts has no PREPARE entry for it`);
    return prepare(t, org);
  };

  test('has a POST route and states the rule in its description', () => {
    expect(route?.method).toBe('POST');
    expect(tool.description).toContain('over MCP nothing is sent unless `confirm` is true');
    expect(tool.description).toContain('"confirm": false');
  });

  test('REST with "confirm": false answers 200 {sent: false, preview} and writes nothing', async ({
    t,
    org,
  }) => {
    const call = await ready(t, org);
    const before = await footprint(t, org);
    const res = await rest(t, org, call, { confirm: false });
    expect(res.status).toBe(200);
    const body = await readJson(res, previewAnswer);
    expectNames(body.preview, call);
    expect(await footprint(t, org)).toEqual(before);
  });

  test('REST refuses the string "true" with a 400 naming confirm, and writes nothing', async ({ t, org }) => {
    const call = await ready(t, org);
    const before = await footprint(t, org);
    const error = await readError(await rest(t, org, call, { confirm: 'true' }), 400);
    expect(error.code).toBe('validation_failed');
    expect(detailFields(error)).toEqual(['confirm']);
    expect(await footprint(t, org)).toEqual(before);
  });

  test('REST keeps a preview under an Idempotency-Key and replays it, still writing nothing', async ({
    t,
    org,
  }) => {
    const call = await ready(t, org);
    const before = await footprint(t, org);
    const send = () =>
      t.request('POST', pathOf(call.params), {
        token: org.token,
        body: { ...call.body, confirm: false },
        headers: { 'idempotency-key': `preview-${name}` },
      });
    const first = await send();
    expect(first.status).toBe(200);
    const replay = await send();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await readJson(replay, previewAnswer)).toEqual(await readJson(first, previewAnswer));
    expect(await footprint(t, org)).toEqual(before);
  });

  test('REST without confirm acts', async ({ t, org }) => {
    const call = await ready(t, org);
    const before = await footprint(t, org);
    const res = await rest(t, org, call, {});
    expect(res.status).toBe(route?.status);
    await readJson(res, actedAnswer);
    expect(grew(before, await footprint(t, org))).toBe(true);
  });

  test('MCP without confirm (or with false) previews the same and writes nothing', async ({
    t,
    org,
    mcp,
  }) => {
    const call = await ready(t, org);
    const before = await footprint(t, org);
    for (const extra of [{}, { confirm: false }]) {
      const result = await viaMcp(mcp, call, extra);
      expect(result.isError ?? false).toBe(false);
      expectNames(previewAnswer.parse(result.structuredContent).preview, call);
    }
    expect(await footprint(t, org)).toEqual(before);
  });

  test('MCP refuses the string "true" naming confirm, and acts with true', async ({ t, org, mcp }) => {
    const call = await ready(t, org);
    const before = await footprint(t, org);
    const refused = await viaMcp(mcp, call, { confirm: 'true' });
    expect(refused.isError).toBe(true);
    const envelope = envelopeOf(refused);
    expect(envelope.code).toBe('validation_failed');
    expect(envelope.details?.map((d) => d.field)).toEqual(['confirm']);
    expect(await footprint(t, org)).toEqual(before);

    const acted = await viaMcp(mcp, call, { confirm: true });
    expect(acted.isError ?? false).toBe(false);
    actedAnswer.parse(acted.structuredContent);
    expect(grew(before, await footprint(t, org))).toBe(true);
  });
});
