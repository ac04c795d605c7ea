// A REST route is a line in a table: METHOD path -> tool. It holds no business rule and no
// permission check; the tool's pipeline does all of that.
import { z } from 'zod';
import type { Surface } from './access.ts';
import { previewResultSchema } from './confirm.ts';
import type { LimitName } from './rate-limits.ts';
import type { Tool } from './tool.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestParts {
  params: Record<string, string>;
  query: Record<string, string>;
  body: Record<string, unknown>;
}

export interface Route {
  method: HttpMethod;
  /** Hono path syntax under /api/v1, e.g. `/leads/:id`. */
  path: string;
  tool: Tool;
  /** Success status; 201 for creations. */
  status: 200 | 201;
  /**
   * When one route answers either 201 (it created) or 200 (it found what an earlier call created,
   * e.g. an idempotent apply), the status of this output; `status` is then the creating one.
   */
  statusOf?: (output: unknown) => 200 | 201;
  /** How the request becomes tool input; the default merges query (GET) or body with path params. */
  input: (parts: RequestParts) => Record<string, unknown>;
  /** Per-user request limits of this route, counted after authentication (the bulk routes' 60/min). */
  limits: readonly LimitName[];
  /**
   * A file route (GET /invoices/{id}/pdf): the tool returns `fileOutputShape` and REST answers the
   * file's bytes (`content_base64` decoded) with its media type and an attachment Content-Disposition
   * instead of the JSON. `mediaType` is what the OpenAPI document lists.
   */
  file?: { mediaType: string };
}

/**
 * What the tool of a file route returns (tools may add fields): the file's name, type and size, and
 * its bytes in base64, which a tool gives only over REST (`ctx.surface === 'rest'`) where the route
 * answers the bytes themselves; over MCP the same tool returns a download summary without them.
 */
export const fileOutputShape = {
  filename: z.string().describe('File name, e.g. INV-000001.pdf'),
  content_type: z.string().describe('Media type, e.g. application/pdf'),
  size_bytes: z.number().int().describe('Size of the file in bytes'),
  content_base64: z
    .string()
    .optional()
    .describe('The file in base64; REST only, where the route answers the bytes themselves'),
};
export const fileOutputSchema = z.object(fileOutputShape);

/** A file route's output for `bytes`: the bytes themselves only on REST (see fileOutputShape). */
export function fileOutput(
  bytes: Buffer,
  file: { filename: string; contentType: string },
  surface: Surface,
): z.output<typeof fileOutputSchema> {
  return {
    filename: file.filename,
    content_type: file.contentType,
    size_bytes: bytes.length,
    ...(surface === 'rest' ? { content_base64: bytes.toString('base64') } : {}),
  };
}

function defaultInput(method: HttpMethod): Route['input'] {
  if (method === 'GET') return ({ query, params }) => ({ ...query, ...params });
  return ({ body, params }) => ({ ...body, ...params });
}

export function route(
  method: HttpMethod,
  path: string,
  tool: Tool,
  options: {
    status?: 200 | 201;
    statusOf?: (output: unknown) => 200 | 201;
    input?: Route['input'];
    limits?: readonly LimitName[];
    file?: { mediaType: string };
  } = {},
): Route {
  const status = options.status ?? (method === 'POST' && tool.name.startsWith('create_') ? 201 : 200);
  // A sending route that creates (an enrollment) still answers its preview with 200: nothing was created.
  const statusOf =
    options.statusOf ??
    (tool.sends && status === 201
      ? (output: unknown) => (previewResultSchema.safeParse(output).success ? 200 : 201)
      : undefined);
  return {
    method,
    path,
    tool,
    status,
    ...(statusOf ? { statusOf } : {}),
    input: options.input ?? defaultInput(method),
    limits: options.limits ?? [],
    ...(options.file ? { file: options.file } : {}),
  };
}
