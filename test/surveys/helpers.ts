// Builders of the surveys tests: a survey through its REST routes (created, activated), the path of
// its public form, a JSON or form response to it, and the form.submitted rows of the outbox.
import { and, eq, sql } from 'drizzle-orm';
import { outboxEvents } from '../../core/db/schema.ts';
import { type Caller, type InputOf, readOutput, type TestContext, TOOL } from '../fixtures/index.ts';

/** One question of each type, every one required but the text. */
export const EVERY_TYPE: NonNullable<InputOf<'create_survey'>['questions']> = [
  { id: 'nps', type: 'nps', text: 'How likely are you to recommend us?', required: true },
  { id: 'stars', type: 'rating', text: 'Rate the onboarding', required: true, min: 1, max: 5 },
  {
    id: 'plan',
    type: 'single_choice',
    text: 'Which plan?',
    required: true,
    options: ['Basic', 'Pro', 'Max'],
  },
  {
    id: 'used',
    type: 'multiple_choice',
    text: 'What do you use?',
    required: true,
    options: ['Leads', 'Invoices', 'Surveys'],
  },
  { id: 'why', type: 'text', text: 'Anything else?', required: false },
];

export type Survey = Awaited<ReturnType<typeof createSurvey>>;

/** POST /surveys (create_survey); a draft with one question of each type unless told otherwise. */
export async function createSurvey(
  t: TestContext,
  as: Caller,
  input: Partial<InputOf<'create_survey'>> = {},
) {
  const res = await t.request('POST', '/api/v1/surveys', {
    token: as.token,
    body: { name: 'Customer survey', questions: EVERY_TYPE, ...input },
  });
  return (await readOutput(res, TOOL.create_survey, 201)).survey;
}

/** POST /surveys/{id}/activate, expecting 200. */
export async function activateSurvey(t: TestContext, as: Caller, id: string) {
  const res = await t.request('POST', `/api/v1/surveys/${id}/activate`, { token: as.token });
  return (await readOutput(res, TOOL.activate_survey)).survey;
}

/** The path of a survey's public form (`/s/{token}`), from its public_url. */
export function formPath(survey: { public_url: string | null }): string {
  if (survey.public_url === null) throw new Error('the survey has no public_url');
  return new URL(survey.public_url).pathname;
}

/** An active survey and the path of its form. */
export async function activeSurvey(
  t: TestContext,
  as: Caller,
  input: Partial<InputOf<'create_survey'>> = {},
) {
  const survey = await activateSurvey(t, as, (await createSurvey(t, as, input))._id);
  return { survey, path: formPath(survey) };
}

/** Valid answers to EVERY_TYPE. */
export const VALID_ANSWERS = { nps: 9, stars: 4, plan: 'Pro', used: ['Leads', 'Surveys'], why: 'Great' };

/** POST /s/{token}/responses with a JSON body. */
export function respond(
  t: TestContext,
  path: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return t.request('POST', `${path}/responses`, { body, headers });
}

/** POST /s/{token}/responses as the HTML form posts it (urlencoded). */
export function respondWithForm(t: TestContext, path: string, fields: readonly [string, string][]) {
  return t.app.request(`${path}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams([...fields]).toString(),
  });
}

/** The form.submitted payloads of one survey in the outbox, oldest first. */
export async function submittedEvents(t: TestContext, orgId: string, surveyId: string) {
  const rows = await t.services.db.system
    .select({ data: outboxEvents.data })
    .from(outboxEvents)
    .where(
      and(
        eq(outboxEvents.orgId, orgId),
        eq(outboxEvents.event, 'form.submitted'),
        sql`${outboxEvents.data}->>'survey_id' = ${surveyId}`,
      ),
    )
    .orderBy(outboxEvents.createdAt, outboxEvents.id);
  return rows.map((r) => r.data);
}
