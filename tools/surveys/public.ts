// The public survey form (outside /api/v1, no user token, the per-IP public limit): GET /s/{token}
// shows the form of an active survey (and counts the view) or says it is closed; POST
// /s/{token}/responses records a response from a JSON body (JSON answers: 201 {response, message,
// thank_you_message}) or from the HTML form (the thank-you page, or the form again with the errors
// next to the fields and the values kept). The token is the only credential: it is looked up by its
// SHA-256 with system access, then the response is written in the survey's own tenant transaction
// with its `form.submitted` event. A malformed or unknown token, a survey in the trash, or an
// organization whose plan lacks surveys (or that is not active) is a plain 404; a closed survey
// refuses responses with 409.
import { z } from 'zod';
import { checkFeature } from '../../core/access.ts';
import type { PublicRequest, PublicRoute } from '../../core/area.ts';
import { AppError, type ErrorDetail, notFound, toAppError } from '../../core/errors.ts';
import { recordEvent } from '../../core/events.ts';
import { type HtmlPage, htmlResponse } from '../../core/html-page.ts';
import { zodDetails } from '../../core/invoke.ts';
import { getOrganization } from '../../core/organizations.ts';
import type { Services } from '../../core/services.ts';
import { surveysCatalogue } from './catalogue.ts';
import {
  closedPage,
  DEFAULT_THANK_YOU,
  messagePage,
  notFoundPage,
  surveyFormPage,
  thankYouPage,
} from './page.ts';
import { answersOfForm, checkAnswers } from './questions.ts';
import { countView, findByToken, insertResponse, surveyForResponse } from './store.ts';
import type { SurveyRow } from './tables.ts';

const jsonInput = z.strictObject({
  answers: z.record(z.string(), z.unknown()),
  email: z.string().trim().max(320).optional(),
});
const emailSchema = z.email().max(320);

