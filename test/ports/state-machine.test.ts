// Locks in the state machines: every declared move of every machine in STATE_MACHINES succeeds over REST and writes its event, every other move is the 400 invalid_transition envelope naming the field and changes nothing, and a bad declaration fails at definition.
import { createHash, randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxEvents } from '../../core/db/schema.ts';
import { type EventName, isEventName } from '../../core/events.ts';
import { defineStateMachine, describeMoves, type StateMachine } from '../../core/state-machine.ts';
import { sendScheduledEmail } from '../../tools/email/sender.ts';
import { scheduledEmails } from '../../tools/email/tables.ts';
import { expireEstimates } from '../../tools/estimates/jobs.ts';
import { estimates } from '../../tools/estimates/tables.ts';
import { STATE_MACHINES } from '../../tools/index.ts';
import { proposals } from '../../tools/proposals/tables.ts';
import { insertConnectedAccount } from '../fixtures/email.ts';
import { createTestContext, json, type TestContext, type TestOrg } from '../helpers.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

let t: TestContext;
let org: TestOrg;

beforeAll(async () => {
  t = await createTestContext({}, { withoutRateLimits: true });
  // pro: estimates need the plan feature `estimates`, the project machine's routes `projects`.
  org = await t.createOrg({ plan: 'pro' });
});
afterAll(() => t.close());

/** How the test reaches one machine's records over REST: create one in the initial state, move it, read it. */
interface RestDriver {
  /** The input field the move sends, which the 400 must name. */
  field: string;
  create(): Promise<string>;
  move(id: string, to: string): Promise<Response>;
  read(id: string): Promise<Record<string, unknown>>;
  stateOf(record: Record<string, unknown>): string;
  /** States no request can keep (a paid invoice takes no payment): their same-state move is not tried. */
  noSameState?: readonly string[];
  /**
   * States only a background job moves to (an expired estimate): `move` runs the job, and refused
   * moves into them are not tried, since no request can ask for them.
   */
  jobOnly?: readonly string[];
}

async function createLead(): Promise<string> {
  const res = await t.request('POST', '/api/v1/leads', { token: org.token, body: { name: 'Acme' } });
  expect(res.status).toBe(201);
  return (await json<{ lead: { _id: string } }>(res)).lead._id;
}

async function createAt(path: string, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.request('POST', path, { token: org.token, body });
  expect(res.status).toBe(201);
  const record = (await json<Record<string, { _id: string }>>(res))[key];
  if (!record) throw new Error(`POST ${path} answered no ${key}`);
  return record._id;
}

async function readAt(path: string, key: string): Promise<Record<string, unknown>> {
  const res = await t.request('GET', path, { token: org.token });
  expect(res.status).toBe(200);
  const record = (await json<Record<string, Record<string, unknown>>>(res))[key];
  if (!record) throw new Error(`GET ${path} answered no ${key}`);
  return record;
}

