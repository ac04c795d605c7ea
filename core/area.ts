// An area is one business folder (tools/<area>/) declaring itself to the kernel: its tools, its
// REST route table, the OpenAPI tags its routes use, the permissions, events and MCP toolsets it
// uses, and its hooks into the shared registries (trash, ownership, lead children, global search,
// state machines). tools/index.ts lists the areas and derives every registry from that list, so
// adding a resource is an area folder and one line there; test/areas.test.ts fails when an area
// forgets a declaration.
import type { SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { Permission, ScopedResource } from './access.ts';
import type { AreaCatalogue } from './catalogue.ts';
import type { Executor } from './db/client.ts';
import type { Emit, EventName } from './events.ts';
import type { DefinedJob, Relay, Schedule, Sweep } from './jobs.ts';
import type { OwnedRecordTable } from './ownership.ts';
import type { Prompt } from './prompts.ts';
import type { RecordResource } from './resources.ts';
import type { Route } from './route.ts';
import type { Services } from './services.ts';
import type { SocketRoute } from './sockets.ts';
import type { StateMachine } from './state-machine.ts';
import type { GlobalSearchTerms } from './text-search.ts';
import type { Tool, ToolContext, ToolError } from './tool.ts';
import type { ToolsetName } from './toolsets.ts';
import type { ChildTable, TrashType } from './trash.ts';

/** One record type of the global search (search_crm): one UNION ALL branch of its query. */
export interface SearchSource {
  /** The `type` of its results (`contact`). */
  type: string;
  /** What a caller needs to see it: the token scope family (REST) and the role permission. */
  resource: ScopedResource;
  permission: Permission;
  /**
   * `select type, id, name, lead_id, lead_name, snippet, rank` over the live records matching the
   * terms' prefix query, in the caller's organization (at least its best `limit`; the search
   * parenthesizes it, so it may order and limit itself).
   */
  branch(terms: GlobalSearchTerms): SQL;
}

/**
 * A public page or form outside /api/v1 that takes no user token (a proposal's /p/{token}). The
 * REST sub-app mounts it under the per-IP limit of public pages (docs/contracts.md "Consistency rules"); the
 * handler speaks Fetch API Request/Response and answers its own errors (a plain 404 for any bad token).
 * A public route under /api/v1 (the password reset's, under /api/v1/auth) is an API route instead:
 * it has the API's per-IP limits, may throw AppError for the house's envelope, and declares its
 * OpenAPI `operation`.
 */
export interface PublicRoute {
  method: 'GET' | 'POST';
  /** Hono path syntax from the root, e.g. `/p/:token`. */
  path: string;
  handle(request: PublicRequest, services: Services): Promise<Response>;
  /**
   * How the route appears in the OpenAPI document, when it is an API route clients call (the
   * password reset's `/api/v1/auth/password-reset`): rest/openapi/document.ts adds an operation for
   * every public route that declares one. Pages for people and protocol endpoints (OAuth) declare none.
   */
  operation?: PublicOperation;
}

/**
 * A public route's OpenAPI operation, in the kernel's terms: a JSON body in, a JSON answer out, and
 * the failures it declares besides the shared ones every public API route can answer (400
 * validation, 413, 415, 429, 503). No security requirement: a public route takes no token.
 */
export interface PublicOperation {
  operationId: string;
  summary: string;
  description: string;
  /** Its OpenAPI tag: the REST surface's `auth`, or one its area describes in `tags`. */
  tag: string;
  /** The JSON body it reads (its JSON Schema is the request body). */
  input: z.ZodType;
  /** The success status and the answer's schema. */
  status: 200 | 201 | 202;
  output: z.ZodType;
  errors?: readonly ToolError[];
}

export interface PublicRequest {
  /** The request, for its headers; its body is read through `body()`, never from here. */
  raw: Request;
  params: Record<string, string>;
  requestId: string;
  /** The client's address as the rate limits see it (core/client-ip.ts, TRUST_PROXY). */
  ip: string;
  /**
   * The body as an object, read once by the mount (rest/public-pages.ts) through the same reader
   * and input guard as the REST routes: bytes that are not UTF-8, NUL, lone surrogates or too deep
   * nesting are an AppError 400 the handler answers in its own form. JSON always; HTML forms
   * (urlencoded, multipart) with `forms`. An empty body is `{}`.
   */
  body(options?: { forms?: boolean }): Promise<Record<string, unknown>>;
}

/** `T` is the type of its tool list, kept by defineArea so toolMap can key each tool by its literal name. */
export interface Area<T extends readonly Tool[] = readonly Tool[]> extends AreaHooks {
  /** The folder name under tools/ (kebab-case). */
  name: string;
  tools: T;
  /** The REST route table: METHOD path -> one of `tools`. */
  routes: readonly Route[];
  /** Every OpenAPI tag its routes use, with the description the reference shows. */
  tags: Readonly<Record<string, string>>;
  /**
   * The catalogue entries it introduces (its `tools/<area>/catalogue.ts`): permissions with their
   * tiers, scope families, toolsets with their descriptions; tools/index.ts collects them with
   * `buildCatalogue` (core/catalogue.ts).
   */
  brings?: AreaCatalogue;
  /** Role permissions its tools require, its own or another area's (each must be declared by some area). */
  permissions: readonly Permission[];
  /** Events its tools emit (each must be in the catalogue of core/events.ts). */
  events: readonly EventName[];
  /** MCP toolsets its tools belong to. */
  toolsets: readonly ToolsetName[];
  /**
   * Its record types readable as MCP resources (`crm://leads/{id}`), each built on its own read
   * tools (core/resources.ts): the MCP surface lists, reads and completes them through those tools.
   */
  resources?: readonly RecordResource[];
  /** Its MCP prompt templates (core/prompts.ts), grounded in records read through read tools. */
  prompts?: readonly Prompt[];
  /**
   * The other areas (and shared kits, folders of tools/ that are no area) whose exports its files
   * import. test/layers.test.ts derives the area-to-area allow-list from it and refuses a cycle, so
   * what would close one is a hook instead (docs/architecture.md "Boundaries").
   */
  uses?: readonly string[];
}

const AREA_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** Checks what can be checked inside one area when its module loads; cross-area rules live in the test. */
export function defineArea<const T extends readonly Tool[]>(area: Area<T>): Area<T> {
  if (!AREA_NAME.test(area.name)) throw new Error(`Area name "${area.name}" must be kebab-case`);
  if (area.uses?.includes(area.name)) throw new Error(`Area ${area.name} lists itself in uses`);
  const own = new Set<Tool>(area.tools);
  for (const route of area.routes) {
    if (!own.has(route.tool)) {
      throw new Error(
        `Area ${area.name}: route ${route.method} ${route.path} serves ${route.tool.name}, not one of its tools`,
      );
    }
  }
  for (const resource of area.resources ?? []) {
    for (const tool of [resource.get, resource.list]) {
      if (!own.has(tool)) {
        throw new Error(
          `Area ${area.name}: resource ${resource.collection} reads ${tool.name}, not one of its tools`,
        );
      }
    }
  }
  for (const tool of area.tools) {
    const permission = tool.access.permission;
    if (permission !== null && !area.permissions.includes(permission)) {
      throw new Error(
        `Area ${area.name}: tool ${tool.name} requires ${permission}, which the area does not declare`,
      );
    }
    if (!area.toolsets.some((name) => name === tool.toolset)) {
      throw new Error(
        `Area ${area.name}: tool ${tool.name} is in toolset ${tool.toolset}, which the area does not declare`,
      );
    }
  }
  return area;
}

/** The tools of a list of areas, as one union of their own types. */
export type ToolsOf<A extends readonly Area[]> = A[number]['tools'][number];

/**
 * Tools by their public name, each with its own type: `ToolMap<T>['create_lead']` is that tool with
 * its schemas, so a reader parses with them and a test's types follow the declaration.
 */
export type ToolMap<T extends Tool> = { readonly [K in T as K['name']]: K };

/**
 * Every tool of `areas` by its public name. The areas' types must keep their tools' literal names
 * (defineArea, defineTool infer them), which is what lets the map be typed by name at all; a name
 * twice throws, since one name would hide the other.
 */
export function toolMap<const A extends readonly Area[]>(areas: A): ToolMap<ToolsOf<A>> {
  const map: Record<string, Tool> = {};
  for (const tool of areas.flatMap((area): readonly Tool[] => area.tools)) {
    if (Object.hasOwn(map, tool.name)) throw new Error(`Tool ${tool.name} is declared twice`);
    map[tool.name] = tool;
  }
  // Each entry is the tool its key names, as the type says; the type system cannot follow a loop
  // that builds a record key by key, so the record is read as the mapped type here.
  return map as ToolMap<ToolsOf<A>>;
}

/**
 * What an area does when a lead becomes a client through convert_lead_to_client: it runs in the
 * converting transaction (a failure rolls the conversion back), after the lead's status changed,
 * only on a real conversion (not for a lead that already was a client).
 */
export type LeadConvertedHook = (ctx: ToolContext, leadId: string) => Promise<void>;

/**
 * An inbound email as the inbound hook recorded it (tools/connected-accounts): what other areas
 * need to react to a reply. `leadId` and `contactId` are null when no contact of the organization
 * has the sender's address; `repliesToEmailId` names the scheduled email (tools/email) whose
 * Message-ID the mail's In-Reply-To gave.
 */
export interface InboundEmailFacts {
  inboundEmailId: string;
  connectedAccountId: string;
  /** The owner of the account it arrived on. */
  accountUserId: string;
  leadId: string | null;
  contactId: string | null;
  /** The sender's address, lower-case. */
  fromAddress: string;
  messageId: string;
  inReplyTo: string | null;
  repliesToEmailId: string | null;
  receivedAt: Date;
}

/** What a hook on a system action (no user token: a public hook, a job) may use. */
export interface SystemHookContext {
  /** The tenant transaction of the action (row-level security for `orgId`). */
  db: Executor;
  orgId: string;
  emit: Emit;
  now: Date;
  services: Services;
}

/**
 * What an area does when an inbound email was recorded (a reply cancels a follow-up, stops a
 * sequence): it runs in the hook's transaction, after the email and its activity were written, once
 * per Message-ID (a repeated delivery of the same message runs no hook). A hook's error rolls the
 * recording back and the provider is answered 500, so it retries.
 */
export type EmailReceivedHook = (ctx: SystemHookContext, email: InboundEmailFacts) => Promise<void>;

/**
 * What an area whose records name a contact of their lead does before a contact moves to another
 * lead (tools/opportunities: an opportunity names a contact of its own lead). It runs in the moving
 * transaction, before the change; it throws an AppError (a 409 conflict) to refuse the move. The
 * contacts area is built with these hooks, so it never reads the other area's tables.
 */
export type ContactMovingHook = (db: Executor, contact: MovingContact) => Promise<void>;

export interface MovingContact {
  orgId: string;
  id: string;
  /** The lead it is leaving. */
  leadId: string;
}

/**
 * What an area whose records carry the values of a custom activity type (tools/activities) does when
 * the type changes; each step runs in the type's transaction. The custom activity types area is built
 * with these hooks, so the rules about the records stay with the area that holds them.
 */
export interface CustomActivityTypeChangingHook {
  /** Before fields change kind: throws an AppError (409) while records, trashed ones too, hold values of the type. */
  retyping(db: Executor, orgId: string, typeId: string, retyped: readonly string[]): Promise<void>;
  /** After fields were removed from the type: erases their values from its records. */
  fieldsRemoved(db: Executor, orgId: string, typeId: string, keys: readonly string[]): Promise<void>;
  /** Before the type is deleted for good: throws an AppError (409) while live records use it, then deletes its trashed ones. */
  deleting(db: Executor, orgId: string, typeId: string): Promise<void>;
}

/**
 * Finds the mail of the area's own that an inbound email answers, by the Message-IDs its
 * In-Reply-To and References name (tools/email: a sent scheduled email), with its lead when live;
 * null when none is the area's. The connected-accounts area asks each in turn.
 */
export type ReplyTargetHook = (
  db: Executor,
  orgId: string,
  messageIds: readonly string[],
) => Promise<{ id: string; leadId: string | null } | null>;

/**
 * What an area does when a user removes a connected account, in the deleting transaction before the
 * account row goes (tools/email cancels the account's scheduled emails not yet sent); returns how
 * many of its rows it cancelled, for the tool's answer.
 */
export type AccountRemovedHook = (
  ctx: Pick<ToolContext, 'db' | 'auth' | 'now'>,
  accountId: string,
) => Promise<number>;

/**
 * A scheduled email (tools/email) the sender just recorded as sent, in the recording transaction:
 * what an area that acts on a sent mail needs (tools/workflows enrolls the lead it asked for).
 */
export interface SentEmailFacts {
  emailId: string;
  leadId: string;
  contactId: string | null;
  /** The sending user, owner of the account. */
  userId: string;
  connectedAccountId: string;
  /** Whether the lead is live now (it may have gone during the send). */
  leadLive: boolean;
  /** The workflow the email asked to enroll the lead in once sent (`enroll_in_workflow_id`). */
  enrollInWorkflowId: string | null;
}

/** A scheduled email the sender recorded as failed, in the recording transaction. */
export interface FailedEmailFacts {
  emailId: string;
  /** The workflow enrollment whose step wrote it, with the step's index. */
  workflowEnrollmentId: string | null;
  workflowStep: number | null;
  reason: string;
  /**
   * The sender may no longer send through the account (tools/email/sender-check.ts): later emails
   * of the same sender would meet the same refusal.
   */
  senderRefused: boolean;
}

/** What a sent-email hook did, for the email's row: the enrollment it started, or why it did not. */
export interface EmailSentResult {
  /** Kept as the email's enrollment_id. */
  enrollmentId?: string;
  /** Why the asked-for follow-on did not happen, kept as the email's last_error. */
  note?: string;
  /** Work after the commit (a job to wake); a failure there must be its own to log. */
  afterCommit?: () => Promise<void>;
}

/**
 * What an area does when the sender recorded a scheduled email as sent or failed (tools/workflows:
 * enroll the lead, fail the enrollment whose sender was refused). Both run in the recording
 * transaction, only while the sender's claim holds; an error rolls the recording back. The email
 * area is built with these hooks, so it never names the areas that react.
 */
export interface EmailSentHook {
  sent(ctx: SystemHookContext, email: SentEmailFacts): Promise<EmailSentResult>;
  failed(ctx: SystemHookContext, email: FailedEmailFacts): Promise<void>;
}

/**
 * Finds, for scheduling an email with `enroll_in_workflow_id`, the live target of that id among the
 * area's records (tools/workflows: a workflow of the organization), locked against a concurrent
 * change; null when the id is none of the area's.
 */
export type EnrollTargetHook = (
  db: Executor,
  orgId: string,
  id: string,
) => Promise<{ id: string; name: string; status: string } | null>;

/** The registries an area may add entries to. */
export interface AreaRegistries extends AreaBackground {
  trashTypes: TrashType;
  ownedRecords: OwnedRecordTable;
  leadChildren: ChildTable;
  searchSources: SearchSource;
  stateMachines: StateMachine;
  leadConverted: LeadConvertedHook;
  publicRoutes: PublicRoute;
  /** WebSockets it serves on the HTTP server (core/sockets.ts), such as the voice relay. */
  socketRoutes: SocketRoute;
  emailReceived: EmailReceivedHook;
  contactMoving: ContactMovingHook;
  customActivityTypeChanging: CustomActivityTypeChangingHook;
  replyTargets: ReplyTargetHook;
  accountRemoved: AccountRemovedHook;
  emailSent: EmailSentHook;
  enrollTargets: EnrollTargetHook;
}

/**
 * What an area runs in the background (workers/runtime.ts runs them; tools/index.ts collects them):
 * its jobs (`defineJob`), the repeatable runs of them (`defineSchedule`, `dailyJob`), the sweeps
 * that wake its due rows whose job was lost, and relays that move committed rows on.
 */
export interface AreaBackground {
  jobs: DefinedJob;
  schedules: Schedule;
  sweeps: Sweep;
  relays: Relay;
}

/** Its entries in the shared registries, each optional. */
export type AreaHooks = { readonly [K in keyof AreaRegistries]?: readonly AreaRegistries[K][] };

/** The entries of one registry over every area, in area order. */
export function collect<K extends keyof AreaRegistries>(areas: readonly Area[], key: K): AreaRegistries[K][] {
  const entries: AreaRegistries[K][] = [];
  for (const area of areas) {
    const hooks: AreaHooks = area;
    const own = hooks[key];
    if (own) entries.push(...own);
  }
  return entries;
}

/**
 * What an area whose records an invoice bills (tools/projects: a project and its time entries)
 * answers for the invoices area, in the invoice's transaction. The invoices area is built with these
 * hooks, so it never reads that area's tables and the dependency runs one way (docs/architecture.md
 * "Boundaries").
 */
export interface InvoiceProjectsHook {
  /** Whether `projectId` is a live project of the organization whose client is `leadId`. */
  isProjectOfLead(db: Executor, orgId: string, projectId: string, leadId: string): Promise<boolean>;
  /** Whether the area's records were billed on this invoice (its lines are then theirs and locked). */
  billsOnInvoice(db: Executor, orgId: string, invoiceId: string): Promise<boolean>;
}

// Declaration merging: the registry of these hooks, kept beside the hook it collects.
export interface AreaRegistries {
  invoiceProjects: InvoiceProjectsHook;
}
