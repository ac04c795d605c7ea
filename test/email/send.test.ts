// Locks in the sending of scheduled email (tools/email/sender.ts) against a real SMTP peer with login: nothing before its time; at its time one message with the recipients (bcc only in the envelope), subject, HTML, text, attachment bytes read from storage, the From of the account and a Message-ID derived from the row; the outgoing email activity and email.sent; a job run twice sends once; temporary failures retried after 1 and 5 minutes then failed with the reason (email.sent status failed); permanent failures (bad login, missing attachment, trashed lead, a sender deactivated or demoted to a role that does not send, an account no longer verified) fail at once; a cancelled email is never sent; follow-up tasks come due, once, and a reply cancels them; a lead is enrolled after sending in an active workflow, not a paused one nor one it is already active in.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { users } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import { activities } from '../../tools/activities/tables.ts';
import { connectedAccounts } from '../../tools/connected-accounts/tables.ts';
import { cancelFollowUpsOnReply, createDueFollowUps } from '../../tools/email/follow-ups.ts';
import { scheduledEmails } from '../../tools/email/tables.ts';
import { tasks } from '../../tools/tasks/tables.ts';
import { workflowEnrollments } from '../../tools/workflows/tables.ts';
import { sendScheduledEmail, sweepDueEmails } from '../fixtures/email.ts';
import {
  createContact,
  createLead,
  createTestContext,
  eventsOf,
  fileTest,
  insertConnectedAccount,
  scheduleBody,
  scheduledEmailRow,
  scheduleEmail,
  type TestAccount,
  type TestContext,
  type TestOrg,
  uploadAttachment,
} from '../fixtures/index.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';
import { seedWorkflows } from '../workflows/seed.ts';

const LOGIN = { username: 'sender', password: 'smtp-secret-1' };
/** Recipients the peer answers 451 (try again later). */
const busy = new Set<string>();

/** What a scheduled email needs: the context, the organization and the owner's verified account. */
interface Sender {
  t: TestContext;
  org: TestOrg;
  account: TestAccount;
}

// The SMTP peer and a data directory (the attachments' store) come first: the file's context reads
// the directory, so `t` is overridden; `sender` is the owner with an account on the peer.
const test = fileTest()
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the peer has none.
  .extend('peer', { scope: 'file' }, async ({}, { onCleanup }) => {
    const peer = await startSmtpPeer({ auth: LOGIN, refuse: (address) => busy.has(address) });
    onCleanup(() => peer.close());
    return peer;
  })
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the directory has none.
  .extend('dataDir', { scope: 'file' }, async ({}, { onCleanup }) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'crm-email-send-'));
    onCleanup(() => rm(dataDir, { recursive: true, force: true }));
    return dataDir;
  })
  .extend('sender', { scope: 'file' }, async ({ t, org, peer }): Promise<Sender> => {
    const account = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: org.ownerId },
      { host: peer.host, port: peer.port, ...LOGIN },
      { email: 'dee@acme.example', displayName: 'Dee Sales' },
    );
    return { t, org, account };
  });
test.override('t', { scope: 'file' }, async ({ dataDir }, { onCleanup }) => {
  const t = await createTestContext({ DATA_DIR: dataDir }, { withoutRateLimits: true });
  onCleanup(() => t.close());
  return t;
});

const minutes = (n: number) => n * 60_000;
let seq = 0;

/** A lead with a contact, and an email scheduled to it 2 minutes ahead; returns ids and the due time. */
async function scheduled(sender: Sender, overrides: Parameters<typeof scheduleBody>[2] = {}) {
  const { t, org, account } = sender;
  seq += 1;
  const lead = await createLead(t, org, { name: `Globex ${seq}` });
  const contact = await createContact(t, org, { lead_id: lead._id, name: 'Hank' });
  const at = new Date(Date.now() + minutes(2));
  const out = await scheduleEmail(
    t,
    org,
    scheduleBody(account.id, lead._id, {
      to: `hank${seq}@globex.example`,
      subject: `Proposal ${seq}`,
      contact_id: contact._id,
      scheduled_at: at.toISOString(),
      ...overrides,
    }),
  );
  return { id: out.job_id, leadId: lead._id, contactId: contact._id, at, to: `hank${seq}@globex.example` };
}

const later = (at: Date, ms: number) => new Date(at.getTime() + ms);
const received = (peer: SmtpPeer, subject: string) => peer.received.filter((m) => m.subject === subject);