// One driver per machine, keyed by its resource: a machine added to STATE_MACHINES without a driver fails below.
const DRIVERS: Record<string, RestDriver> = {
  opportunity: {
    field: 'status',
    create: async () => createAt('/api/v1/opportunities', 'opportunity', { lead_id: await createLead() }),
    move: (id, to) =>
      t.request('PATCH', `/api/v1/opportunities/${id}`, { token: org.token, body: { status: to } }),
    read: (id) => readAt(`/api/v1/opportunities/${id}`, 'opportunity'),
    stateOf: (record) => String(record.status),
  },
  task: {
    field: 'is_complete',
    create: () => createAt('/api/v1/tasks', 'task', { text: 'Call back' }),
    move: (id, to) =>
      t.request('PATCH', `/api/v1/tasks/${id}`, {
        token: org.token,
        body: { is_complete: to === 'complete' },
      }),
    read: (id) => readAt(`/api/v1/tasks/${id}`, 'task'),
    stateOf: (record) => (record.is_complete === true ? 'complete' : 'open'),
  },
  invoice: {
    field: 'status',
    create: async () =>
      createAt('/api/v1/invoices', 'invoice', {
        lead_id: await createLead(),
        currency: 'USD',
        line_items: [{ description: 'Work', quantity: 1, unit_price: 10 }],
      }),
    move: (id, to) => moveInvoice(id, to),
    read: (id) => readAt(`/api/v1/invoices/${id}`, 'invoice'),
    stateOf: (record) => String(record.status),
    noSameState: ['paid'],
  },
  estimate: {
    field: 'status',
    create: async () =>
      createAt('/api/v1/estimates', 'estimate', {
        lead_id: await createLead(),
        currency: 'USD',
        line_items: [{ description: 'Work', quantity: 1, unit_price: 10 }],
      }),
    move: (id, to) => moveEstimate(id, to),
    read: (id) => readAt(`/api/v1/estimates/${id}`, 'estimate'),
    stateOf: (record) => String(record.status),
    jobOnly: ['expired'],
  },
  project: {
    field: 'status',
    create: () => createAt('/api/v1/projects', 'project', { name: 'Website', currency: 'USD' }),
    move: (id, to) =>
      t.request('PATCH', `/api/v1/projects/${id}`, { token: org.token, body: { status: to } }),
    read: (id) => readAt(`/api/v1/projects/${id}`, 'project'),
    stateOf: (record) => String(record.status),
  },
  proposal: {
    field: 'status',
    create: async () =>
      createAt('/api/v1/proposals', 'proposal', {
        lead_id: await createLead(),
        title: 'Offer',
        sections: [{ heading: 'Scope', body_markdown: 'Work' }],
      }),
    move: (id, to) => moveProposal(id, to),
    read: (id) => readAt(`/api/v1/proposals/${id}`, 'proposal'),
    stateOf: (record) => String(record.status),
    // A resend issues a new link (proposal.sent again); an answer is given once.
    noSameState: ['sent', 'accepted', 'declined'],
  },
  workflow: {
    field: 'status',
    create: () =>
      createAt('/api/v1/workflows', 'workflow', {
        name: 'Nurture',
        steps: [{ type: 'task', delay: { amount: 1, unit: 'days' }, text: 'Call' }],
      }),
    move: (id, to) =>
      t.request('POST', `/api/v1/workflows/${id}/${to === 'active' ? 'activate' : 'pause'}`, {
        token: org.token,
      }),
    read: (id) => readAt(`/api/v1/workflows/${id}`, 'workflow'),
    stateOf: (record) => String(record.status),
  },
  'scheduled email': {
    field: 'status',
    create: async () => {
      const account = await emailAccount();
      const res = await t.request('POST', '/api/v1/email/schedule', {
        token: org.token,
        body: {
          to: 'lead@example.test',
          subject: 'Hello',
          body_html: '<p>Hi</p>',
          connected_account_id: account,
          lead_id: await createLead(),
          scheduled_at: new Date(Date.now() + 120_000).toISOString(),
        },
      });
      expect(res.status).toBe(200);
      return (await json<{ job_id: string }>(res)).job_id;
    },
    move: (id, to) => moveScheduledEmail(id, to),
    read: (id) => readAt(`/api/v1/email/scheduled/${id}`, 'scheduled_email'),
    stateOf: (record) => String(record.status),
    // Only cancelling is a request; the sender's moves are the job's (tools/email/sender.ts).
    jobOnly: ['scheduled', 'sending', 'sent', 'failed'],
  },
};

// The scheduled-email sender needs an SMTP server: a peer started on first use, refusing one address.
const BUSY_ADDRESS = 'busy@example.test';
let smtpPeer: SmtpPeer | undefined;
let smtpAccount: string | undefined;
afterAll(async () => {
  await smtpPeer?.close();
});

async function emailAccount(): Promise<string> {
  if (smtpAccount) return smtpAccount;
  smtpPeer = await startSmtpPeer({ refuse: (address) => address === BUSY_ADDRESS });
  const account = await insertConnectedAccount(
    t,
    { orgId: org.orgId, userId: org.ownerId },
    { host: smtpPeer.host, port: smtpPeer.port, username: 'u', password: 'p' },
  );
  smtpAccount = account.id;
  return account.id;
}

/**
 * Moves a scheduled email: cancelling is the DELETE route; the sender's moves run the 'email.send'
 * handler with a clock past every due time (sending is a claim left by a sender that died; back to
 * scheduled is a refused recipient's retry; failed is a missing attachment).
 */
async function moveScheduledEmail(id: string, to: string): Promise<Response> {
  if (to === 'cancelled') return t.request('DELETE', `/api/v1/email/scheduled/${id}`, { token: org.token });
  const later = new Date(Date.now() + 86_400_000);
  const set = (values: Partial<typeof scheduledEmails.$inferInsert>) =>
    t.services.db.system.update(scheduledEmails).set(values).where(eq(scheduledEmails.id, id));
  if (to === 'sending') await set({ status: 'sending', attempts: 1, nextAttemptAt: new Date() });
  else {
    if (to === 'scheduled') await set({ toAddress: BUSY_ADDRESS });
    if (to === 'failed')
      await set({
        attachments: [
          { filename: 'x.pdf', content_type: 'application/pdf', storage_key: 'gone/x.pdf', size_bytes: 1 },
        ],
      });
    await sendScheduledEmail(t.services, id, { now: later });
  }
  return new Response('{}', { status: 200 });
}

