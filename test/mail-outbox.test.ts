// Locks in the mail outbox (core/mail-outbox.ts, core/mail-send.ts, core/mail-scrub.ts): a mail queued twice under one key is one row and one message; a job run twice (even at once) sends once; a failure is retried after its backoff and three failures end `failed` with the reason; a crashed sender's claim is taken over after its lease; a lost wake-up is found by the sweeper; and the message reaches a real SMTP peer with its PDF attachment and a Message-ID derived from the row; the content of old sent or failed mail is scrubbed, its history kept.
import { eq } from 'drizzle-orm';
import type { ParsedMail } from 'mailparser';
import { describe, expect } from 'vitest';
import { type OutgoingMailRow, outgoingMails } from '../core/db/schema.ts';
import { SENDER_LEASE } from '../core/leased-rows.ts';
import {
  mailsAbout,
  outgoingMessageId,
  type QueueMailInput,
  queueMail,
  wakeMail,
} from '../core/mail-outbox.ts';
import { scrubOldMail } from '../core/mail-scrub.ts';
import { sendQueuedMail, sweepDueMails } from '../core/mail-send.ts';
import { renderDocumentPdf } from '../core/pdf.ts';
import { InProcessQueue } from '../core/queue-in-process.ts';
import { harnessTest } from './fixtures/harness-test.ts';
import { createTestContext, type TestContext, type TestOrg } from './fixtures/index.ts';
import { type SmtpPeer, startSmtpPeer } from './support/smtp-peer.ts';

/** Recipients the peer refuses (a 451 "try again later"), to make attempts fail. */
const refused = new Set<string>();
/** An SMTP peer, and a context whose workers send to it. */
async function startMailPeer(): Promise<{
  t: TestContext;
  org: TestOrg;
  peer: SmtpPeer;
  close(): Promise<void>;
}> {
  const peer = await startSmtpPeer({ refuse: (address) => refused.has(address) });
  const t = await createTestContext(
    { SMTP_URL: peer.url, MAIL_FROM: 'Acme Billing <billing@acme.example>' },
    { withWorkers: true },
  );
  const org = await t.createOrg();
  return {
    t,
    org,
    peer,
    async close() {
      await t.close();
      await peer.close();
    },
  };
}

const test = harnessTest(startMailPeer);

let seq = 0;
function input(org: TestOrg, overrides: Partial<QueueMailInput> = {}): QueueMailInput {
  seq += 1;
  return {
    orgId: org.orgId,
    key: `test:${seq}`,
    subject: { type: 'invoice', id: `subject-${seq}` },
    message: {
      to: `buyer${seq}@globex.example`,
      subject: `Outbox test ${seq}`,
      text: `Message ${seq}`,
    },
    ...overrides,
  };
}

function queue(t: TestContext, value: QueueMailInput) {
  return t.services.db.withTenant(value.orgId, (tx) => queueMail(tx, value));
}

async function row(t: TestContext, id: string): Promise<OutgoingMailRow> {
  const [found] = await t.services.db.system.select().from(outgoingMails).where(eq(outgoingMails.id, id));
  if (!found) throw new Error(`no outgoing mail ${id}`);
  return found;
}

function receivedWithSubject(peer: SmtpPeer, subject: string): ParsedMail[] {
  return peer.received.filter((mail) => mail.subject === subject);
}

/** Waits for the in-process workers to finish what is ready (no clock involved). */
async function workersIdle(t: TestContext): Promise<void> {
  const jobs = t.services.jobs;
  if (!(jobs instanceof InProcessQueue)) throw new Error('these tests drive the in-process queue');
  await jobs.idle();
}

const minutes = (n: number) => n * 60_000;