describe('sending', () => {
  test('sends nothing before its time, then one message with everything the row says and a Message-ID of the row', async ({
    t,
    org,
    peer,
    sender,
  }) => {
    const pdf = Buffer.from('%PDF-1.4 fake offer bytes \u0000\u00ff', 'latin1');
    const email = await scheduled(sender, {
      cc: ['boss@globex.example'],
      bcc: ['archive@acme.example'],
      body_html: '<p>Hello <b>Hank</b></p>',
      body_text: 'Hello Hank',
      attachments: [await uploadAttachment(t, org, { filename: 'Offer.pdf', bytes: pdf })],
    });
    expect(await sendScheduledEmail(t.services, email.id, { now: later(email.at, -1000) })).toBe('skipped');
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(0);

    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('sent');
    const [mail, ...more] = received(peer, `Proposal ${seq}`);
    expect(more).toHaveLength(0);
    const envelope = peer.envelopes[peer.received.indexOf(mail ?? peer.received[0]!)];
    expect(envelope?.to.sort()).toEqual(['archive@acme.example', 'boss@globex.example', email.to].sort());
    expect(envelope?.from).toBe('dee@acme.example');
    expect(peer.logins).toContain('sender');
    expect(mail?.from?.value[0]).toEqual({ address: 'dee@acme.example', name: 'Dee Sales' });
    expect(mail?.to && !Array.isArray(mail.to) ? mail.to.value.map((v) => v.address) : []).toEqual([
      email.to,
    ]);
    expect(mail?.cc && !Array.isArray(mail.cc) ? mail.cc.value.map((v) => v.address) : []).toEqual([
      'boss@globex.example',
    ]);
    expect(mail?.bcc).toBeUndefined();
    expect(mail?.headers.has('bcc')).toBe(false);
    expect(mail?.html).toContain('<p>Hello <b>Hank</b></p>');
    expect(mail?.text?.trim()).toBe('Hello Hank');
    expect(mail?.attachments).toHaveLength(1);
    expect(mail?.attachments[0]?.filename).toBe('Offer.pdf');
    expect(mail?.attachments[0]?.contentType).toBe('application/pdf');
    expect(mail?.attachments[0]?.content.equals(pdf)).toBe(true);
    expect(mail?.messageId).toBe(`<scheduled-email-${email.id}@acme.example>`);

    const row = await scheduledEmailRow(t, email.id);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, lastError: null, nextAttemptAt: null });
    expect(row.messageId).toBe(mail?.messageId);
    expect(row.sentAt?.toISOString()).toBe(email.at.toISOString());

    const [activity] = await t.services.db.system
      .select()
      .from(activities)
      .where(eq(activities.id, row.activityId ?? ''));
    expect(activity).toMatchObject({
      leadId: email.leadId,
      contactId: email.contactId,
      type: 'email',
      userId: org.ownerId,
    });
    expect(activity?.fields).toMatchObject({
      direction: 'outbound',
      subject: `Proposal ${seq}`,
      body_text: 'Hello Hank',
      from: 'dee@acme.example',
      to: [email.to, 'boss@globex.example'],
    });

    const events = await eventsOf(t, email.id, org.orgId);
    expect(events.map((e) => e.event)).toEqual(['email.sent']);
    expect(events[0]?.data).toMatchObject({
      _id: email.id,
      status: 'sent',
      message_id: row.messageId,
      activity_id: row.activityId,
      lead_id: email.leadId,
    });
    expect((await eventsOf(t, row.activityId ?? '', org.orgId)).map((e) => e.event)).toEqual([
      'activity.created',
    ]);
  });

  test('sends once when its job runs twice, even at once, and the sweeper finds nothing left', async ({
    t,
    peer,
    sender,
  }) => {
    const email = await scheduled(sender);
    const outcomes = await Promise.all([
      sendScheduledEmail(t.services, email.id, { now: email.at }),
      sendScheduledEmail(t.services, email.id, { now: email.at }),
    ]);
    expect(outcomes.sort()).toEqual(['sent', 'skipped']);
    expect(await sendScheduledEmail(t.services, email.id, { now: later(email.at, minutes(60)) })).toBe(
      'skipped',
    );
    expect(await sweepDueEmails(t.services, 0, later(email.at, minutes(60)))).toBe(0);
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(1);
  });

  test('never sends a cancelled email', async ({ t, org, peer, sender }) => {
    const email = await scheduled(sender);
    expect(
      (await t.request('DELETE', `/api/v1/email/scheduled/${email.id}`, { token: org.token })).status,
    ).toBe(200);
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('skipped');
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(0);
  });
});