/** The request that moves an estimate to `to`; expired is the daily job's, run with a clock past valid_until. */
async function moveEstimate(id: string, to: string): Promise<Response> {
  const base = `/api/v1/estimates/${id}`;
  if (to === 'draft') return t.request('PATCH', base, { token: org.token, body: {} });
  if (to === 'sent')
    return t.request('POST', `${base}/send`, { token: org.token, body: { to: 'a@example.test' } });
  if (to === 'accepted') return t.request('POST', `${base}/accept`, { token: org.token });
  if (to === 'declined') return t.request('POST', `${base}/decline`, { token: org.token });
  await t.services.db.system.update(estimates).set({ validUntil: '2030-01-01' }).where(eq(estimates.id, id));
  await expireEstimates(t.services, new Date('2030-01-02T00:10:00Z'), org.orgId);
  return new Response(null, { status: 200 });
}

/** The public link of each proposal the driver sent (or planted, for a proposal never sent). */
const proposalTokens = new Map<string, string>();

/**
 * The request that moves a proposal to `to`: edit (draft), send, answer on the public page with its
 * token, or withdraw (expired). A proposal never sent gets a token planted in its row, so an answer
 * to a draft reaches the machine (and its refusal) like any other.
 */
async function moveProposal(id: string, to: string): Promise<Response> {
  const base = `/api/v1/proposals/${id}`;
  if (to === 'draft') return t.request('PATCH', base, { token: org.token, body: {} });
  if (to === 'expired') return t.request('POST', `${base}/expire`, { token: org.token });
  if (to === 'sent') {
    const res = await t.request('POST', `${base}/send`, {
      token: org.token,
      body: { to: 'lead@example.test' },
    });
    if (res.status === 200) {
      const sent = await json<{ public_url: string }>(res.clone());
      proposalTokens.set(id, sent.public_url.split('/p/')[1] ?? '');
    }
    return res;
  }
  let token = proposalTokens.get(id);
  if (token === undefined) {
    token = randomBytes(32).toString('base64url');
    await t.services.db.system
      .update(proposals)
      .set({ publicTokenHash: createHash('sha256').update(token).digest('hex') })
      .where(eq(proposals.id, id));
    proposalTokens.set(id, token);
  }
  const body = to === 'accepted' ? { name: 'Ann', email: 'ann@example.test' } : {};
  return t.request('POST', `/p/${token}/${to === 'accepted' ? 'accept' : 'decline'}`, { body });
}

/** The request that moves an invoice to `to`: its own route, or an edit (which needs a draft). */
async function moveInvoice(id: string, to: string): Promise<Response> {
  const base = `/api/v1/invoices/${id}`;
  if (to === 'draft') return t.request('PATCH', base, { token: org.token, body: {} });
  if (to === 'open') return t.request('POST', `${base}/finalize`, { token: org.token });
  if (to === 'void') return t.request('POST', `${base}/void`, { token: org.token });
  if (to === 'uncollectible') return t.request('POST', `${base}/mark-uncollectible`, { token: org.token });
  const due = Number((await readAt(base, 'invoice')).amount_due);
  return t.request('POST', `${base}/payments`, { token: org.token, body: { amount: due > 0 ? due : 1 } });
}

function driverOf(machine: StateMachine): RestDriver {
  const driver = DRIVERS[machine.resource];
  if (!driver) throw new Error(`no REST driver for the ${machine.resource} state machine in this test`);
  return driver;
}

/** The outbox events of one record, oldest first. */
async function eventsOf(id: string): Promise<string[]> {
  const rows = await t.services.db.system
    .select({ event: outboxEvents.event })
    .from(outboxEvents)
    .where(and(eq(outboxEvents.orgId, org.orgId), sql`${outboxEvents.data}->>'_id' = ${id}`))
    .orderBy(outboxEvents.createdAt, outboxEvents.id);
  return rows.map((r) => r.event);
}

