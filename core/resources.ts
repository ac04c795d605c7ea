// A record type readable as an MCP resource (`crm://leads/{id}`), declared by the area that owns
// it (`resources` of defineArea). A resource is no new way in: reading one runs the area's own read
// tool through the call pipeline (scopes, role permission, plan feature, tenancy), listing pages
// through its list tool, and completing an id searches with that same list tool. The MCP surface
// (mcp/resources.ts, mcp/completion.ts) serves every declaration the areas make, so a record type
// added later (knowledge-base articles) is one declaration in its area. docs/mcp.md "Resources".
import type { Tool } from './tool.ts';

/** The URI scheme of every record resource. */
export const RESOURCE_SCHEME = 'crm';

/** The MIME type of a record resource's content: the read tool's JSON answer. */
export const RESOURCE_MIME_TYPE = 'application/json';

export interface RecordResource {
  /** The URI's collection segment and the template's name (`leads`: `crm://leads/{id}`). */
  collection: string;
  /** The template's title, for people (`Lead`). */
  title: string;
  /** What a record of this kind is, for the template listing. */
  description: string;
  /** The read tool taking `{id}`: its answer is the resource's content. */
  get: Tool;
  /** The list tool taking `page`, `limit`, `sort` and `search`: resources/list and completion page through it. */
  list: Tool;
  /** The key of the records in the list tool's answer (`leads`). */
  items: string;
  /** How the list tool sorts to show the most recently changed records first (`-updated_at`). */
  recentSort: string;
  /**
   * Filters of the list tool that resources/list applies (the knowledge base lists only its published
   * AI-context articles); reading by URI and completion are not narrowed by them.
   */
  listFilter?: Readonly<Record<string, unknown>>;
  /** A record's name for people, read from its serialized form (the lead's name, the invoice number). */
  label(record: Readonly<Record<string, unknown>>): string;
}

const COLLECTION = /^[a-z][a-z0-9-]*$/;

/** `crm://<collection>/<id>`. */
export function recordUri(collection: string, id: string): string {
  return `${RESOURCE_SCHEME}://${collection}/${id}`;
}

/** The RFC 6570 template of a collection's records. */
export function recordUriTemplate(collection: string): string {
  return `${RESOURCE_SCHEME}://${collection}/{id}`;
}

/**
 * Checks a declaration when its area's module loads: both tools read, the get tool takes an `id`,
 * the list tool pages and searches, so a resource can never be a way around a write tool's access.
 */
export function defineRecordResource(resource: RecordResource): RecordResource {
  const where = `Resource ${resource.collection}`;
  if (!COLLECTION.test(resource.collection)) throw new Error(`${where}: the collection must be kebab-case`);
  for (const tool of [resource.get, resource.list]) {
    if (tool.access.kind !== 'read') throw new Error(`${where}: ${tool.name} is not a read tool`);
  }
  if (!('id' in resource.get.input.shape)) throw new Error(`${where}: ${resource.get.name} takes no \`id\``);
  for (const field of ['page', 'limit', 'sort', 'search']) {
    if (!(field in resource.list.input.shape)) {
      throw new Error(`${where}: ${resource.list.name} takes no \`${field}\``);
    }
  }
  if (resource.listFilter && !resource.list.input.safeParse({ ...resource.listFilter }).success) {
    throw new Error(`${where}: ${resource.list.name} refuses the list filter`);
  }
  return resource;
}

/** A string field of a serialized record, or undefined when it is absent or not a string. */
export function textField(record: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