describe('failures', () => {
  test('retries a refused send after 1 then 5 minutes, then fails with the reason and email.sent status failed', async ({
    t,
    org,
    peer,
    sender,
  }) => {
    const email = await scheduled(sender);
    busy.add(email.to);
    try {
      expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('retry');
      let row = await scheduledEmailRow(t, email.id);
      expect(row).toMatchObject({ status: 'scheduled', attempts: 1 });
      expect(row.lastError).toMatch(/try again later|451/i);
      expect(row.nextAttemptAt?.getTime()).toBe(email.at.getTime() + minutes(1));
      // Not before the backoff.
      expect(await sendScheduledEmail(t.services, email.id, { now: later(email.at, 59_000) })).toBe(
        'skipped',
      );
      expect(await sendScheduledEmail(t.services, email.id, { now: later(email.at, minutes(1)) })).toBe(
        'retry',
      );
      row = await scheduledEmailRow(t, email.id);
      expect(row.nextAttemptAt?.getTime()).toBe(email.at.getTime() + minutes(6));
      expect(await sendScheduledEmail(t.services, email.id, { now: later(email.at, minutes(6)) })).toBe(
        'failed',
      );
      row = await scheduledEmailRow(t, email.id);
      expect(row).toMatchObject({ status: 'failed', attempts: 3, nextAttemptAt: null, activityId: null });
      expect(await sendScheduledEmail(t.services, email.id, { now: later(email.at, minutes(60)) })).toBe(
        'skipped',
      );
      const events = await eventsOf(t, email.id, org.orgId);
      expect(events.map((e) => e.event)).toEqual(['email.sent']);
      expect(events[0]?.data).toMatchObject({ status: 'failed', attempts: 3, reason: row.lastError });
    } finally {
      busy.delete(email.to);
    }
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(0);
  });

  test('fails at once, without retries, on a refused login', async ({ t, org, peer, sender }) => {
    const wrong = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: org.ownerId },
      { host: peer.host, port: peer.port, username: 'sender', password: 'wrong' },
    );
    const email = await scheduled(sender, { connected_account_id: wrong.id });
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('failed');
    const row = await scheduledEmailRow(t, email.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 1 });
    expect(row.lastError).toBeTruthy();
  });

  test('fails at once when an attachment is missing from storage, naming it', async ({
    t,
    org,
    peer,
    sender,
  }) => {
    const gone = await uploadAttachment(t, org, { filename: 'Gone.pdf' });
    const email = await scheduled(sender, { attachments: [gone] });
    await t.services.files.delete(gone.storage_key);
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('failed');
    const row = await scheduledEmailRow(t, email.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 1 });
    const reason = `attachment Gone.pdf not found in storage (${gone.storage_key})`;
    expect(row.lastError).toBe(reason);
    expect((await eventsOf(t, email.id, org.orgId))[0]?.data).toMatchObject({ status: 'failed', reason });
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(0);
  });

  test('checks the attachment again at send time: replaced by another size, it fails at once', async ({
    t,
    org,
    peer,
    sender,
  }) => {
    const file = await uploadAttachment(t, org, { filename: 'Swap.pdf', bytes: 'twelve bytes' });
    const email = await scheduled(sender, { attachments: [file] });
    await t.services.files.put(file.storage_key, 'a much longer file than before', {
      contentType: 'application/pdf',
    });
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('failed');
    expect((await scheduledEmailRow(t, email.id)).lastError).toBe(
      'attachment Swap.pdf has 30 bytes in storage, not the 12 it was scheduled with',
    );
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(0);
  });

  test("never mails another organization's file, even from a row that names one (scheduled before the check)", async ({
    t,
    org,
    peer,
    sender,
  }) => {
    const other = await t.createOrg();
    const theirs = await uploadAttachment(t, other, { filename: 'Secret.pdf', bytes: 'their secret' });
    const email = await scheduled(sender, { attachments: [await uploadAttachment(t, org)] });
    await t.services.db.system
      .update(scheduledEmails)
      .set({ attachments: [theirs] })
      .where(eq(scheduledEmails.id, email.id));
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('failed');
    expect((await scheduledEmailRow(t, email.id)).lastError).toBe(
      `attachment Secret.pdf is not an upload of this organization (${theirs.storage_key})`,
    );
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(0);
  });

  test('fails at once when the account is no longer verified at send time', async ({
    t,
    org,
    peer,
    sender,
  }) => {
    const changing = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: org.ownerId },
      { host: peer.host, port: peer.port, ...LOGIN },
    );
    const email = await scheduled(sender, { connected_account_id: changing.id });
    await t.services.db.system
      .update(connectedAccounts)
      .set({ status: 'unverified' })
      .where(eq(connectedAccounts.id, changing.id));
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('failed');
    expect((await scheduledEmailRow(t, email.id)).lastError).toMatch(
      /connected account is not verified \(status unverified\)/,
    );
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(0);
  });

  test('fails at once when the lead was trashed before its time', async ({ t, org, peer, sender }) => {
    const email = await scheduled(sender);
    expect((await t.request('DELETE', `/api/v1/leads/${email.leadId}`, { token: org.token })).status).toBe(
      200,
    );
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('failed');
    expect((await scheduledEmailRow(t, email.id)).lastError).toBe(
      'the lead was deleted before the email was sent',
    );
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(0);
  });

  test('fails at once when the sender was deactivated, or the account removed after a failed attempt', async ({
    t,
    org,
    peer,
    sender,
  }) => {
    const member = await t.createUser(org.orgId, 'member');
    const memberAccount = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: member.userId },
      { host: peer.host, port: peer.port, ...LOGIN },
    );
    const lead = await createLead(t, org, { name: 'Deactivated sender' });
    const at = new Date(Date.now() + minutes(2));
    const out = await scheduleEmail(
      t,
      member,
      scheduleBody(memberAccount.id, lead._id, { subject: 'From a leaver', scheduled_at: at.toISOString() }),
    );
    await t.services.db.system
      .update(users)
      .set({ status: 'deactivated' })
      .where(eq(users.id, member.userId));
    expect(await sendScheduledEmail(t.services, out.job_id, { now: at })).toBe('failed');
    expect((await scheduledEmailRow(t, out.job_id)).lastError).toBe(
      'the sender is no longer an active user of the organization',
    );
    expect(received(peer, 'From a leaver')).toHaveLength(0);

    const email = await scheduled(sender);
    busy.add(email.to);
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('retry');
    busy.delete(email.to);
    await t.services.db.system
      .update(scheduledEmails)
      .set({ connectedAccountId: null })
      .where(eq(scheduledEmails.id, email.id));
    expect(await sendScheduledEmail(t.services, email.id, { now: later(email.at, minutes(1)) })).toBe(
      'failed',
    );
    expect(await scheduledEmailRow(t, email.id)).toMatchObject({
      status: 'failed',
      attempts: 2,
      lastError: 'the connected account was removed',
    });
  });

  test('fails at once when the sender was demoted to a role that does not send, or the account lost its verification', async ({
    t,
    org,
    peer,
  }) => {
    const member = await t.createUser(org.orgId, 'member');
    const memberAccount = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: member.userId },
      { host: peer.host, port: peer.port, ...LOGIN },
      { email: 'member@acme.example' },
    );
    const lead = await createLead(t, org, { name: 'Demoted sender' });
    const at = new Date(Date.now() + minutes(2));
    const out = await scheduleEmail(
      t,
      member,
      scheduleBody(memberAccount.id, lead._id, { subject: 'From a viewer', scheduled_at: at.toISOString() }),
    );
    const demote = await t.request('PUT', `/api/v1/users/${member.userId}`, {
      token: org.token,
      body: { role: 'viewer' },
    });
    expect(demote.status).toBe(200);
    expect(await sendScheduledEmail(t.services, out.job_id, { now: at })).toBe('failed');
    expect(await scheduledEmailRow(t, out.job_id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: "the sender's role (viewer) no longer allows sending e-mail",
    });
    expect(received(peer, 'From a viewer')).toHaveLength(0);

    // The owner's own account fails its verification (wrong password) after the email was scheduled.
    const failing = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: org.ownerId },
      { host: peer.host, port: peer.port, username: LOGIN.username, password: 'not-the-password' },
      { email: 'lapsed@acme.example' },
    );
    const email = await scheduleEmail(
      t,
      org,
      scheduleBody(failing.id, lead._id, {
        subject: 'From a lapsed account',
        scheduled_at: at.toISOString(),
      }),
    );
    const verify = await t.request('POST', `/api/v1/connected-accounts/${failing.id}/verify`, {
      token: org.token,
    });
    expect(verify.status).toBe(200);
    expect(await sendScheduledEmail(t.services, email.job_id, { now: at })).toBe('failed');
    expect((await scheduledEmailRow(t, email.job_id)).lastError).toBe(
      'the connected account is not verified (status error)',
    );
    expect(received(peer, 'From a lapsed account')).toHaveLength(0);
  });

  test('takes over a claim whose sender died once its lease expired, and sends once', async ({
    t,
    peer,
    sender,
  }) => {
    const email = await scheduled(sender);
    // A sender that claimed the row and died: status sending, attempt 1, lease until at + 5 minutes.
    await t.services.db.system
      .update(scheduledEmails)
      .set({ status: 'sending', attempts: 1, nextAttemptAt: later(email.at, minutes(5)) })
      .where(eq(scheduledEmails.id, email.id));
    expect(await sendScheduledEmail(t.services, email.id, { now: later(email.at, minutes(4)) })).toBe(
      'skipped',
    );
    expect(await sendScheduledEmail(t.services, email.id, { now: later(email.at, minutes(5)) })).toBe('sent');
    expect(await scheduledEmailRow(t, email.id)).toMatchObject({ status: 'sent', attempts: 2 });
    expect(received(peer, `Proposal ${seq}`)).toHaveLength(1);
  });
});

