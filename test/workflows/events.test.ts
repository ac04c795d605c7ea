// Locks in that enrolling a lead in a workflow delivers workflow.triggered to a real HTTPS receiver,
// signed, about the enrollment (with its workflow's name and number of steps).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLeadWithContact,
  createWorkflow,
  decodeDelivery,
  type EventReceiver,
  enrollLeadIn,
  startEventReceiver,
  type TestContext,
  type TestOrg,
} from '../fixtures/index.ts';

const SECRET = 'workflow-events-secret-0123456789';

let events: EventReceiver;
let t: TestContext;
let org: TestOrg;

beforeAll(async () => {
  events = await startEventReceiver({ name: 'Workflows', events: ['workflow.triggered'], secret: SECRET });
  ({ t, org } = events);
});
afterAll(async () => {
  await events?.close();
});

describe('workflow events over webhooks', () => {
  it('delivers workflow.triggered, signed, about the new enrollment', async () => {
    // A first step a day away: the running workers leave it alone during the test.
    const workflow = await createWorkflow(t, org, {
      name: 'Trial follow-up',
      steps: [
        { type: 'task', delay: { amount: 1, unit: 'days' }, text: 'Call' },
        { type: 'sms', delay: { amount: 2, unit: 'days' }, body: 'Hi' },
      ],
    });
    const { leadId, contactId } = await createLeadWithContact(t, org);
    const enrollment = await enrollLeadIn(t, org, workflow._id, { lead_id: leadId });

    const [hit] = await events.receiver.waitForRequests(1, 20_000);
    if (!hit) throw new Error('no delivery');
    expect(decodeDelivery(hit, SECRET)).toMatchObject({
      event: 'workflow.triggered',
      data: {
        _id: enrollment._id,
        workflow_id: workflow._id,
        workflow_name: 'Trial follow-up',
        step_count: 2,
        lead_id: leadId,
        contact_id: contactId,
        enrolled_by: org.ownerId,
        status: 'active',
        current_step: 0,
        next_run_at: enrollment.next_run_at,
      },
    });
  });
});
