// Locks in the scheduled-email events at a real HTTPS receiver, signed: email.sent for a sent email (message_id, activity_id) and for a failed one (status failed, reason), task.created for a follow-up that came due; and, end to end through the signed inbound hook, that a reply threaded to the email cancels its follow-up so no task is created.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDueFollowUps } from '../../tools/email/follow-ups.ts';
import { sendScheduledEmail } from '../fixtures/email.ts';
import {
  type ConnectedAccount,
  createConnectedAccount,
  createContact,
  createLead,
  decodeDelivery,
  type EventReceiver,
  postInbound,
  scheduleBody,
  scheduledEmailRow,
  scheduleEmail,
  smtpOf,
  startEventReceiver,
  type TestContext,
  type TestOrg,
  uploadAttachment,
  verifyAccount,
} from '../fixtures/index.ts';
import type { HttpsReceiver, ReceivedRequest } from '../support/https-receiver.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

const SECRET = 'scheduled-email-events-0123456789';
const LOGIN = { username: 'events', password: 'events-secret-1' };

let events: EventReceiver;
let receiver: HttpsReceiver;
let peer: SmtpPeer;
let t: TestContext;
let org: TestOrg;
let account: ConnectedAccount;

beforeAll(async () => {
  peer = await startSmtpPeer({ auth: LOGIN });
  events = await startEventReceiver({
    name: 'Email',
    events: ['email.sent', 'task.created'],
    secret: SECRET,
  });
  ({ t, org, receiver } = events);
  account = await createConnectedAccount(t, org, { email: 'dee@acme.example', smtp: smtpOf(peer, LOGIN) });
  // Only a verified account schedules mail.
  expect((await verifyAccount(t, org, account)).status).toBe('verified');
});

afterAll(async () => {
  await events?.close();
  await peer?.close();
});

const decode = (hit: ReceivedRequest) => decodeDelivery(hit, SECRET);

/** The deliveries so far about record `id`, once at least `count` arrived. */
async function deliveriesAbout(
  id: string,
  count: number,
): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  for (;;) {
    const about = receiver.requests.map(decode).filter((d) => d.data._id === id);
    if (about.length >= count) return about;
    await receiver.waitForRequests(receiver.requests.length + 1, 20_000);
  }
}

async function scheduledTo(to: string, overrides: Parameters<typeof scheduleBody>[2] = {}) {
  const lead = await createLead(t, org, { name: `Lead of ${to}` });
  await createContact(t, org, { lead_id: lead._id, emails: [{ email: to, type: 'office' }] });
  const at = new Date(Date.now() + 120_000);
  const out = await scheduleEmail(
    t,
    org,
    scheduleBody(account._id, lead._id, { to, scheduled_at: at.toISOString(), ...overrides }),
  );
  return { id: out.job_id, leadId: lead._id, at };
}

describe('scheduled email events over webhooks', () => {
  it('delivers email.sent (sent) and then task.created for the follow-up that came due, signed', async () => {
    const email = await scheduledTo('hank@globex.example', {
      subject: 'Offer',
      follow_up: { amount: 1, unit: 'days' },
    });
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('sent');
    const row = await scheduledEmailRow(t, email.id);
    const [sent] = await deliveriesAbout(email.id, 1);
    expect(sent?.event).toBe('email.sent');
    expect(sent?.data).toMatchObject({
      _id: email.id,
      status: 'sent',
      message_id: row.messageId,
      activity_id: row.activityId,
      to: 'hank@globex.example',
      follow_up_status: 'pending',
    });

    expect(await createDueFollowUps(t.services, new Date(email.at.getTime() + 86_400_000))).toBe(1);
    const taskId = (await scheduledEmailRow(t, email.id)).followUpTaskId ?? '';
    const [created] = await deliveriesAbout(taskId, 1);
    expect(created?.event).toBe('task.created');
    expect(created?.data).toMatchObject({
      _id: taskId,
      text: 'Follow up: Offer (no reply from hank@globex.example)',
      lead_id: email.leadId,
      assigned_to: org.ownerId,
    });
  });

  it('delivers email.sent with status failed and the reason', async () => {
    const gone = await uploadAttachment(t, org, { filename: 'a.pdf' });
    const email = await scheduledTo('gone@globex.example', { attachments: [gone] });
    await t.services.files.delete(gone.storage_key);
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('failed');
    const [failed] = await deliveriesAbout(email.id, 1);
    expect(failed?.event).toBe('email.sent');
    expect(failed?.data).toMatchObject({
      _id: email.id,
      status: 'failed',
      reason: `attachment a.pdf not found in storage (${gone.storage_key})`,
      message_id: null,
    });
  });

  it('a reply through the inbound hook, threaded to the email, cancels its follow-up', async () => {
    const email = await scheduledTo('ivy@initech.example', {
      subject: 'Demo',
      follow_up: { amount: 2, unit: 'hours' },
    });
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('sent');
    const sent = await scheduledEmailRow(t, email.id);
    const res = await postInbound(t, account, {
      from: 'Ivy <ivy@initech.example>',
      to: 'dee@acme.example',
      subject: 'Re: Demo',
      message_id: '<reply-demo@initech.example>',
      in_reply_to: sent.messageId,
    });
    expect(res.status).toBe(200);
    expect(await scheduledEmailRow(t, email.id)).toMatchObject({
      followUpStatus: 'cancelled',
      followUpTaskId: null,
    });
    expect(await createDueFollowUps(t.services, new Date(email.at.getTime() + 3 * 3_600_000))).toBe(0);
  });
});
