// Locks in a workflow's sms step sending through the messages area: from the enrolling user, to the enrolled contact's phone, from the organization's first SMS-capable number, recorded done with the message id; skipped with the reason when the organization has no SMS-capable number.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { messages } from '../../tools/messages/tables.ts';
import { telephonySettings } from '../../tools/telephony/tables.ts';
import { workflowStepRuns } from '../../tools/workflows/tables.ts';
import { createWorkflow, enrollLeadIn, runStepAt } from '../fixtures/index.ts';
import { connectTelephony, telephonyTest } from '../telephony/kit.ts';
import { createNumber, leadWithPhone } from './kit.ts';

const test = telephonyTest({ options: { withoutRateLimits: true } });

test.afterEach(async ({ t }) => {
  await t.services.db.system.delete(telephonySettings);
});

const SMS = { type: 'sms', delay: { amount: 0, unit: 'minutes' }, body: 'Are you free on Friday?' } as const;

describe("a workflow's sms step", () => {
  test('sends from the first SMS-capable number to the enrolled contact, as the enrolling user', async ({
    t,
    peer,
  }) => {
    const org = await t.createOrg();
    await connectTelephony(t, org, peer);
    await createNumber(t, org, { sms: false, voice: true, whatsapp: false });
    const first = await createNumber(t, org);
    await createNumber(t, org);
    const lead = await leadWithPhone(t, org);
    const workflow = await createWorkflow(t, org, { steps: [SMS] });
    const enrollment = await enrollLeadIn(t, org, workflow._id, {
      lead_id: lead.leadId,
      contact_id: lead.contactId,
    });
    expect(await runStepAt(t, enrollment._id, new Date(enrollment.next_run_at ?? ''))).toBe('completed');
    const [run] = await t.services.db.system
      .select()
      .from(workflowStepRuns)
      .where(eq(workflowStepRuns.enrollmentId, enrollment._id));
    if (!run) throw new Error('the sms step did not run');
    expect(run.status).toBe('done');
    const messageId = String((run.result as { message_id?: string }).message_id);
    const [row] = await t.services.db.system.select().from(messages).where(eq(messages.id, messageId));
    expect(row).toMatchObject({
      channel: 'sms',
      direction: 'outbound',
      leadId: lead.leadId,
      phoneNumberId: first.id,
      toAddress: lead.phone,
      userId: org.ownerId,
      body: SMS.body,
    });
    const sent = peer.messages.find((m) => m.sid === row?.sid);
    expect(sent).toMatchObject({ from: first.number, to: lead.phone, body: SMS.body });
  });

  test('is skipped with the reason when the organization has no SMS-capable number', async ({ t, peer }) => {
    const org = await t.createOrg();
    await connectTelephony(t, org, peer);
    await createNumber(t, org, { sms: false, voice: true, whatsapp: true });
    const lead = await leadWithPhone(t, org);
    const workflow = await createWorkflow(t, org, { steps: [SMS] });
    const enrollment = await enrollLeadIn(t, org, workflow._id, {
      lead_id: lead.leadId,
      contact_id: lead.contactId,
    });
    const before = peer.messages.length;
    expect(await runStepAt(t, enrollment._id, new Date(enrollment.next_run_at ?? ''))).toBe('completed');
    const [run] = await t.services.db.system
      .select()
      .from(workflowStepRuns)
      .where(eq(workflowStepRuns.enrollmentId, enrollment._id));
    expect(run?.status).toBe('skipped');
    expect(run?.result).toEqual({ reason: 'the organization has no SMS-capable phone number' });
    expect(peer.messages.length).toBe(before);
  });
});
