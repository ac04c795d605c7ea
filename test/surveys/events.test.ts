// Locks in that form.submitted reaches a real HTTPS receiver, signed, with the declared payload: the survey, the response, its answers, the e-mail and the lead whose contact has it.
import { describe, expect } from 'vitest';
import { surveysEvents } from '../../tools/surveys/events.ts';
import { harnessTest } from '../fixtures/harness-test.ts';
import { createContact, createLead, decodeDelivery, startEventReceiver } from '../fixtures/index.ts';
import { activeSurvey, respond, submittedEvents, VALID_ANSWERS } from './helpers.ts';

const SECRET = 'surveys-events-secret-0123456789';

const test = harnessTest(() =>
  startEventReceiver({ name: 'Surveys', events: ['form.submitted'], secret: SECRET }),
).extend('receiver', { scope: 'file' }, async ({ harness }) => harness.receiver);

describe('form.submitted over webhooks', () => {
  test('delivers the response, signed, with the lead of the e-mail', async ({ t, org, receiver }) => {
    const lead = await createLead(t, org, { name: 'Respondent Inc' });
    const contact = await createContact(t, org, {
      lead_id: lead._id,
      name: 'Rita Respondent',
      emails: [{ email: 'rita@respondent.test', type: 'work' }],
    });
    const { survey, path } = await activeSurvey(t, org, { name: 'Delivery survey' });
    const res = await respond(t, path, { answers: VALID_ANSWERS, email: 'rita@respondent.test' });
    expect(res.status).toBe(201);
    const { response } = await res.json();

    // The outbox row first, in the declared shape.
    const [written] = await submittedEvents(t, org.orgId, survey._id);
    expect(surveysEvents['form.submitted'].parse(written)).toEqual(written);

    const [hit] = await receiver.waitForRequests(1, 20_000);
    if (!hit) throw new Error('no delivery');
    expect(hit.headers['x-crm-event']).toBe('form.submitted');
    const delivered = decodeDelivery(hit, SECRET);
    expect(delivered).toEqual({
      event: 'form.submitted',
      data: {
        survey_id: survey._id,
        survey_name: 'Delivery survey',
        response_id: response._id,
        answers: VALID_ANSWERS,
        email: 'rita@respondent.test',
        lead_id: lead._id,
        contact_id: contact._id,
        submitted_at: response.submitted_at,
      },
    });
    expect(delivered.data).toEqual(written);
  });
});
