// Locks in the inbound email hook: Mailgun-style signatures (bad, missing, stale or replayed -> 401), unknown tokens (404), malformed bodies (400 naming fields), one record per Message-ID, matching the sender to a contact's lead, threading by In-Reply-To, unknown senders, email.received, the emailReceived hooks in the recording transaction, and the public 60/min limit.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import type { EmailReceivedHook, InboundEmailFacts } from '../../core/area.ts';
import { outboxEvents } from '../../core/db/schema.ts';
import { activities } from '../../tools/activities/tables.ts';
import { type InboundMail, recordInboundEmail } from '../../tools/connected-accounts/inbound-store.ts';
import { getOwnAccount } from '../../tools/connected-accounts/store.ts';
import { inboundEmails, inboundTokens } from '../../tools/connected-accounts/tables.ts';
import { insertScheduledEmail } from '../../tools/email/schedule.ts';
import { scheduledEmails } from '../../tools/email/tables.ts';
import {
  createConnectedAccount,
  createContact,
  createLead,
  createTestContext,
  detailFields,
  fileTest,
  inboundTokenOf,
  postInbound,
  readError,
  readOutput,
  signedInbound,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true } }).extend(
  'account',
  { scope: 'file' },
  async ({ t, org }) => createConnectedAccount(t, org, { email: 'sales@example.com' }),
);

const received = async (res: Response) => {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const body: unknown = JSON.parse(text);
  if (typeof body !== 'object' || body === null || !('status' in body)) throw new Error(text);
  return body as { status: string; inbound_email_id?: string };
};

const inboundRow = async (t: TestContext, id: string) => {
  const [row] = await t.services.db.system.select().from(inboundEmails).where(eq(inboundEmails.id, id));
  if (!row) throw new Error(`no inbound email ${id}`);
  return row;
};

const eventsNamed = async (t: TestContext, org: TestOrg, name: string) =>
  (
    await t.services.db.system
      .select({ event: outboxEvents.event, data: outboxEvents.data })
      .from(outboxEvents)
      .where(eq(outboxEvents.orgId, org.orgId))
  ).filter((e) => e.event === name);

