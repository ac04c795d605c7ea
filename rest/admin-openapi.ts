// The admin API's own OpenAPI 3.1 document, GET /admin/v1/openapi.json (behind CRM_ADMIN_TOKEN like
// every /admin path). Generated from the zod schemas core/admin.ts validates and answers with, so it
// cannot drift from what the routes of rest/admin-routes.ts do. Kept apart from the public document
// (/api/v1/openapi.json): operators' routes are not part of the tenant API.
import { z } from 'zod';
import {
  createOauthTokenInput,
  createOauthTokenOutput,
  createOrganizationInput,
  createOrganizationOutput,
  organizationOutput,
  updateOrganizationInputOf,
} from '../core/admin.ts';

export const ADMIN_OPENAPI_PATH = '/admin/v1/openapi.json';

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io });
  return rest;
}

const json = (schema: z.ZodType, io: 'input' | 'output') => ({
  'application/json': { schema: schemaOf(schema, io) },
});

const idParameter = (what: string) => ({
  name: 'id',
  in: 'path',
  required: true,
  description: `The ${what} id (24 hex characters)`,
  schema: { type: 'string', pattern: '^[0-9a-f]{24}$' },
});

const errors = {
  '400': { description: 'Invalid input (the error envelope names each field)' },
  '401': { description: 'Missing or wrong admin token' },
  '404': { description: 'No such record' },
};

let built: JsonSchema | undefined;

/** The document; `features` are the plan table's, which the organization change may switch off. */
export function adminOpenApiDocument(features: readonly string[]): JsonSchema {
  built ??= {
    openapi: '3.1.0',
    info: {
      title: 'CRM admin API',
      version: '1',
      description:
        'Operator actions across organizations. Every path needs `Authorization: Bearer <CRM_ADMIN_TOKEN>`; ' +
        'without CRM_ADMIN_TOKEN set, the server answers 404 on every /admin path. `crm admin ... --url` uses it.',
    },
    servers: [{ url: '/', description: 'This server' }],
    security: [{ adminToken: [] }],
    paths: {
      '/admin/v1/organizations': {
        post: {
          operationId: 'create_organization',
          summary: 'Create an organization with its owner',
          requestBody: { required: true, content: json(createOrganizationInput, 'input') },
          responses: {
            '201': { description: 'Created', content: json(createOrganizationOutput, 'output') },
            '409': { description: 'The owner email is taken' },
            ...errors,
          },
        },
      },
      '/admin/v1/organizations/{id}': {
        get: {
          operationId: 'get_organization',
          summary: 'Read an organization',
          parameters: [idParameter('organization')],
          responses: {
            '200': { description: 'The organization', content: json(organizationOutput, 'output') },
            ...errors,
          },
        },
        patch: {
          operationId: 'update_organization',
          summary: "Change an organization's plan, status or disabled features",
          parameters: [idParameter('organization')],
          requestBody: { required: true, content: json(updateOrganizationInputOf(features), 'input') },
          responses: {
            '200': { description: 'Updated', content: json(organizationOutput, 'output') },
            ...errors,
          },
        },
      },
      '/admin/v1/oauth-tokens': {
        post: {
          operationId: 'create_oauth_token',
          summary: 'Issue an OAuth access token for a user (shown once)',
          requestBody: { required: true, content: json(createOauthTokenInput, 'input') },
          responses: {
            '201': { description: 'Issued', content: json(createOauthTokenOutput, 'output') },
            ...errors,
          },
        },
      },
      '/admin/v1/oauth-tokens/{id}': {
        delete: {
          operationId: 'revoke_oauth_token',
          summary: 'Revoke an OAuth token (revoking it again answers the same)',
          parameters: [idParameter('OAuth token')],
          responses: {
            '200': {
              description: 'Revoked',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: { message: { type: 'string' } },
                    required: ['message'],
                  },
                },
              },
            },
            ...errors,
          },
        },
      },
    },
    components: {
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: "The server's CRM_ADMIN_TOKEN" },
      },
    },
  };
  return built;
}
