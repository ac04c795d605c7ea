// Locks in the proposal mail: a send queues one mail through the outbox (key proposal:<id>:send:<n>)
// that a real SMTP peer receives with the link to the public page, the link opens the page and
// takes the answer; a resend is a new mail with a new link; proposal.sent names the mail, never the link.
import { and, eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outgoingMails } from '../../core/db/schema.ts';
import { InProcessQueue } from '../../core/queue-in-process.ts';
import {
  createProposal,
  createTestContext,
  eventsOf,
  fileTest,
  sendProposal,
  type TestContext,
} from '../fixtures/index.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

// The SMTP peer starts first: the file's context mails through it, so `t` is overridden to read its URL.
const test = fileTest()
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the peer has none.
  .extend('peer', { scope: 'file' }, async ({}, { onCleanup }) => {
    const peer = await startSmtpPeer();
    onCleanup(() => peer.close());
    return peer;
  });
test.override('t', { scope: 'file' }, async ({ peer }, { onCleanup }) => {
  const t = await createTestContext(
    {
      SMTP_URL: peer.url,
      MAIL_FROM: 'Acme Sales <sales@acme.example>',
      PUBLIC_BASE_URL: 'https://crm.acme.example',
    },
    { withWorkers: true, withoutRateLimits: true },
  );
  onCleanup(() => t.close());
  return t;
});
test.override('org', { scope: 'file' }, async ({ t }) => t.createOrg({ name: 'Acme' }));

async function workersIdle(t: TestContext): Promise<void> {
  const jobs = t.services.jobs;
  if (!(jobs instanceof InProcessQueue)) throw new Error('these tests drive the in-process queue');
  await jobs.idle();
}

const mailsTo = (peer: SmtpPeer, address: string) =>
  peer.received.filter((mail) => {
    const to = Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : [];
    return to.some((a) => a.value.some((v) => v.address === address));
  });

describe('the proposal mail', () => {
  test('mails the link once per send; the link opens the page and takes the answer', async ({
    t,
    org,
    peer,
  }) => {
    const p = await createProposal(t, org, { title: 'Fleet renewal', valid_until: '2099-06-30' });
    const first = await sendProposal(t, org, p._id, { to: 'buyer@globex.example' });
    expect(first.public_url).toMatch(/^https:\/\/crm\.acme\.example\/p\/[A-Za-z0-9_-]{43}$/);
    await workersIdle(t);
    const [mail] = mailsTo(peer, 'buyer@globex.example');
    expect(mail?.subject).toBe('Proposal: Fleet renewal');
    expect(mail?.text).toContain(first.public_url);
    expect(mail?.text).toContain('valid until 2099-06-30');

    const rows = await t.services.db.system
      .select()
      .from(outgoingMails)
      .where(and(eq(outgoingMails.subjectType, 'proposal'), eq(outgoingMails.subjectId, p._id)));
    expect(rows.map((r) => [r.key, r.status])).toEqual([[`proposal:${p._id}:send:1`, 'sent']]);
    const [sentEvent] = await eventsOf(t, p._id, org.orgId);
    expect(sentEvent?.event).toBe('proposal.sent');
    expect(sentEvent?.data.mail_id).toBe(rows[0]?.id);
    expect(JSON.stringify(sentEvent)).not.toContain(first.token);

    const second = await sendProposal(t, org, p._id, { to: 'buyer@globex.example' });
    await workersIdle(t);
    expect(
      mailsTo(peer, 'buyer@globex.example').map((m) => m.text?.includes(second.public_url ?? '-')),
    ).toEqual([false, true]);

    const path = new URL(second.public_url ?? '').pathname;
    expect((await t.request('GET', path)).status).toBe(200);
    const accepted = await t.request('POST', `${path}/accept`, {
      body: { name: 'Buyer', email: 'buyer@globex.example' },
    });
    expect(accepted.status).toBe(200);
  });
});
