// MCP resources: the record types the areas declare (core/resources.ts), readable by URI
// (`crm://leads/{id}`). Every answer comes from the area's own read tools run through invokeTool,
// so scopes, role permission, plan feature and tenancy are decided exactly as for tools/call:
// - resources/templates/list: one template per record type the caller may read;
// - resources/list: the caller's most recently changed records (the 200 latest of each type, within
//   the type's `listFilter` if it declares one), one record type after the other, paged with an
//   opaque cursor over the list tool's page/limit;
// - resources/read: the get tool's JSON. An id that is unknown, malformed, trashed or another
//   organization's is the SDK's resource-not-found error, the same answer whichever it was: -32602
//   with `data: {uri}` on every revision. 2026-07-28 requires -32602; the 2025 revisions suggested
//   -32002, but the SDK's encoder turns a thrown -32002 into -32602 on every era (clients accept
//   both), so the one code the wire can carry is -32602 (docs/decisions.md).
// Resources are not narrowed by the connection's toolsets (docs/decisions.md "MCP resources and
// prompts ignore toolsets").
import {
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
  type ResourceTemplateType,
  type Server,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { AppError } from '../core/errors.ts';
import { type CallContext, canSee, invokeTool } from '../core/invoke.ts';
import {
  RESOURCE_MIME_TYPE,
  RESOURCE_SCHEME,
  type RecordResource,
  recordUri,
  recordUriTemplate,
} from '../core/resources.ts';
import type { Services } from '../core/services.ts';
import { RESOURCES } from '../tools/index.ts';
import { protocolErrorOf } from './protocol-errors.ts';

/** Records per resources/list page. */
export const RESOURCE_PAGE_SIZE = 50;
/**
 * Pages of each record type resources/list walks: the 200 most recently changed records of each. A
 * listing is for browsing what is current; any record stays readable by its URI, and completion finds
 * it by name. It also keeps a client that follows every cursor (the 2.x client does when called
 * without one) to a handful of requests.
 */
export const RESOURCE_PAGES_PER_TYPE = 4;

/** What the get and list tools answer, as far as resources read it. */
const recordSchema = z.looseObject({ _id: z.string() });
const pageSchema = z.looseObject({ totalPages: z.number() });

/** The record types the caller may both list and read. */
export function readableResources(call: CallContext): RecordResource[] {
  return RESOURCES.filter((resource) => canSee(resource.get, call) && canSee(resource.list, call));
}

/** The record type a template URI names (`crm://leads/{id}`), for completion. */
export function resourceOfTemplate(uriTemplate: string): RecordResource | undefined {
  return RESOURCES.find((resource) => recordUriTemplate(resource.collection) === uriTemplate);
}

const RECORD_URI = new RegExp(`^${RESOURCE_SCHEME}://([a-z][a-z0-9-]*)/([^/?#]+)$`);

function notFound(uri: string): ProtocolError {
  return new ResourceNotFoundError(uri, `Resource not found: ${uri}`);
}

/** The record a read tool answered: the single object of its answer (`{lead: {...}}`). */
function recordOf(output: unknown): z.output<typeof recordSchema> | undefined {
  if (typeof output !== 'object' || output === null) return undefined;
  const values = Object.values(output);
  const parsed = recordSchema.safeParse(values.length === 1 ? values[0] : output);
  return parsed.success ? parsed.data : undefined;
}

/** The records of a list tool's answer. */
export function recordsOf(resource: RecordResource, output: unknown): z.output<typeof recordSchema>[] {
  if (typeof output !== 'object' || output === null) return [];
  const items: unknown = Object.getOwnPropertyDescriptor(output, resource.items)?.value;
  const parsed = z.array(recordSchema).safeParse(items);
  return parsed.success ? parsed.data : [];
}

// The cursor: which record type and which page of its list, base64url JSON. A client gives back
// what it was given; anything else is -32602.
const cursorSchema = z.strictObject({
  c: z.string(),
  p: z.number().int().min(1).max(RESOURCE_PAGES_PER_TYPE),
});
type Cursor = z.output<typeof cursorSchema>;

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(value: string): Cursor {
  try {
    return cursorSchema.parse(JSON.parse(Buffer.from(value, 'base64url').toString('utf8')));
  } catch {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'Invalid cursor: give back a nextCursor as it was received',
    );
  }
}

