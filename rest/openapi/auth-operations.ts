// The REST surface's own public routes (sign up, log in, refresh) as operations.

import type { z } from 'zod';
import {
  loginInput,
  loginOutput,
  refreshInput,
  sessionTokensSchema,
  signupInput,
  signupOutput,
} from '../../core/auth/sessions.ts';
import { errorExample, errorResponse, jsonContent, schemaOf, shared, successResponse } from './components.ts';
import { API_PREFIX } from './paths.ts';
import type { OperationObject, ResponseObject } from './types.ts';

export interface PublicOperation {
  path: string;
  operation: OperationObject;
}

/** The public auth routes (rest/auth-routes.ts); their schemas live in core/auth/sessions.ts. */
export function authOperations(): PublicOperation[] {
  const common = (
    operationId: string,
    summary: string,
    description: string,
    input: z.ZodType,
    status: 200 | 201,
    output: z.ZodType,
    errors: Record<string, ResponseObject>,
  ): OperationObject => ({
    operationId,
    summary,
    description,
    tags: ['auth'],
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
  });
  const inactive = errorResponse('The organization is inactive', errorExample('organization_inactive'));
  return [
    {
      path: `${API_PREFIX}/auth/signup`,
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