/** The shortest chain of allowed moves from the initial state to `target` (breadth first). */
function pathTo(machine: StateMachine, target: string): string[] {
  const previous = new Map<string, string | null>([[machine.initial, null]]);
  const queue = [machine.initial];
  for (let state = queue.shift(); state !== undefined; state = queue.shift()) {
    for (const next of machine.allowedFrom(state)) {
      if (previous.has(next)) continue;
      previous.set(next, state);
      queue.push(next);
    }
  }
  if (!previous.has(target))
    throw new Error(`${machine.resource}: ${target} is unreachable from ${machine.initial}`);
  const path: string[] = [];
  for (
    let state: string | null | undefined = target;
    state !== machine.initial;
    state = previous.get(state)
  ) {
    if (state === null || state === undefined) break;
    path.unshift(state);
  }
  return path;
}

/** A new record of the machine brought to `state` through REST moves. */
async function recordIn(machine: StateMachine, state: string): Promise<string> {
  const driver = driverOf(machine);
  const id = await driver.create();
  for (const step of pathTo(machine, state))
    expect([200, 201]).toContain((await driver.move(id, step)).status);
  expect(driver.stateOf(await driver.read(id))).toBe(state);
  return id;
}

/** Events any move of the machine emits: the ones a move must not write unless it is its own. */
function moveEvents(machine: StateMachine): Set<EventName> {
  const events = new Set<EventName>();
  for (const from of machine.states) {
    for (const to of machine.allowedFrom(from)) {
      const event = machine.eventOf(from, to);
      if (event !== null) events.add(event);
    }
  }
  return events;
}

const pairs = (machine: StateMachine) =>
  machine.states.flatMap((from) => machine.states.filter((to) => to !== from).map((to) => ({ from, to })));

describe.each(STATE_MACHINES.map((machine) => ({ name: machine.resource, machine })))(
  'the $name state machine over REST',
  ({ machine }) => {
    const allowed = pairs(machine).filter(({ from, to }) => machine.allowedFrom(from).includes(to));
    const refused = pairs(machine).filter(
      ({ from, to }) => !machine.allowedFrom(from).includes(to) && !driverOf(machine).jobOnly?.includes(to),
    );

    it('has a REST driver whose moves send the field the machine names', () => {
      expect(driverOf(machine).field).toBe(machine.field);
    });

    it.each(allowed)('moves $from -> $to and writes its event', async ({ from, to }) => {
      const driver = driverOf(machine);
      const id = await recordIn(machine, from);
      const before = (await eventsOf(id)).length;
      const res = await driver.move(id, to);
      // 201 where the move records something new (an invoice payment).
      expect([200, 201]).toContain(res.status);
      expect(driver.stateOf(await driver.read(id))).toBe(to);
      const written = (await eventsOf(id)).slice(before);
      const event = machine.eventOf(from, to);
      expect(written.filter((e) => isEventName(e) && moveEvents(machine).has(e))).toEqual(
        event === null ? [] : [event],
      );
    });

    it.each(refused)(
      'refuses $from -> $to with the 400 envelope and changes nothing',
      async ({ from, to }) => {
        const driver = driverOf(machine);
        const id = await recordIn(machine, from);
        const before = { record: await driver.read(id), events: await eventsOf(id) };
        const res = await driver.move(id, to);
        expect(res.status).toBe(400);
        const message = `${from} -> ${to} is not allowed; allowed: ${machine.allowedFrom(from).join(', ') || 'none'}`;
        expect(await json(res)).toEqual({
          error: 'Invalid transition',
          code: 'invalid_transition',
          message,
          details: [{ field: machine.field, message, code: 'invalid_transition' }],
        });
        expect(await driver.read(id)).toEqual(before.record);
        expect(await eventsOf(id)).toEqual(before.events);
      },
    );

    it.each(machine.states.filter((state) => !driverOf(machine).noSameState?.includes(state)))(
      'accepts the same-state move %s -> %s as a no-op without an event',
      async (state) => {
        const driver = driverOf(machine);
        const id = await recordIn(machine, state);
        const events = await eventsOf(id);
        expect((await driver.move(id, state)).status).toBe(200);
        expect(driver.stateOf(await driver.read(id))).toBe(state);
        expect(await eventsOf(id)).toEqual(events);
      },
    );
  },
);

