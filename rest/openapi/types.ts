// The subset of OpenAPI 3.1 this generator writes, as types.
import type { HttpMethod } from '../../core/route.ts';

export type JsonSchema = Record<string, unknown>;

export interface RefObject {
  $ref: string;
}

export interface MediaTypeObject {
  schema: JsonSchema;
  example?: unknown;
}

export interface HeaderObject {
  description: string;
  schema: JsonSchema;
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject | RefObject>;
  content?: Record<string, MediaTypeObject>;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface RequestBodyObject {
  required: boolean;
  content: Record<string, MediaTypeObject>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters?: ParameterObject[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject | RefObject>;
  /** Only set to `[]` on the public routes; the rest inherit the document's bearer requirement. */
  security?: SecurityRequirement[];
}

export type OperationMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type PathItemObject = Partial<Record<OperationMethod, OperationObject>>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  security: SecurityRequirement[];
  paths: Record<string, PathItemObject>;
  /** What the server sends to subscribers: one POST per event (rest/openapi/webhooks.ts). */
  webhooks: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, ResponseObject>;
    headers: Record<string, HeaderObject>;
    securitySchemes: Record<
      string,
      { type: 'http'; scheme: 'bearer'; bearerFormat?: string; description: string }
    >;
  };
}

export const METHOD_KEYS = {
  GET: 'get',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'delete',
} as const satisfies Record<HttpMethod, OperationMethod>;
