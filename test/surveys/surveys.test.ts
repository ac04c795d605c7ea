// Locks in surveys over REST: create with every question type and its bounds, get, list, update, the trash; activation (a question needed, questions frozen, public_url), close; the responses list and the summary's numbers; plan feature 402, roles, content scopes, another organization's 404, the tools over MCP and their annotations.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { organizations } from '../../core/db/schema.ts';
import { CATALOGUE, TRASH_TYPES } from '../../tools/index.ts';
import { surveyResponses } from '../../tools/surveys/tables.ts';
import { purgeExpiredTrash } from '../../tools/trash/jobs.ts';
import { detailFields, fileTest, readError, readOutput, type TestContext, TOOL } from '../fixtures/index.ts';
import { callToolOverMcp } from '../fixtures/mcp-call.ts';
import { activateSurvey, activeSurvey, createSurvey, EVERY_TYPE, respond, VALID_ANSWERS } from './helpers.ts';

const test = fileTest({ plan: 'pro', otherPlan: 'free', options: { withoutRateLimits: true } });

const api = (t: TestContext, as: { token: string }, method: string, path: string, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: as.token, ...(body === undefined ? {} : { body }) });

async function refused(res: Response, status: number): Promise<string[]> {
  return detailFields(await readError(res, status));
}

describe('create and read', () => {
  test('creates a draft with one question of each type and reads it back', async ({ t, org }) => {
    const survey = await createSurvey(t, org, {
      name: '  Q3 check-in ',
      description: 'A short one',
      thank_you_message: 'Merci!',
    });
    expect(survey).toMatchObject({
      name: 'Q3 check-in',
      description: 'A short one',
      thank_you_message: 'Merci!',
      one_response_per_email: false,
      status: 'draft',
      public_url: null,
      activated_at: null,
      created_by: org.ownerId,
    });
    expect(survey.questions).toEqual(EVERY_TYPE);
    const got = await readOutput(await api(t, org, 'GET', `/surveys/${survey._id}`), TOOL.get_survey);
    expect(got.survey).toEqual(survey);
  });

  test('assigns ids to questions without one, skipping the ids in use, and rating bounds 1-5', async ({
    t,
    org,
  }) => {
    const survey = await createSurvey(t, org, {
      questions: [
        { type: 'rating', text: 'One' },
        { id: 'q1', type: 'text', text: 'Two' },
        { type: 'nps', text: 'Three' },
      ],
    });
    expect(survey.questions.map((q) => q.id)).toEqual(['q2', 'q1', 'q3']);
    expect(survey.questions[0]).toMatchObject({ min: 1, max: 5, required: false });
  });

  test.for([
    ['a name over 200 characters', { name: 'x'.repeat(201) }, 'name'],
    ['an empty name', { name: ' ' }, 'name'],
    ['a thank-you message over 1000', { thank_you_message: 'x'.repeat(1001) }, 'thank_you_message'],
    [
      '51 questions',
      { questions: Array.from({ length: 51 }, () => ({ type: 'text', text: 'Q' })) },
      'questions',
    ],
    [
      'a question text over 500',
      { questions: [{ type: 'text', text: 'x'.repeat(501) }] },
      'questions.0.text',
    ],
    ['an unknown type', { questions: [{ type: 'date', text: 'When?' }] }, 'questions.0.type'],
    [
      'a choice without options',
      { questions: [{ type: 'single_choice', text: 'Which?' }] },
      'questions.0.options',
    ],
    [
      'one option only',
      { questions: [{ type: 'multiple_choice', text: 'W', options: ['a'] }] },
      'questions.0.options',
    ],
    [
      '21 options',
      {
        questions: [
          { type: 'single_choice', text: 'W', options: Array.from({ length: 21 }, (_, i) => `o${i}`) },
        ],
      },
      'questions.0.options',
    ],
    [
      'an option over 200',
      { questions: [{ type: 'single_choice', text: 'W', options: ['a', 'x'.repeat(201)] }] },
      'questions.0.options.1',
    ],
    [
      'repeated options',
      { questions: [{ type: 'single_choice', text: 'W', options: ['a', 'a'] }] },
      'questions.0.options',
    ],
    [
      'options on a text question',
      { questions: [{ type: 'text', text: 'W', options: ['a', 'b'] }] },
      'questions.0.options',
    ],
    ['min on an nps question', { questions: [{ type: 'nps', text: 'W', min: 1 }] }, 'questions.0.min'],
    [
      'a rating with min >= max',
      { questions: [{ type: 'rating', text: 'W', min: 5, max: 5 }] },
      'questions.0.max',
    ],
    ['a rating max over 10', { questions: [{ type: 'rating', text: 'W', max: 11 }] }, 'questions.0.max'],
    [
      'a fractional rating bound',
      { questions: [{ type: 'rating', text: 'W', min: 1.5 }] },
      'questions.0.min',
    ],
    ['a bad question id', { questions: [{ id: 'a.b', type: 'text', text: 'W' }] }, 'questions.0.id'],
    [
      'a question id with a leading _',
      { questions: [{ id: '__proto__', type: 'text', text: 'W' }] },
      'questions.0.id',
    ],
    [
      'a repeated question id',
      {
        questions: [
          { id: 'a', type: 'text', text: 'W' },
          { id: 'a', type: 'nps', text: 'V' },
        ],
      },
      'questions.1.id',
    ],
    // An unknown key of the strict body: status moves through activate/close (or PATCH).
    ['a status on create', { status: 'active' }, '(root)'],
  ] as const)('refuses %s with a 400 naming the field', async ([, body, field], { t, org }) => {
    const res = await api(t, org, 'POST', '/surveys', { name: 'Bounds', ...body });
    expect(await refused(res, 400)).toContain(field);
  });

  test('lists live surveys newest first, filtered by status and searched by name', async ({ t, org }) => {
    const a = await createSurvey(t, org, { name: 'Listing alpha' });
    const b = await activateSurvey(t, org, (await createSurvey(t, org, { name: 'Listing beta' }))._id);
    const all = await readOutput(await api(t, org, 'GET', '/surveys?limit=100'), TOOL.list_surveys);
    const ids = all.surveys.map((s) => s._id);
    expect(ids.indexOf(b._id)).toBeLessThan(ids.indexOf(a._id));
    expect(all.surveys.find((s) => s._id === b._id)?.public_url).toBe(b.public_url);
    const active = await readOutput(
      await api(t, org, 'GET', '/surveys?status=active&limit=100'),
      TOOL.list_surveys,
    );
    expect(active.surveys.every((s) => s.status === 'active')).toBe(true);
    expect(active.surveys.map((s) => s._id)).toContain(b._id);
    const found = await readOutput(await api(t, org, 'GET', '/surveys?search=alpha'), TOOL.list_surveys);
    expect(found.surveys.map((s) => s._id)).toEqual([a._id]);
  });
});