function jsonResponse(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

const isJson = (request: Request) =>
  /^application\/([a-z.+-]*\+)?json\b/i.test(request.headers.get('content-type') ?? '');

const tokenOf = (request: PublicRequest) => request.params.token ?? '';

/** The live survey a token opens for a public visitor, or the plain 404 (also when its organization may not use surveys). */
async function surveyOf(services: Services, token: string): Promise<SurveyRow> {
  const row = await findByToken(services.db.system, token);
  if (row === null) throw notFound('Survey');
  const org = await getOrganization(services.db.system, row.orgId);
  const lowest = surveysCatalogue.features.surveys;
  if (org.status !== 'active' || !checkFeature(org.plan, org.disabledFeatures, 'surveys', lowest).ok) {
    throw notFound('Survey');
  }
  return row;
}

function closed(): AppError {
  return new AppError('conflict', {
    error: 'Survey closed',
    message: 'This survey is closed and no longer takes responses',
  });
}

/** What a respondent sent, in the same shape from JSON and from the form. */
interface Submission {
  answers: Record<string, unknown>;
  email: string | undefined;
  /** Details of a body that is not even the right shape (JSON only). */
  shape: ErrorDetail[];
}

function submissionOf(survey: SurveyRow, body: Record<string, unknown>, json: boolean): Submission {
  if (json) {
    const parsed = jsonInput.safeParse(body);
    if (!parsed.success) return { answers: {}, email: undefined, shape: zodDetails(parsed.error) };
    const email = parsed.data.email === '' ? undefined : parsed.data.email;
    // The answers as sent, own keys only: zod's copy would drop a `__proto__` key instead of refusing it.
    const raw = body.answers;
    const answers = typeof raw === 'object' && raw !== null ? Object.fromEntries(Object.entries(raw)) : {};
    return { answers, email, shape: [] };
  }
  const raw = typeof body.email === 'string' ? body.email.trim() : '';
  return { answers: answersOfForm(survey.questions, body), email: raw === '' ? undefined : raw, shape: [] };
}

/** The answers and e-mail checked together: every refusal is one detail (answers.<id>, email). */
function checkSubmission(survey: SurveyRow, sent: Submission) {
  if (sent.shape.length > 0) return { details: sent.shape, answers: {}, email: null };
  const checked = checkAnswers(survey.questions, sent.answers);
  const details = [...checked.details];
  let email: string | null = null;
  if (sent.email !== undefined) {
    if (emailSchema.safeParse(sent.email).success) email = sent.email;
    else details.push({ field: 'email', message: 'must be an e-mail address', code: 'invalid_format' });
  } else if (survey.onePerEmail) {
    details.push({
      field: 'email',
      message: 'is required: this survey takes one response per e-mail',
      code: 'required',
    });
  }
  return { details, answers: checked.answers, email };
}

function formAgain(survey: SurveyRow, token: string, sent: Submission, error: AppError): HtmlPage {
  const errors = new Map((error.body.details ?? []).map((d) => [d.field, d.message]));
  return surveyFormPage(
    survey,
    `/s/${token}/responses`,
    { answers: sent.answers, email: sent.email ?? '', errors },
    error.status,
  );
}

function errorPage(error: AppError): HtmlPage {
  if (error.status === 404) return notFoundPage();
  if (error.status === 400) {
    return messagePage(400, 'Please check the form', error.body.message ?? 'The form is not valid.');
  }
  return messagePage(error.status, 'Something went wrong', 'Please try again later.');
}

function logged(services: Services, request: PublicRequest, err: unknown): AppError {
  const error = toAppError(err);
  if (error.code === 'internal') {
    services.logger.error({ err, requestId: request.requestId }, 'public survey form failed');
  }
  return error;
}

async function submit(request: PublicRequest, services: Services): Promise<Response> {
  const json = isJson(request.raw);
  const token = tokenOf(request);
  let survey: SurveyRow | null = null;
  let sent: Submission | null = null;
  try {
    survey = await surveyOf(services, token);
    const found = survey;
    if (found.status !== 'active') throw closed();
    const submission = submissionOf(found, await request.body({ forms: true }), json);
    sent = submission;
    const checked = checkSubmission(found, submission);
    if (checked.details.length > 0) {
      throw new AppError('validation_failed', {
        message: 'Some answers are not valid',
        details: checked.details,
      });
    }
    const row = await services.db.withTenant(found.orgId, async (tx) => {
      // The status again inside the transaction, share-locked: a close that committed meanwhile wins.
      const now = new Date();
      const current = await surveyForResponse(tx, found.orgId, found.id);
      if (current === null) throw notFound('Survey');
      if (current.status !== 'active') throw closed();
      return insertResponse(
        {
          db: tx,
          orgId: found.orgId,
          now,
          emit: async (event, data) => void (await recordEvent(tx, found.orgId, event, data)),
        },
        current,
        checked.answers,
        checked.email,
      );
    });
    if (json) {
      return jsonResponse(
        {
          response: { _id: row.id, submitted_at: row.createdAt.toISOString() },
          message: 'Response recorded',
          thank_you_message: found.thankYouMessage ?? DEFAULT_THANK_YOU,
        },
        201,
      );
    }
    return htmlResponse(thankYouPage(found));
  } catch (err) {
    const error = logged(services, request, err);
    if (json) return jsonResponse(error.body, error.status);
    if (survey !== null && error.code === 'conflict' && error.body.error === 'Survey closed') {
      return htmlResponse(closedPage(survey, 409));
    }
    if (survey !== null && sent !== null && (error.status === 400 || error.status === 409)) {
      return htmlResponse(formAgain(survey, token, sent, error));
    }
    return htmlResponse(errorPage(error));
  }
}

export const surveyPublicRoutes: PublicRoute[] = [
  {
    method: 'GET',
    path: '/s/:token',
    async handle(request, services) {
      const token = tokenOf(request);
      try {
        const survey = await surveyOf(services, token);
        if (survey.status !== 'active') return htmlResponse(closedPage(survey, 200));
        await services.db.withTenant(survey.orgId, (tx) => countView(tx, survey.orgId, survey.id));
        return htmlResponse(surveyFormPage(survey, `/s/${token}/responses`));
      } catch (err) {
        return htmlResponse(errorPage(logged(services, request, err)));
      }
    },
  },
  { method: 'POST', path: '/s/:token/responses', handle: submit },
];
