// Survey tools: list, get, create, update and delete (to the trash), activate and close, the
// responses and the summary. Every tool needs the plan feature `surveys` and sits in the scope
// family `content` (read:content / write:content). This file declares the tools; the data
// functions are store.ts, the answer rules questions.ts, the summary summary.ts.
import { z } from 'zod';
import type { Permission } from '../../core/access.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { describeMoves } from '../../core/state-machine.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool, type ToolContext } from '../../core/tool.ts';
import { questionsInputSchema } from './questions.ts';
import {
  activateSurvey,
  answersOfSurvey,
  closeSurvey,
  insertSurvey,
  listResponsesPage,
  listSurveysPage,
  responseSchema,
  type SurveyLinks,
  serializeSurvey,
  surveyRecords,
  surveySchema,
  surveyStatusMachine,
  writeSurvey,
} from './store.ts';
import { summarize, summarySchema } from './summary.ts';

const MAX_NAME = 200;
const MAX_DESCRIPTION = 2000;
const MAX_THANK_YOU = 1000;

const text = (max: number) => z.string().trim().min(1).max(max).refine(NO_NUL, nulMessage);
const nameField = text(MAX_NAME).describe(`Name of the survey, 1-${MAX_NAME} characters`);
const descriptionField = text(MAX_DESCRIPTION).describe(
  `What the survey is about, shown above the form, 1-${MAX_DESCRIPTION} characters`,
);
const thankYouField = text(MAX_THANK_YOU).describe(
  `Shown to a respondent after a response, 1-${MAX_THANK_YOU} characters`,
);
const onePerEmailField = z
  .boolean()
  .describe(
    'When true every response needs an e-mail and a second response for the same e-mail (case-insensitive) is refused with 409 (default false); fixed once activated',
  );
const idShape = { id: objectId('survey') };
const output = z.object({ survey: surveySchema });
const SORT_FIELDS = ['name', 'created_at', 'updated_at'] as const;
const MOVES = describeMoves(surveyStatusMachine);

type SurveyPermission = Extract<Permission, `surveys.${string}`>;
/** Surveys are in the content scope family (read:content / write:content) and need the plan feature. */
const access = (kind: 'read' | 'write', permission: SurveyPermission) =>
  ({ kind, resource: 'content', permission, feature: 'surveys' }) as const;

const linksOf = (ctx: Pick<ToolContext, 'services'>): SurveyLinks => ({
  baseUrl: ctx.services.config.publicBaseUrl,
  secrets: ctx.services.secrets,
});

export const listSurveys = defineTool({
  name: 'list_surveys',
  title: 'List surveys',
  description:
    "Lists the organization's live surveys, newest first by default; `status` filters (draft, active, closed), `search` " +
    'matches words in the name. Paginated: returns `surveys` plus `total`, `page`, `limit`, `totalPages`; request page 1, ' +
    'then increment `page` until page >= totalPages. Needs a plan with surveys.',
  input: z.strictObject({
    ...listParams(SORT_FIELDS),
    status: surveyStatusMachine.schema.optional().describe('Only surveys in this status'),
  }),
  output: pagedOutput('surveys', surveySchema),
  access: access('read', 'surveys.view'),
  toolset: 'surveys',
  handler: (input, ctx) => listSurveysPage(ctx.db, ctx.auth.orgId, input, linksOf(ctx)),
});

export const getSurvey = defineTool({
  name: 'get_survey',
  title: 'Get a survey',
  description:
    'Returns one survey by id (find ids with list_surveys) with its questions, status and, once activated, the ' +
    '`public_url` of its form. Trashed ones answer 404.',
  input: z.strictObject(idShape),
  output,
  access: access('read', 'surveys.view'),
  toolset: 'surveys',
  async handler(input, ctx) {
    return {
      survey: serializeSurvey(await surveyRecords.getLive(ctx.db, ctx.auth.orgId, input.id), linksOf(ctx)),
    };
  },
});

export const createSurvey = defineTool({
  name: 'create_survey',
  title: 'Create a survey',
  description:
    'Creates a draft survey with its questions (nps, rating, single_choice, multiple_choice, text; ids q1, q2, ... assigned when left out). Publish it with activate_survey.',
  input: z.strictObject({
    name: nameField,
    description: descriptionField.optional(),
    questions: questionsInputSchema.optional(),
    thank_you_message: thankYouField.optional(),
    one_response_per_email: onePerEmailField.optional(),
  }),
  output,
  access: access('write', 'surveys.create'),
  toolset: 'surveys',
  async handler(input, ctx) {
    return { survey: serializeSurvey(await insertSurvey(ctx, input), linksOf(ctx)) };
  },
});