describe('update', () => {
  test('changes only the fields sent by PATCH and PUT; null clears', async ({ t, org }) => {
    const survey = await createSurvey(t, org, { description: 'D', thank_you_message: 'T' });
    const patched = await readOutput(
      await api(t, org, 'PATCH', `/surveys/${survey._id}`, { name: 'Renamed', description: null }),
      TOOL.update_survey,
    );
    expect(patched.survey).toMatchObject({ name: 'Renamed', description: null, thank_you_message: 'T' });
    const put = await readOutput(
      await api(t, org, 'PUT', `/surveys/${survey._id}`, {
        questions: [{ type: 'text', text: 'Only one' }],
        one_response_per_email: true,
      }),
      TOOL.update_survey,
    );
    expect(put.survey.questions).toEqual([{ id: 'q1', type: 'text', text: 'Only one', required: false }]);
    expect(put.survey).toMatchObject({ name: 'Renamed', one_response_per_email: true });
  });

  test('freezes questions and one_response_per_email once active; the name and messages still change', async ({
    t,
    org,
  }) => {
    const { survey } = await activeSurvey(t, org);
    const questions = await api(t, org, 'PATCH', `/surveys/${survey._id}`, {
      questions: [{ type: 'text', text: 'New' }],
    });
    const body = await readError(questions, 400);
    expect(body).toMatchObject({ code: 'invalid_operation' });
    expect(detailFields(body)).toEqual(['questions']);
    const once = await api(t, org, 'PATCH', `/surveys/${survey._id}`, { one_response_per_email: true });
    expect(await refused(once, 400)).toEqual(['one_response_per_email']);
    // The same questions sent back (a PUT of the whole record) are accepted.
    const same = await readOutput(
      await api(t, org, 'PUT', `/surveys/${survey._id}`, {
        name: 'Still editable',
        thank_you_message: 'Thanks a lot',
        questions: EVERY_TYPE,
        one_response_per_email: false,
      }),
      TOOL.update_survey,
    );
    expect(same.survey).toMatchObject({
      name: 'Still editable',
      thank_you_message: 'Thanks a lot',
      status: 'active',
    });
    expect(same.survey.questions).toEqual(survey.questions);
    expect(same.survey.public_url).toBe(survey.public_url);
  });
});