describe('mail outbox', () => {
  test('delivers a woken mail to the SMTP peer with its PDF attachment and a Message-ID of the row', async ({
    t,
    org,
    harness,
  }) => {
    const pdf = await renderDocumentPdf({
      title: 'Invoice',
      number: 'INV-000001',
      status: 'open',
      seller: { name: 'Acme', lines: [] },
      buyer: { name: 'Globex', lines: [] },
      dates: [],
      currency: 'EUR',
      lines: [],
      totals: [{ label: 'Total', amount: 10, emphasis: true }],
    });
    const value = input(org);
    value.message = {
      ...value.message,
      html: '<p>Please find the invoice attached.</p>',
      attachments: [{ filename: 'INV-000001.pdf', contentType: 'application/pdf', content: pdf }],
    };
    const { id, created } = await queue(t, value);
    expect(created).toBe(true);
    expect((await row(t, id)).status).toBe('queued');
    await wakeMail(t.services, id);
    await workersIdle(t);

    const sent = await row(t, id);
    expect(sent.status).toBe('sent');
    expect(sent.attempts).toBe(1);
    expect(sent.sentAt).toBeInstanceOf(Date);
    expect(sent.messageId).toBe(outgoingMessageId(id, 'billing@acme.example'));
    expect(sent.messageId).toBe(`<outgoing-mail-${id}@acme.example>`);

    const [mail, ...others] = receivedWithSubject(harness.peer, value.message.subject);
    expect(others).toHaveLength(0);
    expect(mail?.messageId).toBe(sent.messageId);
    expect(mail?.text?.trim()).toBe(`Message ${seq}`);
    expect(mail?.from?.value[0]?.address).toBe('billing@acme.example');
    const attachment = mail?.attachments[0];
    expect(attachment?.filename).toBe('INV-000001.pdf');
    expect(attachment?.contentType).toBe('application/pdf');
    expect(attachment?.content.equals(pdf)).toBe(true);

    const summaries = await t.services.db.withTenant(org.orgId, (tx) =>
      mailsAbout(tx, org.orgId, value.subject),
    );
    expect(summaries).toEqual([
      { id, status: 'sent', attempts: 1, last_error: null, sent_at: expect.any(String) },
    ]);
  });

  test('keeps one row and sends one mail for a key queued and woken twice', async ({ t, org, harness }) => {
    const value = input(org);
    const first = await queue(t, value);
    const second = await queue(t, { ...value, message: { ...value.message, text: 'A different body' } });
    expect(second).toEqual({ id: first.id, created: false });
    const rows = await t.services.db.system
      .select()
      .from(outgoingMails)
      .where(eq(outgoingMails.key, value.key));
    expect(rows).toHaveLength(1);
    await wakeMail(t.services, first.id);
    await wakeMail(t.services, second.id);
    await workersIdle(t);
    expect(receivedWithSubject(harness.peer, value.message.subject)).toHaveLength(1);
    expect(receivedWithSubject(harness.peer, value.message.subject)[0]?.text?.trim()).toBe(`Message ${seq}`);
  });

  test('keys are per organization: another organization may use the same key', async ({ t, org }) => {
    const other = await t.createOrg();
    const value = input(org);
    const mine = await queue(t, value);
    const theirs = await queue(t, { ...value, orgId: other.orgId });
    expect(theirs.created).toBe(true);
    expect(theirs.id).not.toBe(mine.id);
  });

  test('sends once when the job runs twice, even at the same time', async ({ t, org, harness }) => {
    const value = input(org);
    const { id } = await queue(t, value);
    const outcomes = await Promise.all([sendQueuedMail(t.services, id), sendQueuedMail(t.services, id)]);
    expect(outcomes.sort()).toEqual(['sent', 'skipped']);
    expect(await sendQueuedMail(t.services, id)).toBe('skipped');
    expect(receivedWithSubject(harness.peer, value.message.subject)).toHaveLength(1);
    expect((await row(t, id)).attempts).toBe(1);
  });

  test('retries a failed attempt after its backoff, then sends', async ({ t, org, harness }) => {
    const value = input(org);
    const to = String(value.message.to);
    refused.add(to);
    const { id } = await queue(t, value);
    const start = new Date();
    expect(await sendQueuedMail(t.services, id, { now: start })).toBe('retry');
    const failed = await row(t, id);
    expect(failed.status).toBe('queued');
    expect(failed.attempts).toBe(1);
    expect(failed.lastError).toContain('try again later');
    expect(failed.nextAttemptAt?.getTime()).toBe(start.getTime() + minutes(1));
    // Not due yet: nothing happens.
    expect(await sendQueuedMail(t.services, id, { now: new Date(start.getTime() + 1000) })).toBe('skipped');
    expect((await row(t, id)).attempts).toBe(1);

    refused.delete(to);
    expect(await sendQueuedMail(t.services, id, { now: new Date(start.getTime() + minutes(1)) })).toBe(
      'sent',
    );
    const sent = await row(t, id);
    expect(sent.status).toBe('sent');
    expect(sent.attempts).toBe(2);
    expect(sent.lastError).toBeNull();
    expect(receivedWithSubject(harness.peer, value.message.subject)).toHaveLength(1);
    expect(receivedWithSubject(harness.peer, value.message.subject)[0]?.messageId).toBe(sent.messageId);
  });

  test('marks a mail failed with the reason after three failed attempts', async ({ t, org, harness }) => {
    const value = input(org);
    refused.add(String(value.message.to));
    const { id } = await queue(t, value);
    const start = Date.now();
    expect(await sendQueuedMail(t.services, id, { now: new Date(start) })).toBe('retry');
    expect(await sendQueuedMail(t.services, id, { now: new Date(start + minutes(1)) })).toBe('retry');
    expect((await row(t, id)).nextAttemptAt?.getTime()).toBe(start + minutes(1) + minutes(5));
    expect(await sendQueuedMail(t.services, id, { now: new Date(start + minutes(6)) })).toBe('failed');
    const failed = await row(t, id);
    expect(failed.status).toBe('failed');
    expect(failed.attempts).toBe(3);
    expect(failed.lastError).toMatch(/refused|rejected|try again later/i);
    expect(failed.nextAttemptAt).toBeNull();
    expect(await sendQueuedMail(t.services, id, { now: new Date(start + minutes(60)) })).toBe('skipped');
    expect(receivedWithSubject(harness.peer, value.message.subject)).toHaveLength(0);
  });

  test("takes over a crashed sender's claim once its lease expires, never before", async ({
    t,
    org,
    harness,
  }) => {
    const value = input(org);
    const { id } = await queue(t, value);
    const claimedAt = Date.now();
    // A worker claimed attempt 1 and died without recording anything.
    await t.services.db.system
      .update(outgoingMails)
      .set({ status: 'sending', attempts: 1, nextAttemptAt: new Date(claimedAt + SENDER_LEASE.leaseMs) })
      .where(eq(outgoingMails.id, id));
    expect(await sendQueuedMail(t.services, id, { now: new Date(claimedAt + 1000) })).toBe('skipped');
    expect(await sendQueuedMail(t.services, id, { now: new Date(claimedAt + SENDER_LEASE.leaseMs) })).toBe(
      'sent',
    );
    expect((await row(t, id)).attempts).toBe(2);
    expect(receivedWithSubject(harness.peer, value.message.subject)).toHaveLength(1);
  });

  test('marks failed (outcome unknown) a claim that expired during the last attempt', async ({
    t,
    org,
    harness,
  }) => {
    const value = input(org);
    const { id } = await queue(t, value);
    await t.services.db.system
      .update(outgoingMails)
      .set({ status: 'sending', attempts: 3, nextAttemptAt: new Date(Date.now() - 1000) })
      .where(eq(outgoingMails.id, id));
    expect(await sendQueuedMail(t.services, id)).toBe('skipped');
    const failed = await row(t, id);
    expect(failed.status).toBe('failed');
    expect(failed.lastError).toContain('outcome unknown');
    expect(receivedWithSubject(harness.peer, value.message.subject)).toHaveLength(0);
  });

  test('re-wakes a due mail whose wake-up was lost, through the sweeper', async ({ t, org, harness }) => {
    const value = input(org);
    const { id } = await queue(t, value);
    // No wakeMail: the job is lost (a restart of the in-process queue). Not yet past the grace: left alone.
    expect(await sweepDueMails(t.services, minutes(10))).toBe(0);
    await workersIdle(t);
    expect((await row(t, id)).status).toBe('queued');
    // Past the grace the sweeper enqueues it and the workers send it.
    expect(
      await sweepDueMails(t.services, minutes(10), new Date(Date.now() + minutes(11))),
    ).toBeGreaterThanOrEqual(1);
    await workersIdle(t);
    expect((await row(t, id)).status).toBe('sent');
    expect(receivedWithSubject(harness.peer, value.message.subject)).toHaveLength(1);
  });
});

