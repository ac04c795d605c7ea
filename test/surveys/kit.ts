// The test kit of tools/surveys (test/README.md "Test kits"): the bodies of its write routes, a
// victim survey (active, so its activate/close/responses/summary routes all address it), the status
// machine driven over REST, and a few surveys for the fuzz.

import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { surveys } from '../../tools/surveys/tables.ts';
import { defineKit, type KitScope, NAME_BODY, NO_BODY } from '../fixtures/kit.ts';
import { createAt, readAt } from '../fixtures/kit-helpers.ts';
import { readOutput } from '../fixtures/read.ts';
import { TOOL } from '../fixtures/tools.ts';

export const KIT_QUESTIONS = [
  { id: 'score', type: 'nps', text: 'How likely are you to recommend us?', required: true },
];

/** The request that moves a survey to `to`: its action routes, or a PATCH of `status` (the only way to ask for draft). */
function moveSurvey({ t, org }: KitScope, id: string, to: string): Promise<Response> {
  const base = `/api/v1/surveys/${id}`;
  if (to === 'active') return t.request('POST', `${base}/activate`, { token: org.token });
  if (to === 'closed') return t.request('POST', `${base}/close`, { token: org.token });
  return t.request('PATCH', base, { token: org.token, body: { status: to } });
}

export const kit = defineKit({
  area: 'surveys',
  bodies: {
    create_survey: {
      body: { name: 'Valid name', questions: KIT_QUESTIONS, thank_you_message: 'Thanks' },
      text: 'thank_you_message',
    },
    update_survey: NAME_BODY,
    delete_survey: NO_BODY,
    activate_survey: NO_BODY,
    close_survey: NO_BODY,
  },
  victims: {
    '/surveys': async ({ t, org }) => {
      const id = newId();
      await t.services.db.system.insert(surveys).values({
        id,
        orgId: org.orgId,
        name: 'Victim survey',
        questions: [{ id: 'score', type: 'nps', text: 'Score?', required: true }],
        status: 'active',
      });
      return { id, read: () => t.services.db.system.select().from(surveys).where(eq(surveys.id, id)) };
    },
  },
  machines: {
    survey: {
      moves: 'draft -> active; active -> closed; closed (final)',
      field: 'status',
      driver: (scope) => ({
        create: () =>
          createAt(scope, '/api/v1/surveys', 'survey', { name: 'Machine survey', questions: KIT_QUESTIONS }),
        move: (id, to) => moveSurvey(scope, id, to),
        read: (id) => readAt(scope, `/api/v1/surveys/${id}`, 'survey'),
        stateOf: (record) => String(record.status),
      }),
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      for (const n of [1, 2, 3])
        await seed('/api/v1/surveys', { name: `Fuzz survey ${n}`, questions: KIT_QUESTIONS });
    },
  },
  // form.submitted: a JSON response on the public form of an activated survey.
  events: async (scope) => {
    const { t, org } = scope;
    const surveyId = await createAt(scope, '/api/v1/surveys', 'survey', {
      name: 'Payload survey',
      questions: [{ id: 'score', type: 'nps', text: 'How likely?', required: true }],
    });
    const activated = await t.request('POST', `/api/v1/surveys/${surveyId}/activate`, { token: org.token });
    const { survey } = await readOutput(activated, TOOL.activate_survey);
    const answered = await t.request('POST', `${new URL(survey.public_url ?? '').pathname}/responses`, {
      body: { answers: { score: 9 }, email: 'buyer@mail.example' },
    });
    expect(answered.status).toBe(201);
  },
});