describe('signed requests', () => {
  test('records a mail from a contact as an incoming email activity on its lead, and emits email.received', async ({
    t,
    org,
    account,
  }) => {
    const lead = await createLead(t, org, { name: 'Customer Inc' });
    const contact = await createContact(t, org, {
      lead_id: lead._id,
      name: 'Jane Doe',
      emails: [{ email: 'Jane.Doe@Customer.example', type: 'office' }],
    });
    const body = await received(
      await postInbound(t, account, {
        from: 'Jane Doe <jane.doe@customer.example>',
        to: 'Sam <sales@example.com>, team@example.com',
        subject: 'Re: our offer',
        text: 'Sounds good.',
        message_id: '<first-reply@mail.customer.example>',
      }),
    );
    expect(body.status).toBe('received');
    const row = await inboundRow(t, body.inbound_email_id ?? '');
    expect(row).toMatchObject({
      connectedAccountId: account._id,
      fromAddress: 'jane.doe@customer.example',
      leadId: lead._id,
      contactId: contact._id,
      messageId: '<first-reply@mail.customer.example>',
      repliesToEmailId: null,
    });
    const [activity] = await t.services.db.system
      .select()
      .from(activities)
      .where(eq(activities.id, row.activityId ?? ''));
    expect(activity).toMatchObject({
      leadId: lead._id,
      contactId: contact._id,
      type: 'email',
      userId: org.ownerId,
    });
    expect(activity?.fields).toMatchObject({
      direction: 'inbound',
      subject: 'Re: our offer',
      body_text: 'Sounds good.',
      from: 'jane.doe@customer.example',
      to: ['sales@example.com', 'team@example.com'],
    });
    const [event] = (await eventsNamed(t, org, 'email.received')).filter(
      (e) => e.data.inbound_email_id === row.id,
    );
    expect(event?.data).toMatchObject({
      connected_account_id: account._id,
      lead_id: lead._id,
      contact_id: contact._id,
      from: 'jane.doe@customer.example',
      subject: 'Re: our offer',
      message_id: '<first-reply@mail.customer.example>',
      in_reply_to: null,
      replies_to_email_id: null,
      activity_id: row.activityId,
    });

    // The owner sees it in the account's list.
    const list = await t.request('GET', `/api/v1/connected-accounts/${account._id}/inbound-emails`, {
      token: org.token,
    });
    const listed = (await readOutput(list, TOOL.list_inbound_emails)).inbound_emails;
    expect(listed.find((m) => m._id === row.id)).toMatchObject({
      lead_id: lead._id,
      activity_id: row.activityId,
    });
  });

  test('matches the most recently updated live contact when several have the address', async ({
    t,
    org,
    account,
  }) => {
    const first = await createContact(t, org, {
      emails: [{ email: 'shared@customer.example', type: 'office' }],
    });
    const second = await createContact(t, org, {
      emails: [{ email: 'shared@customer.example', type: 'office' }],
    });
    const touched = await t.request('PATCH', `/api/v1/contacts/${first._id}`, {
      token: org.token,
      body: { title: 'Buyer' },
    });
    expect(touched.status).toBe(200);
    const body = await received(await postInbound(t, account, { from: 'shared@customer.example' }));
    expect((await inboundRow(t, body.inbound_email_id ?? '')).contactId).toBe(first._id);
    const gone = await t.request('DELETE', `/api/v1/contacts/${first._id}`, { token: org.token });
    expect(gone.status).toBe(200);
    const again = await received(await postInbound(t, account, { from: 'shared@customer.example' }));
    expect((await inboundRow(t, again.inbound_email_id ?? '')).contactId).toBe(second._id);
  });

  test('ignores a repeated Message-ID: 200 duplicate, one row, one activity, one event', async ({
    t,
    org,
    account,
  }) => {
    await createContact(t, org, { emails: [{ email: 'repeat@customer.example', type: 'office' }] });
    const mail = { from: 'repeat@customer.example', message_id: '<same-message@customer.example>' };
    const first = await received(await postInbound(t, account, mail));
    expect(first.status).toBe('received');
    const second = await received(await postInbound(t, account, { ...mail, subject: 'changed' }));
    expect(second).toEqual({ status: 'duplicate' });
    const rows = await t.services.db.system
      .select()
      .from(inboundEmails)
      .where(eq(inboundEmails.messageId, mail.message_id));
    expect(rows).toHaveLength(1);
    const leadActivities = await t.services.db.system
      .select()
      .from(activities)
      .where(eq(activities.leadId, rows[0]?.leadId ?? ''));
    expect(leadActivities.filter((a) => a.type === 'email')).toHaveLength(1);
    expect(
      (await eventsNamed(t, org, 'email.received')).filter((e) => e.data.message_id === mail.message_id),
    ).toHaveLength(1);
  });

  test('threads a reply by In-Reply-To and files it on that lead even from an unknown address', async ({
    t,
    org,
    account,
  }) => {
    const lead = await createLead(t, org, { name: 'Threaded Ltd' });
    const now = new Date();
    const sent = await t.services.db.withTenant(org.orgId, (tx) =>
      insertScheduledEmail(
        tx,
        org.orgId,
        {
          userId: org.ownerId,
          connectedAccountId: account._id,
          leadId: lead._id,
          contactId: null,
          to: 'buyer@threaded.example',
          subject: 'Our offer',
          bodyHtml: '<p>Offer</p>',
          scheduledAt: now,
        },
        now,
      ),
    );
    await t.services.db.system
      .update(scheduledEmails)
      .set({ status: 'sent', sentAt: now, messageId: '<offer-1@example.com>' })
      .where(eq(scheduledEmails.id, sent.id));
    const body = await received(
      await postInbound(t, account, {
        from: 'assistant@elsewhere.example',
        in_reply_to: '<offer-1@example.com>',
      }),
    );
    const row = await inboundRow(t, body.inbound_email_id ?? '');
    expect(row).toMatchObject({ repliesToEmailId: sent.id, leadId: lead._id, contactId: null });
    expect(row.activityId).not.toBeNull();
    const [event] = (await eventsNamed(t, org, 'email.received')).filter(
      (e) => e.data.inbound_email_id === row.id,
    );
    expect(event?.data).toMatchObject({ replies_to_email_id: sent.id, in_reply_to: '<offer-1@example.com>' });
  });

  test('records a mail from an unknown sender without an activity, its event with lead_id null', async ({
    t,
    org,
    account,
  }) => {
    const body = await received(await postInbound(t, account, { from: 'stranger@nowhere.example' }));
    const row = await inboundRow(t, body.inbound_email_id ?? '');
    expect(row).toMatchObject({ leadId: null, contactId: null, activityId: null });
    const [event] = (await eventsNamed(t, org, 'email.received')).filter(
      (e) => e.data.inbound_email_id === row.id,
    );
    expect(event?.data).toMatchObject({ lead_id: null, contact_id: null, activity_id: null });
  });

  test('uses the text of an HTML-only mail and "(no subject)" for an empty subject on the activity', async ({
    t,
    org,
    account,
  }) => {
    await createContact(t, org, { emails: [{ email: 'html@customer.example', type: 'office' }] });
    const body = await received(
      await postInbound(t, account, {
        from: 'html@customer.example',
        subject: '',
        text: undefined,
        html: '<p>Hello <b>there</b></p><script>x()</script>',
      }),
    );
    const row = await inboundRow(t, body.inbound_email_id ?? '');
    const [activity] = await t.services.db.system
      .select()
      .from(activities)
      .where(eq(activities.id, row.activityId ?? ''));
    expect(activity?.fields).toMatchObject({ subject: '(no subject)', body_text: 'Hello there' });
  });
});

