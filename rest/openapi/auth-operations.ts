// The REST surface's own public routes (sign up, log in, refresh) as operations, and those the areas'
// public routes declare (core/area.ts PublicRoute.operation: the password reset), built alike.

import type { z } from 'zod';
import type { PublicRoute } from '../../core/area.ts';
import {
  loginInput,
  loginOutput,
  refreshInput,
  sessionTokensSchema,
  signupInput,
  signupOutput,
} from '../../core/auth/sessions.ts';
import { ERROR_TABLE } from '../../core/errors.ts';
import type { ToolError } from '../../core/tool.ts';
import {
  errorExample,
  errorResponse,
  jsonContent,
  SHARED_RESPONSES,
  schemaOf,
  shared,
  successResponse,
} from './components.ts';
import { API_PREFIX } from './paths.ts';
import { METHOD_KEYS, type OperationMethod, type OperationObject, type ResponseObject } from './types.ts';

export interface PublicOperationAt {
  path: string;
  method: OperationMethod;
  operation: OperationObject;
}

/** A public JSON route as an operation: no security requirement, the shared failures of a public API route, and its own. */
function publicApiOperation(
  operationId: string,
  summary: string,
  description: string,
  tag: string,
  input: z.ZodType,
  status: 200 | 201 | 202,
  output: z.ZodType,
  errors: Record<string, ResponseObject>,
): OperationObject {
  return {
    operationId,
    summary,
    description,
    tags: [tag],
    security: [],
    requestBody: { required: true, content: jsonContent(schemaOf(input, 'input', `${operationId} input`)) },
    responses: {
      [String(status)]: successResponse(status, schemaOf(output, 'output', `${operationId} output`), false),
      '400': shared('BadRequest'),
      ...errors,
      '413': shared('PayloadTooLarge'),
      '415': shared('UnsupportedMediaType'),
      '429': shared('TooManyRequests'),
      '503': shared('ServiceUnavailable'),
    },
  };
}

/** Declared failures by status, each status one response naming every code and when it happens. */
function declaredResponses(errors: readonly ToolError[]): Record<string, ResponseObject> {
  const byStatus = new Map<number, ToolError[]>();
  for (const error of errors) {
    const status = ERROR_TABLE[error.code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), error]);
  }
  const responses: Record<string, ResponseObject> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const first = list[0];
    if (!first) continue;
    const reasons = list.map((e) => `\`${e.code}\`: ${e.when}`);
    // Validation failures share the 400 with the schema's own refusals: both are named.
    const described = status === 400 ? [SHARED_RESPONSES.BadRequest.description, ...reasons] : reasons;
    responses[String(status)] = errorResponse(
      described.join('; '),
      errorExample(first.code, { message: first.when }),
    );
  }
  return responses;
}

/**
 * The operations of the areas' public routes that declare one (core/area.ts `PublicRoute.operation`):
 * the password reset's routes under /api/v1/auth, documented like the auth routes beside them.
 */
export function publicRouteOperations(routes: readonly PublicRoute[]): PublicOperationAt[] {
  return routes.flatMap((route) => {
    const declared = route.operation;
    if (!declared) return [];
    if (route.path.includes(':')) {
      throw new Error(`Public route ${route.path}: an operation of a public route takes no path parameters`);
    }
    return [
      {
        path: route.path,
        method: METHOD_KEYS[route.method],
        operation: publicApiOperation(
          declared.operationId,
          declared.summary,
          declared.description,
          declared.tag,
          declared.input,
          declared.status,
          declared.output,
          declaredResponses(declared.errors ?? []),
        ),
      },
    ];
  });
}

/** The public auth routes (rest/auth-routes.ts); their schemas live in core/auth/sessions.ts. */
export function authOperations(): PublicOperationAt[] {
  const common = (
    operationId: string,
    summary: string,
    description: string,
    input: z.ZodType,
    status: 200 | 201,
    output: z.ZodType,
    errors: Record<string, ResponseObject>,
  ): OperationObject =>
    publicApiOperation(operationId, summary, description, 'auth', input, status, output, errors);
  const inactive = errorResponse('The organization is inactive', errorExample('organization_inactive'));
  return [
    {
      path: `${API_PREFIX}/auth/signup`,
      method: 'post',
      operation: common(
        'sign_up',
        'Sign up',
        'Creates an organization on the default plan with the caller as its owner, and signs the owner in: returns the organization, the user, a session JWT and a refresh token.',
        signupInput,
        201,
        signupOutput,
        {
          '403': errorResponse('Signup is disabled on this server', errorExample('signup_disabled')),
          '409': errorResponse(
            'A user with this email already exists',
            errorExample('conflict', { message: 'A user with this email already exists' }),
          ),
        },
      ),
    },
    {
      path: `${API_PREFIX}/auth/login`,
      method: 'post',
      operation: common(
        'log_in',
        'Log in',
        'Exchanges an email and password for a session JWT and a refresh token. A wrong password, an unknown email and a deactivated user all get the same 401.',
        loginInput,
        200,
        loginOutput,
        {
          '401': errorResponse('Invalid email or password', errorExample('invalid_credentials')),
          '403': inactive,
        },
      ),
    },
    {
      path: `${API_PREFIX}/auth/refresh`,
      method: 'post',
      operation: common(
        'refresh_session',
        'Refresh a session',
        'Exchanges a refresh token for a new session JWT and a new refresh token. Refresh tokens are single-use: presenting a used one again revokes every token of that login.',
        refreshInput,
        200,
        sessionTokensSchema,
        {
          '401': errorResponse(
            'Invalid, expired or reused refresh token',
            errorExample('invalid_refresh_token'),
          ),
          '403': inactive,
        },
      ),
    },
  ];
}
