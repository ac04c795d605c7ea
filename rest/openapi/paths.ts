// Paths from the route table: each route as an operation, its parameters, access text and the
// failures its tool declares.
import { requiredScopes } from '../../core/access.ts';
import { ERROR_TABLE } from '../../core/errors.ts';
import type { Route } from '../../core/route.ts';
import type { Tool, ToolError } from '../../core/tool.ts';
import {
  errorExample,
  errorResponse,
  IDEMPOTENCY_ERRORS,
  IDEMPOTENCY_KEY_PARAMETER,
  jsonContent,
  POST_SUCCESS_HEADERS,
  parameter,
  propertiesOf,
  requiredOf,
  SHARED_RESPONSES,
  SUCCESS_HEADERS,
  shared,
  successResponse,
  toolSchemas,
  withoutProperties,
} from './components.ts';
import type {
  OperationMethod,
  OperationObject,
  RefObject,
  RequestBodyObject,
  ResponseObject,
} from './types.ts';
import { METHOD_KEYS } from './types.ts';

/** Every REST operation lives under this prefix. */
export const API_PREFIX = '/api/v1';

/** Path segments that only group routes (`/settings/api-keys`); the tag is the segment after them. */
const GROUPING_SEGMENTS: ReadonlySet<string> = new Set(['settings']);

/** `/leads/:id` -> `/api/v1/leads/{id}` and the parameter names, in order. */
function openApiPath(honoPath: string): { path: string; params: string[] } {
  // Optional parameters, regex constraints and wildcards have no OpenAPI path form.
  if (/[*?{}]/.test(honoPath)) {
    throw new Error(`Route path ${honoPath} uses syntax the OpenAPI document cannot express`);
  }
  const params: string[] = [];
  const path = honoPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: `${API_PREFIX}${path}`, params };
}

export function tagOf(honoPath: string): string {
  const segments = honoPath.split('/').filter((s) => s !== '' && !s.startsWith(':'));
  const tag = segments.find((s) => !GROUPING_SEGMENTS.has(s));
  if (!tag) throw new Error(`Route path ${honoPath} has no resource segment to tag it by`);
  return tag;
}
/** What the route does with `confirm` (core/confirm.ts), in REST's own terms. */
const CONFIRM_REST_TEXT =
  '**Confirm:** this route sends unless the body says `"confirm": false`; then it answers 200 ' +
  '`{"sent": false, "preview": {...}}` (sender, recipients, subject, amounts) and changes nothing. `confirm` is a ' +
  'boolean: the string "true" is a 400 naming it.';

function accessText(tool: Tool): string {
  const { permission, feature, kind, resource } = tool.access;
  const parts = [permission ? `role permission \`${permission}\`` : 'any signed-in user'];
  const scopes = requiredScopes('rest', kind, resource);
  if (scopes) parts.push(`API keys and OAuth tokens need scope \`${scopes.join('` or `')}\``);
  if (feature) parts.push(`plan feature \`${feature}\``);
  return `**Access:** ${parts.join('; ')}.`;
}