describe('refused requests', () => {
  const count = async (t: TestContext) => (await t.services.db.system.select().from(inboundEmails)).length;

  test('answers 401 for a wrong signature or a key of another account, recording nothing', async ({
    t,
    org,
    account,
  }) => {
    const before = await count(t);
    const other = await createConnectedAccount(t, org);
    const wrongKey = await t.request('POST', `/hooks/email/${inboundTokenOf(account)}`, {
      body: signedInbound(other.inbound_signing_key),
    });
    expect((await readError(wrongKey, 401)).error).toBe('Invalid signature');
    const tampered = signedInbound(account.inbound_signing_key);
    tampered.token = `${String(tampered.token)}x`;
    const res = await t.request('POST', `/hooks/email/${inboundTokenOf(account)}`, { body: tampered });
    expect(res.status).toBe(401);
    expect(await count(t)).toBe(before);
  });

  test('answers 401 for a timestamp more than 5 minutes away, either way, and accepts one within', async ({
    t,
    account,
  }) => {
    const now = Math.floor(Date.now() / 1000);
    for (const timestamp of [now - 301, now + 301]) {
      const res = await postInbound(t, account, {}, { timestamp });
      expect((await readError(res, 401)).message).toMatch(/5 minutes/);
    }
    expect((await postInbound(t, account, {}, { timestamp: now - 240 })).status).toBe(200);
  });

  test('answers a plain 404 for an unknown or rotated token, whatever the body', async ({
    t,
    org,
    account,
  }) => {
    const unknown = await t.request('POST', `/hooks/email/${'A'.repeat(43)}`, {
      body: signedInbound(account.inbound_signing_key),
    });
    expect(await readError(unknown, 404)).toEqual({ error: 'Not found' });
    expect((await t.request('POST', '/hooks/email/short', { body: {} })).status).toBe(404);
    const rotating = await createConnectedAccount(t, org);
    const rotated = await t.request(
      'POST',
      `/api/v1/connected-accounts/${rotating._id}/rotate-inbound-secret`,
      {
        token: org.token,
      },
    );
    const fresh = (await readOutput(rotated, TOOL.rotate_inbound_secret)).connected_account;
    expect((await postInbound(t, rotating)).status).toBe(404);
    expect((await postInbound(t, { ...rotating, inbound_url: fresh.inbound_url })).status).toBe(401);
    expect((await postInbound(t, fresh)).status).toBe(200);
  });

  test('answers 401 when the signature fields are missing or malformed, like a bad signature, recording nothing', async ({
    t,
    account,
  }) => {
    const before = await count(t);
    const unsigned = await t.request('POST', `/hooks/email/${inboundTokenOf(account)}`, {
      body: { from: 'a@b.example' },
    });
    expect((await readError(unsigned, 401)).error).toBe('Invalid signature');
    const malformed = { ...signedInbound(account.inbound_signing_key), signature: 'not hex' };
    const res = await t.request('POST', `/hooks/email/${inboundTokenOf(account)}`, { body: malformed });
    expect((await readError(res, 401)).error).toBe('Invalid signature');
    expect(await count(t)).toBe(before);
  });

  test('answers 401 to a replayed request (its token seen in the last 10 minutes), recording nothing', async ({
    t,
    account,
  }) => {
    const body = signedInbound(account.inbound_signing_key, {
      message_id: '<replayed-original@mail.customer.example>',
    });
    const path = `/hooks/email/${inboundTokenOf(account)}`;
    expect((await t.request('POST', path, { body })).status).toBe(200);
    const before = await count(t);
    // The same signed envelope carrying another mail: the captured signature still holds, the token does not.
    const forged = { ...body, message_id: '<forged@mail.customer.example>', subject: 'Please stop' };
    expect((await readError(await t.request('POST', path, { body: forged }), 401)).message).toMatch(
      /already received/,
    );
    expect((await readError(await t.request('POST', path, { body }), 401)).error).toBe('Invalid signature');
    expect(await count(t)).toBe(before);
  });

  test('refuses two concurrent deliveries of one signed request but one (the unique index decides)', async ({
    t,
    account,
  }) => {
    const before = await count(t);
    const body = signedInbound(account.inbound_signing_key);
    const path = `/hooks/email/${inboundTokenOf(account)}`;
    const statuses = await Promise.all(
      [0, 1, 2].map((i) =>
        t.request('POST', path, { body: { ...body, message_id: `<race-${i}@mail.customer.example>` } }),
      ),
    );
    expect(statuses.map((r) => r.status).sort()).toEqual([200, 401, 401]);
    expect(await count(t)).toBe(before + 1);
  });

  test('forgets tokens after 10 minutes: old rows are deleted as new requests arrive', async ({
    t,
    org,
    account,
  }) => {
    const row = await getOwnAccount(t.services.db.system, org.orgId, org.ownerId, account._id);
    if (!row) throw new Error('no account');
    const longAgo = new Date(Date.now() - 11 * 60_000);
    await t.services.db.system
      .insert(inboundTokens)
      .values({ orgId: org.orgId, connectedAccountId: account._id, token: 'old-token', seenAt: longAgo });
    expect((await postInbound(t, account)).status).toBe(200);
    const left = await t.services.db.system
      .select()
      .from(inboundTokens)
      .where(eq(inboundTokens.token, 'old-token'));
    expect(left).toEqual([]);
  });

  test('answers 400 (never a 500 the provider would retry for ever) to a lone surrogate in a signed body', async ({
    t,
    account,
  }) => {
    const before = await count(t);
    const body = JSON.stringify(signedInbound(account.inbound_signing_key, { subject: 'Re: x' })).replace(
      '"Re: x"',
      '"Re: \\ud800"',
    );
    const res = await t.request('POST', `/hooks/email/${inboundTokenOf(account)}`, {
      body,
      headers: { 'content-type': 'application/json' },
    });
    const error = await readError(res, 400);
    expect(error.details?.[0]).toMatchObject({ field: 'subject', code: 'lone_surrogate' });
    expect(await count(t)).toBe(before);
  });

  test('answers 400 naming the fields of a malformed body once it is signed', async ({ t, account }) => {
    const res = await postInbound(t, account, {
      from: 'not an address',
      to: 'x@y.example, nope',
      subject: 's'.repeat(999),
      message_id: '',
    });
    expect(detailFields(await readError(res, 400))).toEqual(
      expect.arrayContaining(['from', 'to', 'subject', 'message_id']),
    );
    const notJson = await t.request('POST', `/hooks/email/${inboundTokenOf(account)}`, {
      body: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect((await readError(notJson, 400)).code).toBe('invalid_json');
  });
});

describe('emailReceived hooks', () => {
  const mail = (messageId: string): InboundMail => ({
    fromAddress: 'hooked@customer.example',
    toAddresses: ['sales@example.com'],
    to: 'sales@example.com',
    subject: 'Hooked',
    bodyText: null,
    messageId,
    inReplyTo: null,
    inReplyToIds: [],
  });

  test('runs each hook in order in the recording transaction with the facts, once per Message-ID', async ({
    t,
    org,
    account,
  }) => {
    const row = await getOwnAccount(t.services.db.system, org.orgId, org.ownerId, account._id);
    if (!row) throw new Error('no account');
    const seen: string[] = [];
    let facts: InboundEmailFacts | undefined;
    const hooks: EmailReceivedHook[] = [
      async (ctx, email) => {
        facts = email;
        // The recording is visible inside the same transaction.
        const [own] = await ctx.db
          .select()
          .from(inboundEmails)
          .where(eq(inboundEmails.id, email.inboundEmailId));
        seen.push(`first:${own?.messageId}`);
      },
      async () => void seen.push('second'),
    ];
    const now = new Date();
    const outcome = await recordInboundEmail(
      t.services,
      row,
      mail('<hooked-1@x.example>'),
      hooks,
      now,
      'hook-token-1',
    );
    expect(seen).toEqual(['first:<hooked-1@x.example>', 'second']);
    expect(facts).toEqual({
      inboundEmailId: outcome.status === 'received' ? outcome.inboundEmailId : '',
      connectedAccountId: account._id,
      accountUserId: org.ownerId,
      leadId: null,
      contactId: null,
      fromAddress: 'hooked@customer.example',
      messageId: '<hooked-1@x.example>',
      inReplyTo: null,
      repliesToEmailId: null,
      receivedAt: now,
    });
    expect(
      await recordInboundEmail(t.services, row, mail('<hooked-1@x.example>'), hooks, now, 'hook-token-2'),
    ).toEqual({
      status: 'duplicate',
    });
    expect(seen).toHaveLength(2);
  });

  test("rolls the recording back when a hook fails, so the provider's retry records it", async ({
    t,
    org,
    account,
  }) => {
    const row = await getOwnAccount(t.services.db.system, org.orgId, org.ownerId, account._id);
    if (!row) throw new Error('no account');
    const failing: EmailReceivedHook = async () => {
      throw new Error('hook failed');
    };
    await expect(
      recordInboundEmail(t.services, row, mail('<hooked-2@x.example>'), [failing], new Date(), 'retried'),
    ).rejects.toThrow('hook failed');
    const rows = await t.services.db.system
      .select()
      .from(inboundEmails)
      .where(eq(inboundEmails.messageId, '<hooked-2@x.example>'));
    expect(rows).toHaveLength(0);
    // The same request again (same token): the rolled-back attempt left no token behind.
    const retried = await recordInboundEmail(
      t.services,
      row,
      mail('<hooked-2@x.example>'),
      [],
      new Date(),
      'retried',
    );
    expect(retried.status).toBe('received');
  });
});

describe('rate limit', () => {
  test('allows 60 inbound requests a minute per IP, the 61st is a 429', async () => {
    const limited = await createTestContext({ TRUST_PROXY: '1' });
    try {
      const path = `/hooks/email/${'B'.repeat(43)}`;
      const headers = { 'x-forwarded-for': '203.0.113.78' };
      for (let i = 0; i < 60; i++) {
        expect((await limited.request('POST', path, { body: {}, headers })).status).toBe(404);
      }
      const refused = await limited.request('POST', path, { body: {}, headers });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).not.toBeNull();
    } finally {
      await limited.close();
    }
  });
});
