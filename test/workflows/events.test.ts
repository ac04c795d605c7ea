// Locks in that enrolling a lead in a workflow delivers workflow.triggered to a real HTTPS receiver,
// signed, about the enrollment (with its workflow's name and number of steps).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../workers/signing.ts';
import {
  createLeadWithContact,
  createTestContext,
  createWorkflow,
  enrollLeadIn,
  type TestContext,
  type TestOrg,
} from '../fixtures/index.ts';
import { HttpsReceiver } from '../support/https-receiver.ts';

const SECRET = 'workflow-events-secret-0123456789';

let receiver: HttpsReceiver;
let t: TestContext;
let org: TestOrg;

beforeAll(async () => {
  receiver = await HttpsReceiver.start();
  t = await createTestContext(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    { withoutRateLimits: true, withWorkers: { ca: receiver.ca } },
  );
  org = await t.createOrg({ plan: 'pro' });
  const res = await t.request('POST', '/api/v1/webhooks', {
    token: org.token,
    body: {
      name: 'Sequences',
      url: receiver.url('/workflows'),
      events: ['workflow.triggered'],
      secret: SECRET,
    },
  });
  expect(res.status).toBe(201);
});
afterAll(async () => {
  await t.close();
  await receiver.close();
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

    const [hit] = await receiver.waitForRequests(1, 20_000);
    if (!hit) throw new Error('no delivery');
    const signature = hit.headers['x-crm-signature'];
    expect(verifyWebhookSignature(hit.body, typeof signature === 'string' ? signature : '', SECRET)).toBe(
      true,
    );
    const body: unknown = JSON.parse(hit.body.toString('utf8'));
    expect(body).toMatchObject({
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
