// The public proposal page (outside /api/v1, no user token): GET /p/{token} shows the proposal,
// POST /p/{token}/accept and /p/{token}/decline answer it, with a JSON body (JSON answers) or an
// HTML form (HTML pages). The token is the only credential: it is looked up by its SHA-256 with
// system access, then the answer is written in the proposal's own tenant transaction with its
// events. A malformed, unknown or superseded token is a plain 404 whatever the request; an expired
// proposal answers 404 too, saying "expired" only to a holder of its valid token.
import { z } from 'zod';
import type { PublicRequest, PublicRoute } from '../../core/area.ts';
import { AppError, notFound, toAppError } from '../../core/errors.ts';
import { recordEvent } from '../../core/events.ts';
import { type HtmlPage, htmlResponse } from '../../core/html-page.ts';
import { zodDetails } from '../../core/invoke.ts';
import type { Services } from '../../core/services.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { documentParties } from '../documents/parties.ts';
import { messagePage, notFoundPage, type ProposalParties, proposalPage } from './page.ts';
import {
  acceptProposal,
  declineProposal,
  findByToken,
  isExpired,
  type ProposalData,
  type ProposalRecord,
  type PublicActionContext,
  serializeProposal,
} from './store.ts';

const text = (max: number) => z.string().trim().max(max).refine(NO_NUL, nulMessage);
/** An empty optional form field means "not given". */
const optionalText = (max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    text(max).min(1).optional(),
  );

const acceptInput = z.strictObject({
  name: text(200).min(1),
  email: z.email().max(320),
  signature: optionalText(200),
});
const declineInput = z.strictObject({ reason: optionalText(2000) });

/** What the public JSON answers show of a proposal: nothing internal (ids, users, the lead). */
function publicView(p: ProposalRecord) {
  return {
    title: p.title,
    status: p.status,
    accepted_at: p.accepted_at,
    accepted_by: p.accepted_by,
    signed: p.signed,
    declined_at: p.declined_at,
    decline_reason: p.decline_reason,
  };
}

function jsonResponse(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

const isJson = (request: Request) =>
  /^application\/([a-z.+-]*\+)?json\b/i.test(request.headers.get('content-type') ?? '');

/**
 * The proposal a token names, or the plain 404. The page of an expired proposal is a 404 saying so
 * (only a holder of the valid token learns it); an answer to it reaches the status machine, which
 * refuses it with the 400 invalid_transition.
 */
async function proposalOf(services: Services, token: string, forAnswer = false): Promise<ProposalData> {
  const row = await findByToken(services.db.system, token);
  if (row === null) throw notFound('Proposal');
  if (!forAnswer && isExpired(row, new Date())) {
    throw new AppError('not_found', { error: 'Proposal not found', message: 'This proposal has expired' });
  }
  return row;
}

function errorPage(error: AppError): HtmlPage {
  if (error.status === 404) {
    return error.body.message === 'This proposal has expired'
      ? messagePage(404, 'Proposal expired', 'This proposal has expired. Ask the sender for a new one.')
      : notFoundPage();
  }
  if (error.code === 'invalid_transition') {
    return messagePage(
      400,
      'This proposal cannot be answered',
      error.body.message ?? 'It was already answered.',
    );
  }
  if (error.status === 400) {
    const fields = (error.body.details ?? []).map((d) => `${d.field} ${d.message}`).join('; ');
    return messagePage(
      400,
      'Please check the form',
      fields || (error.body.message ?? 'The form is not valid.'),
    );
  }
  return messagePage(error.status, 'Something went wrong', 'Please try again later.');
}

/** Runs one public action and answers it as JSON or HTML, as the request was. */
async function answer(
  request: PublicRequest,
  services: Services,
  act: () => Promise<{ json: unknown; page: HtmlPage }>,
): Promise<Response> {
  const json = isJson(request.raw);
  try {
    const done = await act();
    return json ? jsonResponse(done.json, 200) : htmlResponse(done.page);
  } catch (err) {
    const error = toAppError(err);
    if (error.code === 'internal') {
      services.logger.error({ err, requestId: request.requestId }, 'public proposal page failed');
    }
    return json ? jsonResponse(error.body, error.status) : htmlResponse(errorPage(error));
  }
}

function actionContext(services: Services, orgId: string) {
  return <T>(fn: (ctx: PublicActionContext) => Promise<T>): Promise<T> =>
    services.db.withTenant(orgId, (tx) =>
      fn({
        db: tx,
        orgId,
        now: new Date(),
        emit: async (event, data) => void (await recordEvent(tx, orgId, event, data)),
      }),
    );
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new AppError('validation_failed', { details: zodDetails(parsed.error) });
  return parsed.data;
}

const tokenOf = (request: PublicRequest) => request.params.token ?? '';

export const proposalPublicRoutes: PublicRoute[] = [
  {
    method: 'GET',
    path: '/p/:token',
    async handle(request, services) {
      const token = tokenOf(request);
      try {
        const row = await proposalOf(services, token);
        const parties = await services.db.withTenant(row.orgId, (tx) =>
          documentParties(
            tx,
            { orgId: row.orgId, leadId: row.leadId, contactId: null },
            services.config.mailFrom,
          ),
        );
        const names: ProposalParties = {
          from: parties.seller.name,
          to: parties.buyer.name,
          attention: parties.buyer.lines[0] ?? null,
        };
        return htmlResponse(proposalPage(serializeProposal(row), names, `/p/${token}`));
      } catch (err) {
        const error = toAppError(err);
        if (error.code === 'internal') services.logger.error({ err }, 'public proposal page failed');
        return htmlResponse(errorPage(error));
      }
    },
  },
  {
    method: 'POST',
    path: '/p/:token/accept',
    handle: (request, services) =>
      answer(request, services, async () => {
        const row = await proposalOf(services, tokenOf(request), true);
        const input = parse(acceptInput, await request.body({ forms: true }));
        const record = await actionContext(services, row.orgId)((ctx) => acceptProposal(ctx, row.id, input));
        return {
          json: { proposal: publicView(record) },
          page: messagePage(
            200,
            'Thank you',
            `You accepted "${record.title}"${input.signature === undefined ? '' : ' and signed it'}. ${
              record.accepted_by ? `A confirmation was recorded for ${record.accepted_by.email}.` : ''
            }`.trim(),
          ),
        };
      }),
  },
  {
    method: 'POST',
    path: '/p/:token/decline',
    handle: (request, services) =>
      answer(request, services, async () => {
        const row = await proposalOf(services, tokenOf(request), true);
        const input = parse(declineInput, await request.body({ forms: true }));
        const record = await actionContext(
          services,
          row.orgId,
        )((ctx) => declineProposal(ctx, row.id, input.reason));
        return {
          json: { proposal: publicView(record) },
          page: messagePage(
            200,
            'Proposal declined',
            `You declined "${record.title}". Thank you for letting us know.`,
          ),
        };
      }),
  },
];