describe('activate and close', () => {
  test('refuses to activate a survey without a question, naming questions', async ({ t, org }) => {
    const survey = await createSurvey(t, org, { questions: [] });
    const res = await api(t, org, 'POST', `/surveys/${survey._id}/activate`);
    expect(await refused(res, 400)).toEqual(['questions']);
    const got = await readOutput(await api(t, org, 'GET', `/surveys/${survey._id}`), TOOL.get_survey);
    expect(got.survey.status).toBe('draft');
  });

  test('activates with a public_url under PUBLIC_BASE_URL holding a 32-byte token, shown again by get', async ({
    t,
    org,
  }) => {
    const draft = await createSurvey(t, org);
    const survey = await activateSurvey(t, org, draft._id);
    expect(survey.status).toBe('active');
    expect(survey.activated_at).not.toBeNull();
    const base = t.services.config.publicBaseUrl;
    expect(survey.public_url).toMatch(
      new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/s/[A-Za-z0-9_-]{43}$`),
    );
    const got = await readOutput(await api(t, org, 'GET', `/surveys/${draft._id}`), TOOL.get_survey);
    expect(got.survey.public_url).toBe(survey.public_url);
    // Activating again is a same-state move: the same link.
    expect((await activateSurvey(t, org, draft._id)).public_url).toBe(survey.public_url);
    // Another survey gets another token.
    const other = await activeSurvey(t, org);
    expect(other.survey.public_url).not.toBe(survey.public_url);
  });

  test('closes an active survey, refuses to close a draft and to activate a closed one', async ({
    t,
    org,
  }) => {
    const { survey } = await activeSurvey(t, org);
    const closed = await readOutput(
      await api(t, org, 'POST', `/surveys/${survey._id}/close`),
      TOOL.close_survey,
    );
    expect(closed.survey).toMatchObject({ status: 'closed', public_url: survey.public_url });
    expect(closed.survey.closed_at).not.toBeNull();
    const again = await api(t, org, 'POST', `/surveys/${survey._id}/activate`);
    expect((await readError(again, 400)).code).toBe('invalid_transition');
    const draft = await createSurvey(t, org);
    const close = await api(t, org, 'POST', `/surveys/${draft._id}/close`);
    expect((await readError(close, 400)).message).toBe('draft -> closed is not allowed; allowed: active');
    const back = await api(t, org, 'PATCH', `/surveys/${survey._id}`, { status: 'draft' });
    expect((await readError(back, 400)).code).toBe('invalid_transition');
  });
});

describe('responses and summary', () => {
  test('lists the responses newest first, paged under `responses`', async ({ t, org }) => {
    const { survey, path } = await activeSurvey(t, org);
    for (const nps of [1, 2, 3]) {
      expect((await respond(t, path, { answers: { ...VALID_ANSWERS, nps } })).status).toBe(201);
    }
    const first = await readOutput(
      await api(t, org, 'GET', `/surveys/${survey._id}/responses?limit=2`),
      TOOL.list_survey_responses,
    );
    expect(first).toMatchObject({ total: 3, page: 1, limit: 2, totalPages: 2 });
    expect(first.responses.map((r) => r.answers.nps)).toEqual([3, 2]);
    expect(first.responses[0]).toMatchObject({ survey_id: survey._id, email: null, lead_id: null });
    const second = await readOutput(
      await api(t, org, 'GET', `/surveys/${survey._id}/responses?limit=2&page=2`),
      TOOL.list_survey_responses,
    );
    expect(second.responses.map((r) => r.answers.nps)).toEqual([1]);
  });

  test('counts per option and score, averages, the NPS and the response rate, computed by hand', async ({
    t,
    org,
  }) => {
    const { survey, path } = await activeSurvey(t, org);
    // Eight views of the form.
    for (let i = 0; i < 8; i++) expect((await t.request('GET', path)).status).toBe(200);
    // NPS answers 10, 9, 9, 8, 7, 6, 3: 3 promoters, 2 passives, 2 detractors of 7.
    const rows = [
      { nps: 10, stars: 5, plan: 'Pro', used: ['Leads'], why: 'first' },
      { nps: 9, stars: 4, plan: 'Pro', used: ['Leads', 'Surveys'] },
      { nps: 9, stars: 4, plan: 'Basic', used: ['Invoices'], why: 'third' },
      { nps: 8, stars: 3, plan: 'Max', used: ['Leads'] },
      { nps: 7, stars: 5, plan: 'Pro', used: ['Surveys'] },
      { nps: 6, stars: 2, plan: 'Basic', used: ['Leads', 'Invoices', 'Surveys'], why: 'sixth' },
      { nps: 3, stars: 1, plan: 'Pro', used: ['Leads'] },
    ];
    for (const answers of rows) expect((await respond(t, path, { answers })).status).toBe(201);
    const { summary } = await readOutput(
      await api(t, org, 'GET', `/surveys/${survey._id}/summary`),
      TOOL.get_survey_summary,
    );
    // 7 responses / 8 views = 87.5 %.
    expect(summary).toMatchObject({
      survey_id: survey._id,
      status: 'active',
      views: 8,
      responses: 7,
      response_rate: 87.5,
    });
    const [nps, stars, plan, used, why] = summary.questions;
    // (3 - 2) / 7 = 14.2857 % -> 14.3; mean (10+9+9+8+7+6+3)/7 = 52/7 = 7.43.
    expect(nps).toMatchObject({
      id: 'nps',
      answered: 7,
      skipped: 0,
      average: 7.43,
      nps: { score: 14.3, promoters: 3, passives: 2, detractors: 2 },
    });
    expect(nps?.counts?.map((c) => c.count)).toEqual([0, 0, 0, 1, 0, 0, 1, 1, 1, 2, 1]);
    // (5+4+4+3+5+2+1)/7 = 24/7 = 3.43.
    expect(stars).toMatchObject({ average: 3.43 });
    expect(stars?.counts).toEqual([
      { value: '1', count: 1 },
      { value: '2', count: 1 },
      { value: '3', count: 1 },
      { value: '4', count: 2 },
      { value: '5', count: 2 },
    ]);
    expect(plan?.counts).toEqual([
      { value: 'Basic', count: 2 },
      { value: 'Pro', count: 4 },
      { value: 'Max', count: 1 },
    ]);
    expect(used?.counts).toEqual([
      { value: 'Leads', count: 5 },
      { value: 'Invoices', count: 2 },
      { value: 'Surveys', count: 3 },
    ]);
    expect(why).toMatchObject({ answered: 3, skipped: 4, latest: ['sixth', 'third', 'first'] });
  });

  test('answers a summary with no response: nulls, not zeros or NaN', async ({ t, org }) => {
    const survey = await createSurvey(t, org);
    const { summary } = await readOutput(
      await api(t, org, 'GET', `/surveys/${survey._id}/summary`),
      TOOL.get_survey_summary,
    );
    expect(summary).toMatchObject({ views: 0, responses: 0, response_rate: null });
    expect(summary.questions[0]).toMatchObject({ average: null, nps: { score: null, promoters: 0 } });
  });
});

describe('trash', () => {
  test('moves a survey to the trash (its form then 404s) and restores it with its responses', async ({
    t,
    org,
  }) => {
    const { survey, path } = await activeSurvey(t, org);
    expect((await respond(t, path, { answers: VALID_ANSWERS })).status).toBe(201);
    expect((await api(t, org, 'DELETE', `/surveys/${survey._id}`)).status).toBe(200);
    expect((await api(t, org, 'GET', `/surveys/${survey._id}`)).status).toBe(404);
    expect((await api(t, org, 'GET', `/surveys/${survey._id}/responses`)).status).toBe(404);
    expect((await t.request('GET', path)).status).toBe(404);
    expect((await respond(t, path, { answers: VALID_ANSWERS })).status).toBe(404);
    const restored = await api(t, org, 'POST', `/trash/${survey._id}/restore`);
    expect(restored.status).toBe(200);
    expect((await t.request('GET', path)).status).toBe(200);
    const list = await readOutput(
      await api(t, org, 'GET', `/surveys/${survey._id}/responses`),
      TOOL.list_survey_responses,
    );
    expect(list.total).toBe(1);
  });

  test('purges its responses with it when the trash is emptied', async ({ t, org }) => {
    const { survey, path } = await activeSurvey(t, org);
    expect((await respond(t, path, { answers: VALID_ANSWERS })).status).toBe(201);
    const kept = await activeSurvey(t, org);
    expect((await respond(t, kept.path, { answers: VALID_ANSWERS })).status).toBe(201);
    expect((await api(t, org, 'DELETE', `/surveys/${survey._id}`)).status).toBe(200);
    const responsesOf = (id: string) =>
      t.services.db.system.select().from(surveyResponses).where(eq(surveyResponses.surveyId, id));
    expect(await responsesOf(survey._id)).toHaveLength(1);
    const purged = await purgeExpiredTrash(TRASH_TYPES, t.services, 0, 100, new Date(Date.now() + 60_000));
    expect(purged.survey).toBeGreaterThanOrEqual(1);
    expect(await responsesOf(survey._id)).toEqual([]);
    expect(await responsesOf(kept.survey._id)).toHaveLength(1);
  });
});

describe('access', () => {
  test('answers 402 plan_upgrade_required on the free plan for every surveys route', async ({ t, other }) => {
    const id = 'a'.repeat(24);
    for (const [method, path] of [
      ['GET', '/surveys'],
      ['POST', '/surveys'],
      ['GET', `/surveys/${id}`],
      ['PATCH', `/surveys/${id}`],
      ['DELETE', `/surveys/${id}`],
      ['POST', `/surveys/${id}/activate`],
      ['POST', `/surveys/${id}/close`],
      ['GET', `/surveys/${id}/responses`],
      ['GET', `/surveys/${id}/summary`],
    ] as const) {
      const res = await api(
        t,
        other,
        method,
        path,
        method === 'POST' || method === 'PATCH' ? { name: 'x' } : undefined,
      );
      expect(await readError(res, 402), `${method} ${path}`).toMatchObject({
        error: 'plan_upgrade_required',
        feature: 'surveys',
        current_plan: 'free',
      });
    }
  });

  test('answers 402 on starter, and feature_disabled when the organization switched surveys off', async ({
    t,
  }) => {
    const starter = await t.createOrg({ plan: 'starter', name: 'Starter' });
    expect((await readError(await api(t, starter, 'GET', '/surveys'), 402)).error).toBe(
      'plan_upgrade_required',
    );
    const off = await t.createOrg({ plan: 'enterprise', name: 'Switched off' });
    await t.services.db.system
      .update(organizations)
      .set({ disabledFeatures: ['surveys'] })
      .where(eq(organizations.id, off.orgId));
    expect((await readError(await api(t, off, 'GET', '/surveys'), 402)).error).toBe('feature_disabled');
  });

  test('lets viewers read but not create, edit, activate or delete', async ({ t, org }) => {
    const { survey } = await activeSurvey(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    for (const path of [
      `/surveys/${survey._id}`,
      '/surveys',
      `/surveys/${survey._id}/responses`,
      `/surveys/${survey._id}/summary`,
    ]) {
      expect((await api(t, viewer, 'GET', path)).status, path).toBe(200);
    }
    expect((await api(t, viewer, 'POST', '/surveys', { name: 'No' })).status).toBe(403);
    expect((await api(t, viewer, 'PATCH', `/surveys/${survey._id}`, { name: 'No' })).status).toBe(403);
    expect((await api(t, viewer, 'POST', `/surveys/${survey._id}/close`)).status).toBe(403);
    expect((await api(t, viewer, 'DELETE', `/surveys/${survey._id}`)).status).toBe(403);
    const member = await t.createUser(org.orgId, 'member');
    expect((await api(t, member, 'POST', '/surveys', { name: 'Yes' })).status).toBe(201);
  });

  test('needs read:content to read and write:content to write on a key', async ({ t, org }) => {
    const { survey } = await activeSurvey(t, org);
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:content']);
    expect((await api(t, reader, 'GET', `/surveys/${survey._id}/summary`)).status).toBe(200);
    const write = await api(t, reader, 'POST', '/surveys', { name: 'No' });
    expect((await readError(write, 403)).code).toBe('scope_missing');
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:content', 'write:content']);
    expect((await api(t, writer, 'POST', '/surveys', { name: 'Yes' })).status).toBe(201);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    expect((await api(t, leadsOnly, 'GET', '/surveys')).status).toBe(403);
  });

  test("answers 404 for another organization's survey on every route", async ({ t, org }) => {
    const { survey } = await activeSurvey(t, org);
    const rival = await t.createOrg({ plan: 'pro', name: 'Rival' });
    for (const [method, path] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/activate'],
      ['POST', '/close'],
      ['GET', '/responses'],
      ['GET', '/summary'],
    ] as const) {
      const res = await api(
        t,
        rival,
        method,
        `/surveys/${survey._id}${path}`,
        method === 'PATCH' ? { name: 'x' } : undefined,
      );
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const got = await readOutput(await api(t, org, 'GET', `/surveys/${survey._id}`), TOOL.get_survey);
    expect(got.survey).toMatchObject({ status: 'active', name: survey.name });
  });
});

describe('over MCP', () => {
  const mcpCall = (t: TestContext, org: { token: string }, name: string, args: Record<string, unknown>) =>
    callToolOverMcp(t, org, 'surveys', name, args);

  test('creates, activates and summarizes a survey through the surveys toolset', async ({ t, org }) => {
    const created = await mcpCall(t, org, 'create_survey', {
      name: 'Over MCP',
      questions: [{ type: 'nps', text: 'Score?', required: true }],
    });
    const surveyOf = (content: unknown) =>
      z.object({ survey: TOOL.get_survey.output.shape.survey }).parse(content).survey;
    const { _id: id } = surveyOf(created.structuredContent);
    const activated = surveyOf((await mcpCall(t, org, 'activate_survey', { id })).structuredContent);
    expect(activated.status).toBe('active');
    const url = activated.public_url ?? '';
    expect(url).toMatch(/\/s\/[A-Za-z0-9_-]{43}$/);
    expect((await respond(t, new URL(url).pathname, { answers: { q1: 10 } })).status).toBe(201);
    const summary = await mcpCall(t, org, 'get_survey_summary', { id });
    expect(summary.structuredContent).toMatchObject({
      summary: { responses: 1, questions: [{ id: 'q1', nps: { score: 100, promoters: 1 } }] },
    });
    const refused = await mcpCall(t, org, 'activate_survey', { id: 'f'.repeat(24) });
    expect(refused.isError).toBe(true);
  });
});

describe('declarations', () => {
  test('puts every tool in the surveys toolset with honest annotations', () => {
    const names = [
      'list_surveys',
      'get_survey',
      'create_survey',
      'update_survey',
      'delete_survey',
      'activate_survey',
      'close_survey',
      'list_survey_responses',
      'get_survey_summary',
    ] as const;
    for (const name of names) {
      expect(TOOL[name].toolset, name).toBe('surveys');
      expect(TOOL[name].access, name).toMatchObject({ resource: 'content', feature: 'surveys' });
    }
    for (const name of [
      'list_surveys',
      'get_survey',
      'list_survey_responses',
      'get_survey_summary',
    ] as const) {
      expect(TOOL[name].annotations, name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
    for (const name of ['activate_survey', 'close_survey'] as const) {
      expect(TOOL[name].annotations, name).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        openWorldHint: false,
      });
    }
    expect(TOOL.delete_survey.annotations).toMatchObject({ destructiveHint: true });
  });

  test('declares the surveys feature on pro, form.submitted, and the content scope family', () => {
    expect(CATALOGUE.eventNames).toContain('form.submitted');
    expect(CATALOGUE.plans.lowest.get('surveys')).toBe('pro');
  });
});
