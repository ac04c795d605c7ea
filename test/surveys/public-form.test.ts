// Locks in the public survey form /s/{token}: the HTML page with a real input per question type and no script, views counted, JSON and HTML-form responses validated per type (each refusal naming answers.<id>), the form coming back with errors and values, one response per e-mail (409, also concurrent), lead linking, form.submitted in the outbox, a closed survey refusing with 409, and plain 404s.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { organizations } from '../../core/db/schema.ts';
import {
  createContact,
  createLead,
  detailFields,
  fileTest,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { activeSurvey, respond, respondWithForm, submittedEvents, VALID_ANSWERS } from './helpers.ts';

const test = fileTest({ plan: 'pro', options: { withoutRateLimits: true } });

async function responsesOf(t: TestContext, org: TestOrg, surveyId: string) {
  const res = await t.request('GET', `/api/v1/surveys/${surveyId}/responses?limit=100`, { token: org.token });
  return (await readOutput(res, TOOL.list_survey_responses)).responses;
}

describe('the page', () => {
  test('renders every question type as real inputs in a plain form, under the strict CSP, without script', async ({
    t,
    org,
  }) => {
    const { path } = await activeSurvey(t, org, { name: 'Tell us <everything>', description: 'Two minutes' });
    const res = await t.request('GET', path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("form-action 'self'");
    const html = await res.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('<h1>Tell us &lt;everything&gt;</h1>');
    expect(html).toContain(`<form method="post" action="${path}/responses" id="survey-form">`);
    const radios = (name: string) =>
      [
        ...html.matchAll(
          new RegExp(`type="radio" id="[^"]+" name="${name.replace('.', '\\.')}" value="([^"]*)"`, 'g'),
        ),
      ].map((m) => m[1]);
    expect(radios('answers.nps')).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(radios('answers.stars')).toEqual(['1', '2', '3', '4', '5']);
    expect(radios('answers.plan')).toEqual(['Basic', 'Pro', 'Max']);
    const boxes = [
      ...html.matchAll(/type="checkbox" id="[^"]+" name="(answers\.used\.\d+)" value="([^"]*)"/g),
    ].map((m) => `${m[1]}=${m[2]}`);
    expect(boxes).toEqual(['answers.used.0=Leads', 'answers.used.1=Invoices', 'answers.used.2=Surveys']);
    expect(html).toMatch(/<textarea id="q-why" name="answers\.why"[^>]*maxlength="5000"/);
    // The optional e-mail field, and the required marks on the four required questions.
    expect(html).toMatch(/<input type="email" id="email" name="email"[^>]*>/);
    expect(html).toContain('(optional)');
    expect(html.match(/<legend id="label-[^"]+">[^<]*<span class="req"/g)).toHaveLength(4);
    // Labels tie each choice to its input.
    expect(html).toContain('<label for="q-nps-0"><input type="radio" id="q-nps-0"');
  });

  test('requires the e-mail field when the survey takes one response per e-mail', async ({ t, org }) => {
    const { path } = await activeSurvey(t, org, { one_response_per_email: true });
    const html = await (await t.request('GET', path)).text();
    expect(html).toMatch(/<input type="email" id="email" name="email"[^>]*required>/);
  });

  test('counts each showing of the form as a view', async ({ t, org }) => {
    const { survey, path } = await activeSurvey(t, org);
    for (let i = 0; i < 3; i++) await t.request('GET', path);
    const res = await t.request('GET', `/api/v1/surveys/${survey._id}/summary`, { token: org.token });
    expect((await readOutput(res, TOOL.get_survey_summary)).summary.views).toBe(3);
  });

  test('answers a plain 404 for an unknown or malformed token, and when the plan lost surveys', async ({
    t,
  }) => {
    for (const path of ['/s/nope', `/s/${'A'.repeat(43)}`, `/s/${'A'.repeat(43)}/responses`]) {
      const res = await t.request(path.endsWith('responses') ? 'POST' : 'GET', path, {
        body: path.endsWith('responses') ? { answers: {} } : undefined,
      });
      expect(res.status, path).toBe(404);
    }
    const downgraded = await t.createOrg({ plan: 'pro', name: 'Downgraded' });
    const { path } = await activeSurvey(t, downgraded);
    expect((await t.request('GET', path)).status).toBe(200);
    await t.services.db.system
      .update(organizations)
      .set({ plan: 'free' })
      .where(eq(organizations.id, downgraded.orgId));
    expect((await t.request('GET', path)).status).toBe(404);
    expect((await respond(t, path, { answers: VALID_ANSWERS })).status).toBe(404);
  });
});

describe('JSON responses', () => {
  test('records a valid response: 201 with the thank-you message, answers normalized, form.submitted written', async ({
    t,
    org,
  }) => {
    const { survey, path } = await activeSurvey(t, org, { thank_you_message: 'Much obliged' });
    const res = await respond(t, path, {
      answers: { ...VALID_ANSWERS, used: ['Surveys', 'Leads'], why: '  Great  ' },
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toMatchObject({ message: 'Response recorded', thank_you_message: 'Much obliged' });
    expect(body.response._id).toMatch(/^[0-9a-f]{24}$/);
    const [stored] = await responsesOf(t, org, survey._id);
    expect(stored?.answers).toEqual({
      nps: 9,
      stars: 4,
      plan: 'Pro',
      used: ['Leads', 'Surveys'],
      why: 'Great',
    });
    const events = await submittedEvents(t, org.orgId, survey._id);
    expect(events).toEqual([
      {
        survey_id: survey._id,
        survey_name: survey.name,
        response_id: body.response._id,
        answers: stored?.answers,
        email: null,
        lead_id: null,
        contact_id: null,
        submitted_at: body.response.submitted_at,
      },
    ]);
  });

  test('leaves unanswered optional questions out', async ({ t, org }) => {
    const { survey, path } = await activeSurvey(t, org);
    const { why: _why, ...required } = VALID_ANSWERS;
    expect((await respond(t, path, { answers: { ...required, why: '' } })).status).toBe(201);
    const [stored] = await responsesOf(t, org, survey._id);
    expect(Object.keys(stored?.answers ?? {}).sort()).toEqual(['nps', 'plan', 'stars', 'used']);
  });

  test.for([
    ['an NPS of 11', { nps: 11 }, 'answers.nps'],
    ['an NPS of -1', { nps: -1 }, 'answers.nps'],
    ['a fractional NPS', { nps: 8.5 }, 'answers.nps'],
    ['an NPS as text', { nps: '9' }, 'answers.nps'],
    ['a rating above max', { stars: 6 }, 'answers.stars'],
    ['a rating below min', { stars: 0 }, 'answers.stars'],
    ['a single choice outside the options', { plan: 'Gold' }, 'answers.plan'],
    ['a single choice as a list', { plan: ['Pro'] }, 'answers.plan'],
    ['a multiple choice outside the options', { used: ['Leads', 'Nope'] }, 'answers.used'],
    ['a multiple choice as one string', { used: 'Leads' }, 'answers.used'],
    ['a multiple choice repeating an option', { used: ['Leads', 'Leads'] }, 'answers.used'],
    ['no option ticked on a required multiple choice', { used: [] }, 'answers.used'],
    ['a text over 5000 characters', { why: 'x'.repeat(5001) }, 'answers.why'],
    ['a text as a number', { why: 5 }, 'answers.why'],
    ['a required question left out', { nps: undefined }, 'answers.nps'],
    ['a required question null', { nps: null }, 'answers.nps'],
    ['an unknown question id', { zzz: 1 }, 'answers.zzz'],
  ] as const)(
    'refuses %s with a 400 naming the answer, and records nothing',
    async ([, change, field], { t, org }) => {
      const { survey, path } = await activeSurvey(t, org);
      const answers: Record<string, unknown> = { ...VALID_ANSWERS, ...change };
      const res = await respond(t, path, { answers: JSON.parse(JSON.stringify(answers)) });
      const body = await readError(res, 400);
      expect(body.error).toBe('Validation failed');
      expect(detailFields(body)).toEqual([field]);
      expect(await responsesOf(t, org, survey._id)).toEqual([]);
      expect(await submittedEvents(t, org.orgId, survey._id)).toEqual([]);
    },
  );

  test('reads only own keys: a question id like `constructor`, an answer keyed `__proto__`', async ({
    t,
    org,
  }) => {
    const { survey, path } = await activeSurvey(t, org, {
      questions: [{ id: 'constructor', type: 'nps', text: 'Score?', required: true }],
    });
    const missing = await respond(t, path, { answers: {} });
    expect(await readError(missing, 400)).toMatchObject({
      details: [{ field: 'answers.constructor', message: 'is required' }],
    });
    const proto = await t.app.request(`${path}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"answers":{"constructor":3,"__proto__":{"x":1}}}',
    });
    expect(detailFields(await readError(proto, 400))).toEqual(['answers.__proto__']);
    const form = await respondWithForm(t, path, [
      ['answers.constructor', '4'],
      ['answers.__proto__', 'x'],
    ]);
    expect(form.status).toBe(400);
    expect(await form.text()).toContain('answers.__proto__ is not a question of this survey.</p>');
    expect((await respond(t, path, { answers: { constructor: 5 } })).status).toBe(201);
    expect((await responsesOf(t, org, survey._id)).map((r) => r.answers)).toEqual([{ constructor: 5 }]);
  });

  test('names every refused answer at once, and a bad e-mail or a bad body shape', async ({ t, org }) => {
    const { path } = await activeSurvey(t, org);
    const all = await respond(t, path, { answers: { nps: 12, stars: 9 } });
    expect(detailFields(await readError(all, 400)).sort()).toEqual([
      'answers.nps',
      'answers.plan',
      'answers.stars',
      'answers.used',
    ]);
    const email = await respond(t, path, { answers: VALID_ANSWERS, email: 'not an address' });
    expect(detailFields(await readError(email, 400))).toEqual(['email']);
    const shape = await respond(t, path, { answers: 'all good' });
    expect(detailFields(await readError(shape, 400))).toEqual(['answers']);
  });
});

describe('HTML form responses', () => {
  test('records a form post and answers the thank-you page', async ({ t, org }) => {
    const { survey, path } = await activeSurvey(t, org, { thank_you_message: 'See you soon' });
    const res = await respondWithForm(t, path, [
      ['answers.nps', '10'],
      ['answers.stars', '3'],
      ['answers.plan', 'Max'],
      ['answers.used.0', 'Leads'],
      ['answers.used.2', 'Surveys'],
      ['answers.why', 'Fine & dandy'],
      ['email', ''],
    ]);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<p class="notice" id="message">See you soon</p>');
    const [stored] = await responsesOf(t, org, survey._id);
    expect(stored).toMatchObject({
      answers: { nps: 10, stars: 3, plan: 'Max', used: ['Leads', 'Surveys'], why: 'Fine & dandy' },
      email: null,
    });
  });

  test('answers the form again with each error next to its field and the values kept (400)', async ({
    t,
    org,
  }) => {
    const { survey, path } = await activeSurvey(t, org);
    const res = await respondWithForm(t, path, [
      ['answers.stars', '4'],
      ['answers.plan', 'Gold'],
      ['answers.used.1', 'Invoices'],
      ['answers.why', 'Keep <me>'],
      ['email', 'kept@example.test'],
    ]);
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('<p class="error" id="error-nps">is required</p>');
    expect(html).toContain('<p class="error" id="error-plan">must be one of the options</p>');
    expect(html).not.toContain('id="error-stars"');
    expect(html).toMatch(/id="q-stars-3" name="answers\.stars" value="4" required checked>/);
    expect(html).toMatch(/name="answers\.used\.1" value="Invoices" checked>/);
    expect(html).toContain('>Keep &lt;me&gt;</textarea>');
    expect(html).toContain('value="kept@example.test"');
    expect(await responsesOf(t, org, survey._id)).toEqual([]);
  });
});

describe('one response per e-mail', () => {
  test('needs the e-mail and refuses a second response for it, whatever its case, with 409', async ({
    t,
    org,
  }) => {
    const { survey, path } = await activeSurvey(t, org, { one_response_per_email: true });
    const missing = await respond(t, path, { answers: VALID_ANSWERS });
    expect(detailFields(await readError(missing, 400))).toEqual(['email']);
    expect((await respond(t, path, { answers: VALID_ANSWERS, email: 'Ann@Example.test' })).status).toBe(201);
    const again = await respond(t, path, { answers: VALID_ANSWERS, email: 'ann@example.TEST' });
    expect(await readError(again, 409)).toMatchObject({ error: 'Already responded', code: 'conflict' });
    const form = await respondWithForm(t, path, [
      ['answers.nps', '1'],
      ['answers.stars', '1'],
      ['answers.plan', 'Pro'],
      ['answers.used.0', 'Leads'],
      ['email', 'ANN@example.test'],
    ]);
    expect(form.status).toBe(409);
    expect(await form.text()).toContain(
      '<p class="error" id="error-email">A response was already recorded for this e-mail</p>',
    );
    expect((await respond(t, path, { answers: VALID_ANSWERS, email: 'bob@example.test' })).status).toBe(201);
    expect((await responsesOf(t, org, survey._id)).map((r) => r.email).sort()).toEqual([
      'Ann@Example.test',
      'bob@example.test',
    ]);
    expect(await submittedEvents(t, org.orgId, survey._id)).toHaveLength(2);
  });

  test('records exactly one of several concurrent responses for the same e-mail', async ({ t, org }) => {
    const { survey, path } = await activeSurvey(t, org, { one_response_per_email: true });
    const statuses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        respond(t, path, {
          answers: { ...VALID_ANSWERS, nps: i },
          email: i % 2 ? 'race@example.test' : 'RACE@example.test',
        }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    expect(await responsesOf(t, org, survey._id)).toHaveLength(1);
    expect(await submittedEvents(t, org.orgId, survey._id)).toHaveLength(1);
  });

  test('takes several responses for one e-mail when the survey does not say one per e-mail', async ({
    t,
    org,
  }) => {
    const { survey, path } = await activeSurvey(t, org);
    for (let i = 0; i < 2; i++) {
      expect((await respond(t, path, { answers: VALID_ANSWERS, email: 'same@example.test' })).status).toBe(
        201,
      );
    }
    expect(await responsesOf(t, org, survey._id)).toHaveLength(2);
  });
});

describe('lead linking', () => {
  test('links a response to the lead whose live contact has the e-mail, case-insensitively', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org, { name: 'Linked Ltd' });
    const contact = await createContact(t, org, {
      lead_id: lead._id,
      name: 'Lin Ked',
      emails: [{ email: 'lin@linked.test', type: 'work' }],
    });
    const { survey, path } = await activeSurvey(t, org);
    expect((await respond(t, path, { answers: VALID_ANSWERS, email: 'LIN@Linked.test' })).status).toBe(201);
    expect((await respond(t, path, { answers: VALID_ANSWERS, email: 'stranger@nowhere.test' })).status).toBe(
      201,
    );
    const [stranger, linked] = await responsesOf(t, org, survey._id);
    expect(linked).toMatchObject({ lead_id: lead._id, contact_id: contact._id, email: 'LIN@Linked.test' });
    expect(stranger).toMatchObject({ lead_id: null, contact_id: null });
    const events = await submittedEvents(t, org.orgId, survey._id);
    expect(events.map((e) => e.lead_id)).toEqual([lead._id, null]);
  });

  test("never links to another organization's contact with the same e-mail", async ({ t, org }) => {
    const rival = await t.createOrg({ plan: 'pro', name: 'Rival' });
    await createContact(t, rival, { name: 'Other', emails: [{ email: 'shared@both.test', type: 'work' }] });
    const { survey, path } = await activeSurvey(t, org);
    expect((await respond(t, path, { answers: VALID_ANSWERS, email: 'shared@both.test' })).status).toBe(201);
    expect((await responsesOf(t, org, survey._id))[0]?.lead_id).toBeNull();
  });
});

describe('a closed survey', () => {
  test('shows "closed" without a form and refuses responses with 409', async ({ t, org }) => {
    const { survey, path } = await activeSurvey(t, org);
    const close = await t.request('POST', `/api/v1/surveys/${survey._id}/close`, { token: org.token });
    expect(close.status).toBe(200);
    const page = await t.request('GET', path);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('This survey is closed');
    expect(html).not.toContain('<form');
    expect(await readError(await respond(t, path, { answers: VALID_ANSWERS }), 409)).toMatchObject({
      error: 'Survey closed',
      code: 'conflict',
    });
    const form = await respondWithForm(t, path, [['answers.nps', '9']]);
    expect(form.status).toBe(409);
    expect(await form.text()).toContain('This survey is closed');
    expect(await responsesOf(t, org, survey._id)).toEqual([]);
    // Views stop counting once closed.
    const summary = await t.request('GET', `/api/v1/surveys/${survey._id}/summary`, { token: org.token });
    expect((await readOutput(summary, TOOL.get_survey_summary)).summary.views).toBe(0);
  });
});