describe('the declared machines', () => {
  it('are the invoice, opportunity, project, proposal and estimate status and the task completion, with the documented moves', () => {
    expect(STATE_MACHINES.map((m) => `${m.resource}: ${describeMoves(m)}`)).toEqual([
      'opportunity: active -> won (opportunity.won), lost (opportunity.lost); won -> active; lost -> active',
      'invoice: draft -> open; open -> paid (invoice.paid), void, uncollectible; paid (final); void (final); uncollectible -> paid (invoice.paid), void',
      'project: active -> on_hold, completed, archived; on_hold -> active, completed, archived; completed -> active, archived; archived -> active',
      'proposal: draft -> sent (proposal.sent), expired; sent -> accepted (proposal.accepted), declined (proposal.declined), expired; accepted (final); declined (final); expired (final)',
      'task: open -> complete (task.completed); complete -> open',
      'estimate: draft -> sent, expired; sent -> accepted, declined, expired; accepted (final); declined (final); expired (final)',
      'scheduled email: scheduled -> sending, cancelled; sending -> scheduled, sent (email.sent), failed (email.sent); sent (final); failed (final); cancelled (final)',
      'workflow: active -> paused; paused -> active',
    ]);
  });

  it('reach every state from the initial one', () => {
    for (const machine of STATE_MACHINES) {
      for (const state of machine.states) expect(() => pathTo(machine, state)).not.toThrow();
    }
  });
});

describe('defineStateMachine', () => {
  // The states of the next issue's invoices: a worked example of a machine with final states.
  const invoice = defineStateMachine({
    resource: 'invoice',
    field: 'status',
    states: ['draft', 'open', 'paid', 'void', 'uncollectible'],
    initial: 'draft',
    moves: {
      draft: { open: null },
      open: { paid: 'invoice.paid', void: null, uncollectible: null },
      uncollectible: { paid: 'invoice.paid', void: null },
    },
  });

  it('answers allowedFrom, eventOf and assertMove from the declaration', () => {
    expect(invoice.allowedFrom('open')).toEqual(['paid', 'void', 'uncollectible']);
    expect(invoice.allowedFrom('paid')).toEqual([]);
    expect(invoice.eventOf('open', 'paid')).toBe('invoice.paid');
    expect(invoice.eventOf('draft', 'open')).toBeNull();
    expect(invoice.eventOf('paid', 'paid')).toBeNull();
    expect(() => invoice.assertMove('void', 'void')).not.toThrow();
    expect(() => invoice.eventOf('paid', 'open')).toThrow('paid -> open is not allowed; allowed: none');
    expect(() => invoice.assertMove('draft', 'paid')).toThrow('draft -> paid is not allowed; allowed: open');
    expect(invoice.isState('paid')).toBe(true);
    expect(invoice.isState('sent')).toBe(false);
    expect(describeMoves(invoice)).toBe(
      'draft -> open; open -> paid (invoice.paid), void, uncollectible; paid (final); void (final); ' +
        'uncollectible -> paid (invoice.paid), void',
    );
  });

  // Declarations typed with plain strings get past the compiler; the definition check still refuses them.
  const states: string[] = ['a', 'b'];

  it('throws on an unknown state in moves, on either side', () => {
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states, initial: 'a', moves: { a: { c: null } } }),
    ).toThrow('state machine x: moves a to unknown state c');
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states, initial: 'a', moves: { c: { a: null } } }),
    ).toThrow('state machine x: moves from unknown state c');
  });

  it('throws on a same-state move, an unknown initial state and duplicate or missing states', () => {
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states, initial: 'a', moves: { a: { a: null } } }),
    ).toThrow('declares the same-state move a -> a');
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states, initial: 'c', moves: {} }),
    ).toThrow('initial state c is not one of its states');
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states: ['a', 'a'], initial: 'a', moves: {} }),
    ).toThrow('declares a state twice');
    expect(() =>
      defineStateMachine({
        resource: 'x',
        field: 'status',
        states: states.slice(2),
        initial: 'a',
        moves: {},
      }),
    ).toThrow('declares no state');
  });

  it('refuses an event outside the catalogue, in the types and at definition', () => {
    expect(() =>
      defineStateMachine({
        resource: 'x',
        field: 'status',
        states: ['a', 'b'],
        initial: 'a',
        // @ts-expect-error: invoice.refunded is not in core/events.ts's catalogue
        moves: { a: { b: 'invoice.refunded' } },
      }),
    ).toThrow('move a -> b emits invoice.refunded, outside the catalogue');
  });

  it('refuses unknown literal states in the types', () => {
    expect(() =>
      defineStateMachine({
        resource: 'x',
        field: 'status',
        states: ['a', 'b'],
        initial: 'a',
        // @ts-expect-error: c is not one of the declared states
        moves: { a: { c: null } },
      }),
    ).toThrow('moves a to unknown state c');
    expect(() =>
      defineStateMachine({
        resource: 'x',
        field: 'status',
        states: ['a'],
        // @ts-expect-error: the initial state must be one of the states too
        initial: 'z',
        moves: {},
      }),
    ).toThrow('initial state z');
  });
});