describe('follow-ups', () => {
  async function sentWithFollowUp(sender: Sender) {
    const { t } = sender;
    const email = await scheduled(sender, { follow_up: { amount: 2, unit: 'hours' } });
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('sent');
    const row = await scheduledEmailRow(t, email.id);
    expect(row.followUpStatus).toBe('pending');
    expect(row.followUpDueAt?.getTime()).toBe(email.at.getTime() + minutes(120));
    return { ...email, row };
  }

  const tasksOfLead = (t: TestContext, leadId: string) =>
    t.services.db.system.select().from(tasks).where(eq(tasks.leadId, leadId));

  test('creates one task for the sender when no reply came in time (task.created), not before', async ({
    t,
    org,
    sender,
  }) => {
    const email = await sentWithFollowUp(sender);
    await createDueFollowUps(t.services, later(email.at, minutes(119)));
    expect(await tasksOfLead(t, email.leadId)).toHaveLength(0);
    await createDueFollowUps(t.services, later(email.at, minutes(120)));
    await createDueFollowUps(t.services, later(email.at, minutes(180)));
    const [task, ...more] = await tasksOfLead(t, email.leadId);
    expect(more).toHaveLength(0);
    expect(task).toMatchObject({
      text: `Follow up: Proposal ${seq} (no reply from ${email.to})`,
      assignedTo: org.ownerId,
      leadId: email.leadId,
    });
    expect(task?.dueAt?.toISOString()).toBe(later(email.at, minutes(120)).toISOString());
    expect(await scheduledEmailRow(t, email.id)).toMatchObject({
      followUpStatus: 'created',
      followUpTaskId: task?.id,
    });
    expect((await eventsOf(t, task?.id ?? '', org.orgId)).map((e) => e.event)).toEqual(['task.created']);
  });

  test('a reply cancels it: by In-Reply-To, or from the recipient on the same lead (any case)', async ({
    t,
    org,
    sender,
  }) => {
    const byThread = await sentWithFollowUp(sender);
    const bySender = await sentWithFollowUp(sender);
    const untouched = await sentWithFollowUp(sender);
    const facts = {
      inboundEmailId: newId(),
      connectedAccountId: sender.account.id,
      accountUserId: org.ownerId,
      contactId: null,
      messageId: `<${newId()}@globex.example>`,
      receivedAt: new Date(),
    };
    await t.services.db.withTenant(org.orgId, (db) =>
      cancelFollowUpsOnReply(
        { db, orgId: org.orgId, now: new Date(), services: t.services, emit: async () => {} },
        {
          ...facts,
          leadId: null,
          fromAddress: 'someone@else.example',
          inReplyTo: byThread.row.messageId,
          repliesToEmailId: byThread.id,
        },
      ),
    );
    await t.services.db.withTenant(org.orgId, (db) =>
      cancelFollowUpsOnReply(
        { db, orgId: org.orgId, now: new Date(), services: t.services, emit: async () => {} },
        {
          ...facts,
          messageId: `<${newId()}@globex.example>`,
          leadId: bySender.leadId,
          fromAddress: bySender.to.toUpperCase(),
          inReplyTo: null,
          repliesToEmailId: null,
        },
      ),
    );
    expect((await scheduledEmailRow(t, byThread.id)).followUpStatus).toBe('cancelled');
    expect((await scheduledEmailRow(t, bySender.id)).followUpStatus).toBe('cancelled');
    expect((await scheduledEmailRow(t, untouched.id)).followUpStatus).toBe('pending');
    await createDueFollowUps(t.services, later(untouched.at, minutes(200)));
    expect(await tasksOfLead(t, byThread.leadId)).toHaveLength(0);
    expect(await tasksOfLead(t, bySender.leadId)).toHaveLength(0);
    expect(await tasksOfLead(t, untouched.leadId)).toHaveLength(1);
  });
});