export const updateSurvey = defineTool({
  name: 'update_survey',
  title: 'Update a survey',
  description: `Changes only the fields sent of a survey; null clears \`description\` and \`thank_you_message\`. \`questions\` (replaced whole) and \`one_response_per_email\` change only while a draft (sending them unchanged later is accepted). \`status\` moves it: ${MOVES}.`,
  errors: [
    {
      code: 'invalid_operation',
      when: 'questions or one_response_per_email would change on an active or closed survey',
    },
    { code: 'invalid_transition', when: 'status names a move the survey cannot make' },
  ],
  input: z.strictObject({
    ...idShape,
    name: nameField.optional(),
    description: descriptionField
      .nullable()
      .optional()
      .describe(`What the survey is about, 1-${MAX_DESCRIPTION} characters; null clears it`),
    questions: questionsInputSchema.optional(),
    thank_you_message: thankYouField
      .nullable()
      .optional()
      .describe(`Shown after a response, 1-${MAX_THANK_YOU} characters; null restores the default message`),
    one_response_per_email: onePerEmailField.optional(),
    status: surveyStatusMachine.schema
      .optional()
      .describe(
        'Moves the survey, as activate_survey (active) and close_survey (closed) do; applied after the other fields',
      ),
  }),
  output,
  access: access('write', 'surveys.edit'),
  annotations: { idempotentHint: true },
  toolset: 'surveys',
  async handler({ id, status, ...changes }, ctx) {
    const written = await writeSurvey(ctx, id, changes);
    const row =
      status === 'active'
        ? await activateSurvey(ctx, ctx.services.secrets, id)
        : status === 'closed'
          ? await closeSurvey(ctx, id)
          : written;
    if (status === 'draft') surveyStatusMachine.assertMove(surveyStatusMachine.parse(row.status), 'draft');
    return { survey: serializeSurvey(row, linksOf(ctx)) };
  },
});

export const deleteSurvey = defineTool({
  name: 'delete_survey',
  title: 'Delete a survey',
  description:
    'Moves a survey to the trash with its responses: it disappears from list_surveys, its public form answers 404, and it ' +
    'can be brought back with restore_trash_item.',
  input: z.strictObject(idShape),
  output: messageOutput,
  access: access('write', 'surveys.delete'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: 'surveys',
  async handler(input, ctx) {
    await surveyRecords.trash(ctx, input.id);
    return { message: 'Survey moved to the trash' };
  },
});

export const activateSurveyTool = defineTool({
  name: 'activate_survey',
  title: 'Activate a survey',
  description:
    'Publishes a draft survey: it needs at least one question, its questions are frozen from then on, and its public form ' +
    'opens at the returned `public_url` (share it: anyone with the link may answer). Activating an active survey changes ' +
    `nothing; a closed one cannot be activated again. Moves: ${MOVES}.`,
  errors: [
    { code: 'invalid_transition', when: 'the survey is closed' },
    { code: 'validation_failed', when: 'the survey has no question' },
  ],
  input: z.strictObject(idShape),
  output,
  access: access('write', 'surveys.edit'),
  annotations: { idempotentHint: true },
  toolset: 'surveys',
  async handler(input, ctx) {
    return {
      survey: serializeSurvey(await activateSurvey(ctx, ctx.services.secrets, input.id), linksOf(ctx)),
    };
  },
});

export const closeSurveyTool = defineTool({
  name: 'close_survey',
  title: 'Close a survey',
  description:
    'Closes an active survey: its public form then says it is closed and refuses responses (409). The responses and the ' +
    `summary stay readable. Closing a closed survey changes nothing; a draft cannot be closed. Moves: ${MOVES}.`,
  errors: [{ code: 'invalid_transition', when: 'the survey is a draft' }],
  input: z.strictObject(idShape),
  output,
  access: access('write', 'surveys.edit'),
  annotations: { idempotentHint: true },
  toolset: 'surveys',
  async handler(input, ctx) {
    return { survey: serializeSurvey(await closeSurvey(ctx, input.id), linksOf(ctx)) };
  },
});

const { page, limit } = listParams(['created_at']);

export const listSurveyResponses = defineTool({
  name: 'list_survey_responses',
  title: 'List the responses of a survey',
  description:
    'Lists the responses of one survey, newest first: each with its answers by question id, the e-mail given and the lead ' +
    'it was linked to (the lead whose contact has that e-mail). Paginated: returns `responses` plus `total`, `page`, ' +
    '`limit`, `totalPages`; request page 1, then increment `page` until page >= totalPages.',
  input: z.strictObject({ ...idShape, page, limit }),
  output: pagedOutput('responses', responseSchema),
  access: access('read', 'surveys.view'),
  toolset: 'surveys',
  handler: (input, ctx) => listResponsesPage(ctx.db, ctx.auth.orgId, input.id, input),
});

export const getSurveySummary = defineTool({
  name: 'get_survey_summary',
  title: 'Summarize a survey',
  description:
    "Counts a survey's responses: total, response rate (responses / views of the public form, percent), and per question " +
    'the counts per option or score, the average score (nps, rating), the NPS (% promoters 9-10 minus % detractors 0-6) and ' +
    'the latest text answers.',
  input: z.strictObject(idShape),
  output: z.object({ summary: summarySchema }),
  access: access('read', 'surveys.view'),
  toolset: 'surveys',
  async handler(input, ctx) {
    const survey = await surveyRecords.getLive(ctx.db, ctx.auth.orgId, input.id);
    const answers = await answersOfSurvey(ctx.db, ctx.auth.orgId, survey.id);
    return {
      summary: summarize(
        { id: survey.id, status: survey.status, questions: survey.questions, views: survey.viewCount },
        answers,
      ),
    };
  },
});

export const surveyTools = [
  listSurveys,
  getSurvey,
  createSurvey,
  updateSurvey,
  deleteSurvey,
  activateSurveyTool,
  closeSurveyTool,
  listSurveyResponses,
  getSurveySummary,
];
