// The password reset's public routes (no bearer token): the two API routes under /api/v1/auth, on
// the auth limiter the HTTP root applies there and documented in the OpenAPI document through their
// `operation`, and the page of the mail's link with its form. Errors of the API routes are thrown
// as AppError and answered in the house's envelope by the HTTP root; the page answers its own.
import type { PublicRequest, PublicRoute } from '../../core/area.ts';
import { AppError } from '../../core/errors.ts';
import { htmlResponse } from '../../core/html-page.ts';
import type { Services } from '../../core/services.ts';
import { invalidLinkPage, PAGE_PATH, resetFormPage, successPage } from './page.ts';
import {
  confirmReset,
  PASSWORD_CHANGED_MESSAGE,
  RESET_REQUESTED_MESSAGE,
  requestReset,
  resetConfirmInput,
  resetMessageOutput,
  resetRequestInput,
  usableToken,
} from './store.ts';

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

async function requestRoute(request: PublicRequest, services: Services): Promise<Response> {
  await requestReset(services, await request.body(), request.ip);
  return json({ message: RESET_REQUESTED_MESSAGE }, 202);
}

async function confirmRoute(request: PublicRequest, services: Services): Promise<Response> {
  await confirmReset(services, await request.body());
  return json({ message: PASSWORD_CHANGED_MESSAGE }, 200);
}

/** The query's token, read here and nowhere else: the request log never writes a query string. */
function tokenOfUrl(request: PublicRequest): string | undefined {
  const token = new URL(request.raw.url).searchParams.get('token');
  return token === null || token === '' ? undefined : token;
}

async function showForm(request: PublicRequest, services: Services): Promise<Response> {
  const token = tokenOfUrl(request);
  if (token === undefined || token.length > 200 || !(await usableToken(services, token))) {
    return htmlResponse(invalidLinkPage());
  }
  return htmlResponse(resetFormPage(token));
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The form's answer: the same confirm as the API route, its refusals shown on the page. */
async function submitForm(request: PublicRequest, services: Services): Promise<Response> {
  const body = await request.body({ forms: true });
  const token = text(body.token);
  const password = text(body.password) ?? '';
  if (token === undefined || token === '') return htmlResponse(invalidLinkPage());
  if (password !== (text(body.password_confirm) ?? '')) {
    return htmlResponse(resetFormPage(token, 'The two passwords differ. Type the same password twice.', 400));
  }
  try {
    await confirmReset(services, { token, password });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.code === 'invalid_reset_token') return htmlResponse(invalidLinkPage());
    const details = err.body.details ?? [];
    if (err.code === 'validation_failed' && details.some((d) => d.field === 'token')) {
      return htmlResponse(invalidLinkPage());
    }
    if (err.code === 'validation_failed') {
      return htmlResponse(
        resetFormPage(token, 'The password must be 8 to 200 characters long. Choose another one.', 400),
      );
    }
    throw err;
  }
  return htmlResponse(successPage());
}

export const passwordResetRoutes: PublicRoute[] = [
  {
    method: 'POST',
    path: '/api/v1/auth/password-reset',
    handle: requestRoute,
    operation: {
      operationId: 'request_password_reset',
      summary: 'Request a password reset',
      description:
        'Mails a link to choose a new password (valid one hour, single use) to the account with this address, if there is one. The answer is the same 202 whatever the address (unknown, deactivated, malformed) and takes the same time: whether an account exists is never told. At most 3 mails an hour reach one account; further requests are answered alike and send nothing.',
      tag: 'auth',
      input: resetRequestInput,
      status: 202,
      output: resetMessageOutput,
    },
  },
  {
    method: 'POST',
    path: '/api/v1/auth/password-reset/confirm',
    handle: confirmRoute,
    operation: {
      operationId: 'confirm_password_reset',
      summary: 'Set a new password with a reset token',
      description:
        "Sets the account's new password (the signup rule: 8 to 200 characters) with the token of the reset mail's link, spends the token and every other unused reset token of the account, and revokes every refresh token of the account, so every session ends.",
      tag: 'auth',
      input: resetConfirmInput,
      status: 200,
      output: resetMessageOutput,
      errors: [
        {
          code: 'invalid_reset_token',
          when: 'the token is unknown, was used already, or is more than an hour old',
        },
      ],
    },
  },
  { method: 'GET', path: PAGE_PATH, handle: showForm },
  { method: 'POST', path: PAGE_PATH, handle: submitForm },
];