/** The failures a tool's handler declares (core/tool.ts `errors`) and `extra` ones, by HTTP status. */
function declaredErrors(tool: Tool, extra: readonly ToolError[]): Map<number, ToolError[]> {
  const byStatus = new Map<number, ToolError[]>();
  for (const error of [...(tool.errors ?? []), ...extra]) {
    const status = ERROR_TABLE[error.code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), error]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

/** One status's response: the pipeline's own reason (if any) and each declared reason with its code. */
function declaredResponse(generic: string | undefined, errors: readonly ToolError[]): ResponseObject {
  const reasons = errors.map((e) => `\`${e.code}\`: ${e.when}`);
  const description = [generic, ...reasons].filter((r) => r !== undefined).join('; ');
  const first = errors[0];
  const example = first
    ? errorExample(first.code, { message: first.when })
    : errorExample('not_found', { message: 'Record not found' });
  return errorResponse(description, example);
}

// ---------------------------------------------------------------------------------------------
// Operations

/**
 * One route as an operation. It describes the default request mapping of core/route.ts (path params
 * and the query or body merged into the tool input), which every route in the table uses.
 */
export function toolOperation(route: Route): {
  path: string;
  method: OperationMethod;
  operation: OperationObject;
} {
  const { tool } = route;
  const { path, params } = openApiPath(route.path);
  const schemas = toolSchemas(tool);
  const inputProperties = propertiesOf(schemas.input);
  const inputRequired = requiredOf(schemas.input);

  const parameters = params.map((name) => parameter(name, 'path', true, inputProperties[name]));
  let requestBody: RequestBodyObject | undefined;
  if (route.method === 'GET') {
    for (const [name, schema] of Object.entries(inputProperties)) {
      if (params.includes(name)) continue;
      parameters.push(parameter(name, 'query', inputRequired.includes(name), schema));
    }
  } else {
    const body = withoutProperties(schemas.input, params);
    // A body with no fields and no room for extra ones (`{id}` only) is not worth documenting.
    const empty = Object.keys(propertiesOf(body)).length === 0 && body.additionalProperties === false;
    if (!empty) {
      requestBody = { required: requiredOf(body).length > 0, content: jsonContent(body) };
    }
  }

  const post = route.method === 'POST';
  if (post) parameters.push(IDEMPOTENCY_KEY_PARAMETER);
  const declared = declaredErrors(tool, post ? IDEMPOTENCY_ERRORS : []);
  const responses: Record<string, ResponseObject | RefObject> = {
    [String(route.status)]: route.file
      ? {
          description: `The file (${route.file.mediaType}), with Content-Disposition: attachment and its file name`,
          headers: post ? POST_SUCCESS_HEADERS : SUCCESS_HEADERS,
          content: { [route.file.mediaType]: { schema: { type: 'string', format: 'binary' } } },
        }
      : successResponse(route.status, schemas.output, post),
    ...(route.statusOf ? { '200': successResponse(200, schemas.output, post) } : {}),
    '400': declared.has(400)
      ? declaredResponse(SHARED_RESPONSES.BadRequest.description, declared.get(400) ?? [])
      : shared('BadRequest'),
    '401': shared('Unauthorized'),
  };
  if (tool.access.feature) {
    responses['402'] = errorResponse(
      `The organization's plan lacks the \`${tool.access.feature}\` feature, or the organization switched it off`,
      errorExample('plan_upgrade_required', {
        message: `The "${tool.access.feature}" feature is not available to this organization`,
        feature: tool.access.feature,
        current_plan: 'free',
      }),
    );
  } else if (declared.has(402)) {
    responses['402'] = declaredResponse(undefined, declared.get(402) ?? []);
  }
  responses['403'] = errorResponse(
    "The caller's role lacks the permission, the token lacks the scope, or the organization is inactive",
    tool.access.permission
      ? errorExample('forbidden', { required_permission: tool.access.permission })
      : errorExample('organization_inactive'),
  );
  if (params.length > 0 || declared.has(404)) {
    responses['404'] = declaredResponse(
      params.length > 0
        ? 'No such record in the organization (ids of other organizations are not found either)'
        : undefined,
      declared.get(404) ?? [],
    );
  }
  for (const [status, errors] of declared) {
    if (String(status) in responses) continue;
    responses[String(status)] = declaredResponse(undefined, errors);
  }
  if (route.method !== 'GET') {
    responses['413'] = shared('PayloadTooLarge');
    responses['415'] = shared('UnsupportedMediaType');
  }
  responses['429'] = shared('TooManyRequests');
  responses['503'] = shared('ServiceUnavailable');

  const operation: OperationObject = {
    operationId: tool.name,
    summary: tool.title,
    description: `${tool.description}\n\n${tool.sends ? `${CONFIRM_REST_TEXT}\n\n` : ''}${accessText(tool)}`,
    tags: [tagOf(route.path)],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
  return { path, method: METHOD_KEYS[route.method], operation };
}