describe('retention (core/mail-scrub.ts)', () => {
  test('scrubs the bodies and attachments of mail sent or failed before the retention, keeping its history, and leaves queued mail whole', async ({
    t,
    org,
  }) => {
    const pdf = {
      filename: 'doc.pdf',
      contentType: 'application/pdf',
      content: Buffer.from('%PDF-1.4 test'),
    };
    const sent = input(org, {
      message: { ...input(org).message, html: '<p>link /p/raw-token</p>', attachments: [pdf] },
    });
    const failed = input(org);
    const recent = input(org);
    const waiting = input(org);
    const ids = await Promise.all([sent, failed, recent, waiting].map((v) => queue(t, v).then((r) => r.id)));
    const [sentId, failedId, recentId, waitingId] = ids as [string, string, string, string];
    const old = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
    await t.services.db.system
      .update(outgoingMails)
      .set({ status: 'sent', sentAt: old, updatedAt: old, messageId: '<kept@acme.example>' })
      .where(eq(outgoingMails.id, sentId));
    await t.services.db.system
      .update(outgoingMails)
      .set({ status: 'failed', lastError: 'mailbox full', updatedAt: old })
      .where(eq(outgoingMails.id, failedId));
    await t.services.db.system
      .update(outgoingMails)
      .set({ status: 'sent' })
      .where(eq(outgoingMails.id, recentId));
    await t.services.db.system
      .update(outgoingMails)
      .set({ updatedAt: old, nextAttemptAt: new Date(Date.now() + 3_600_000) })
      .where(eq(outgoingMails.id, waitingId));

    expect(await scrubOldMail(t.services, 30)).toBeGreaterThanOrEqual(2);
    const scrubbed = await row(t, sentId);
    expect(scrubbed.message.html).toBeUndefined();
    expect(scrubbed.message.text).toBeUndefined();
    expect(JSON.stringify(scrubbed)).not.toContain('raw-token');
    expect(scrubbed.attachments).toEqual([]);
    expect(scrubbed.message.subject).toBe(sent.message.subject);
    expect(scrubbed.message.to).toBe(sent.message.to);
    expect(scrubbed).toMatchObject({ status: 'sent', messageId: '<kept@acme.example>', key: sent.key });
    expect((await row(t, failedId)).message.text).toBeUndefined();
    expect((await row(t, failedId)).lastError).toBe('mailbox full');
    // Sent within the retention, and not yet sent: untouched.
    expect((await row(t, recentId)).message.text).toBe(recent.message.text);
    expect((await row(t, waitingId)).message.text).toBe(waiting.message.text);
    // Queueing the scrubbed mail's key again still answers the existing row: idempotency survives.
    expect(await queue(t, sent)).toEqual({ id: sentId, created: false });
    // A second pass finds nothing left to scrub among these.
    const again = await scrubOldMail(t.services, 30);
    expect((await row(t, recentId)).message.text).toBe(recent.message.text);
    expect(again).toBe(0);
  });
});