function listing(resource: RecordResource, record: z.output<typeof recordSchema>): Resource {
  const label = resource.label(record);
  return {
    uri: recordUri(resource.collection, record._id),
    name: label,
    title: `${resource.title}: ${label}`,
    mimeType: RESOURCE_MIME_TYPE,
  };
}

/** One page of resources/list: the records of one type, newest change first, and where to go on. */
async function listPage(
  cursor: string | undefined,
  call: CallContext,
  services: Services,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const readable = readableResources(call);
  let position: Cursor | undefined = cursor === undefined ? undefined : decodeCursor(cursor);
  let index =
    position === undefined ? 0 : readable.findIndex((resource) => resource.collection === position?.c);
  if (index < 0)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: unknown record type');
  let page = position?.p ?? 1;
  // An empty record type is skipped, so a page is empty only when nothing is left at all.
  for (; index < readable.length; index += 1, page = 1) {
    const resource = readable[index];
    if (!resource) break;
    const output = await invokeTool(
      resource.list,
      { ...resource.listFilter, page, limit: RESOURCE_PAGE_SIZE, sort: resource.recentSort },
      call,
      services,
    );
    const records = recordsOf(resource, output);
    const totalPages = pageSchema.safeParse(output).data?.totalPages ?? 0;
    if (records.length === 0 && page > 1) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: past the last page');
    }
    if (records.length === 0) continue;
    const next = readable[index + 1];
    const lastPage = Math.min(totalPages, RESOURCE_PAGES_PER_TYPE);
    position =
      page < lastPage
        ? { c: resource.collection, p: page + 1 }
        : next
          ? { c: next.collection, p: 1 }
          : undefined;
    return {
      resources: records.map((record) => listing(resource, record)),
      ...(position && { nextCursor: encodeCursor(position) }),
    };
  }
  return { resources: [] };
}

async function readResource(uri: string, call: CallContext, services: Services): Promise<ReadResourceResult> {
  const match = RECORD_URI.exec(uri);
  const resource = RESOURCES.find((candidate) => candidate.collection === match?.[1]);
  const id = match?.[2];
  if (!resource || id === undefined) throw notFound(uri);
  let output: unknown;
  try {
    output = await invokeTool(resource.get, { id }, call, services);
  } catch (err) {
    // A malformed id is no more a resource than an unknown one.
    if (err instanceof AppError && (err.code === 'not_found' || err.code === 'validation_failed')) {
      throw notFound(uri);
    }
    throw protocolErrorOf(err, call, services, 'resources/read');
  }
  if (!recordOf(output)) throw new Error(`${resource.get.name} answered no record`);
  return { contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: JSON.stringify(output) }] };
}

function templates(call: CallContext): ResourceTemplateType[] {
  return readableResources(call).map((resource) => ({
    uriTemplate: recordUriTemplate(resource.collection),
    name: resource.collection,
    title: resource.title,
    description: resource.description,
    mimeType: RESOURCE_MIME_TYPE,
  }));
}

/** The resource handlers, for a server the resources capability is declared on. */
export function registerResources(server: Server, call: CallContext, services: Services): void {
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: templates(call) }));
  server.setRequestHandler('resources/list', async (request) => {
    try {
      return await listPage(request.params?.cursor, call, services);
    } catch (err) {
      throw protocolErrorOf(err, call, services, 'resources/list');
    }
  });
  server.setRequestHandler('resources/read', (request) => readResource(request.params.uri, call, services));
}