describe('enroll_in_workflow_id', () => {
  async function workflow(t: TestContext, org: TestOrg, status: 'active' | 'paused'): Promise<string> {
    const [id = ''] = await seedWorkflows(t, org.orgId, [
      {
        name: `Nurture ${status}`,
        status,
        steps: [{ type: 'task', delay: { amount: 2, unit: 'days' }, text: 'Call them' }],
      },
    ]);
    return id;
  }

  test('enrolls the lead after sending in an active workflow (workflow.triggered), and records the enrollment', async ({
    t,
    org,
    sender,
  }) => {
    const workflowId = await workflow(t, org, 'active');
    const email = await scheduled(sender, { enroll_in_workflow_id: workflowId });
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('sent');
    const row = await scheduledEmailRow(t, email.id);
    const [enrollment] = await t.services.db.system
      .select()
      .from(workflowEnrollments)
      .where(
        and(eq(workflowEnrollments.workflowId, workflowId), eq(workflowEnrollments.leadId, email.leadId)),
      );
    expect(enrollment).toMatchObject({ status: 'active', enrolledBy: org.ownerId, sourceEmailId: email.id });
    expect(row.enrollmentId).toBe(enrollment?.id);
    expect(row.lastError).toBeNull();
    expect((await eventsOf(t, enrollment?.id ?? '', org.orgId)).map((e) => e.event)).toEqual([
      'workflow.triggered',
    ]);
  });

  test('sends but does not enroll a lead already active in the workflow: no second enrollment, already_enrolled recorded', async ({
    t,
    org,
    sender,
  }) => {
    const workflowId = await workflow(t, org, 'active');
    const first = await scheduled(sender, { enroll_in_workflow_id: workflowId });
    expect(await sendScheduledEmail(t.services, first.id, { now: first.at })).toBe('sent');
    const [enrollment] = await t.services.db.system
      .select()
      .from(workflowEnrollments)
      .where(eq(workflowEnrollments.workflowId, workflowId));
    if (!enrollment) throw new Error('the first email enrolled no one');
    // A second email to the same lead, enrolling again in the same workflow.
    const second = await scheduleEmail(
      t,
      org,
      scheduleBody(sender.account.id, first.leadId, {
        to: first.to,
        subject: 'Second in the workflow',
        contact_id: first.contactId,
        scheduled_at: first.at.toISOString(),
        enroll_in_workflow_id: workflowId,
      }),
    );
    expect(await sendScheduledEmail(t.services, second.job_id, { now: first.at })).toBe('sent');
    expect(await scheduledEmailRow(t, second.job_id)).toMatchObject({
      status: 'sent',
      enrollmentId: null,
      lastError: `not enrolled: already_enrolled (enrollment ${enrollment.id})`,
    });
    const enrolled = await t.services.db.system
      .select()
      .from(workflowEnrollments)
      .where(eq(workflowEnrollments.workflowId, workflowId));
    expect(enrolled.map((e) => e.id)).toEqual([enrollment.id]);
    expect((await eventsOf(t, enrollment.id, org.orgId)).map((e) => e.event)).toEqual(['workflow.triggered']);
  });

  test('sends but does not enroll when the workflow is paused by then, saying so', async ({
    t,
    org,
    sender,
  }) => {
    const workflowId = await workflow(t, org, 'paused');
    const email = await scheduled(sender, { enroll_in_workflow_id: workflowId });
    expect(await sendScheduledEmail(t.services, email.id, { now: email.at })).toBe('sent');
    const row = await scheduledEmailRow(t, email.id);
    expect(row).toMatchObject({
      status: 'sent',
      enrollmentId: null,
      lastError: 'not enrolled: the workflow is paused',
    });
    const enrolled = await t.services.db.system
      .select()
      .from(workflowEnrollments)
      .where(eq(workflowEnrollments.workflowId, workflowId));
    expect(enrolled).toHaveLength(0);
  });
});
