// A tool is one declaration: name, description, zod input and output, the access it needs, MCP
// annotations and a handler. REST routes and MCP tools are both generated from these, so
// validation, errors and access rules cannot drift between the two surfaces.
import { z } from 'zod';
import type { AccessKind, Feature, Permission, ScopeFamily, Surface } from './access.ts';
import type { AuthContext } from './auth-context.ts';
import { CONFIRM_RULE, confirmField, type SendPreview, sendResultShape } from './confirm.ts';
import type { Executor } from './db/client.ts';
import type { ErrorCode } from './errors.ts';
import type { Emit } from './events.ts';
import type { Services } from './services.ts';

export interface ToolAccess {
  kind: AccessKind;
  /**
   * The scope family whose `read:`/`write:` scope a REST token needs (docs/contracts.md "Scopes for
   * every tool"). Required, so a tool added later cannot forget it; null only for tools that need no scope
   * of their own (get_me, and the trash, which checks each record type's family itself).
   */
  resource: ScopeFamily | null;
  /** Role permission required, or null for tools every signed-in user may call (get_me). */
  permission: Permission | null;
  /** Plan feature required (402 when the plan lacks it or the organization switched it off). */
  feature?: Feature;
}

/** A failure the handler answers of its own accord, beyond what the pipeline answers for every tool. */
export interface ToolError {
  code: ErrorCode;
  /** When it happens, in the words of the reference documentation. */
  when: string;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolContext {
  auth: AuthContext;
  /** The tenant transaction: every query runs under row-level security for `auth.orgId`. */
  db: Executor;
  /** Writes an event to the outbox in the same transaction as the change. */
  emit: Emit;
  /**
   * Runs `fn` once the transaction has committed and before the response is sent (never after a
   * rollback): for effects outside the database that must not get ahead of it, such as dropping
   * cached credentials.
   */
  afterCommit(fn: () => Promise<void> | void): void;
  services: Services;
  surface: Surface;
  requestId: string;
  now: Date;
}

/** What a tool's `outside` step may use: no transaction, but short tenant transactions of its own. */
export interface OutsideContext {
  auth: AuthContext;
  services: Services;
  surface: Surface;
  requestId: string;
  now: Date;
  /** Runs `fn` in a short tenant transaction of its own (the reads the network call needs). */
  read<T>(fn: (db: Executor) => Promise<T>): Promise<T>;
}

export type ToolInputSchema = z.ZodObject;

/**
 * A tool that sends to the outside world (mail, SMS, calls, documents) declares it here, and the
 * pipeline applies the one `confirm` convention (core/confirm.ts): the handler runs only when the
 * call acts; otherwise `preview` runs, in a transaction that is rolled back, and the answer is
 * `{sent: false, preview}`. The tool's input carries `...confirmShape` and its output
 * `...sendResultShape` (defineTool checks both), so the field and the shapes exist once.
 */
export interface SendDeclaration<I extends ToolInputSchema, P = undefined> {
  /**
   * What acting would send: the same refusals as sending (a paid invoice, no recipient, an
   * attachment that is not there), no writes. The tool's `outside` step runs first, so the preview
   * sees what it found (it must only read: a preview acts on nothing).
   */
  preview(input: z.output<I>, ctx: ToolContext & { outside: P }): Promise<SendPreview>;
}

/**
 * `N` is the tool's name as a literal type (`'create_lead'`), inferred by defineTool from the
 * declaration, so a map of tools by name (toolMap, core/area.ts) keeps each tool's own schemas.
 */
export interface ToolDefinition<
  I extends ToolInputSchema,
  O extends z.ZodType,
  P = undefined,
  N extends string = string,
> {
  /** snake_case verb_noun, e.g. `create_lead`. */
  name: N;
  title: string;
  /** Written for a model: what it does, when to use it, how pagination works. */
  description: string;
  input: I;
  output: O;
  access: ToolAccess;
  /**
   * Failures the handler answers beyond the pipeline's own (validation, access, plan feature, a
   * missing record named in the path, a busy database): a referenced record that does not exist
   * (404), a duplicate or a state that forbids the change (409). The OpenAPI document lists them;
   * the schema-derived fuzz (test/openapi-fuzz.test.ts) catches a status nobody declared.
   */
  errors?: readonly ToolError[];
  /** Defaults derive from `access.kind`; a write is not destructive unless it says so. */
  annotations?: Partial<ToolAnnotations>;
  /** MCP toolset this tool belongs to; `core` tools are listed by default. */
  toolset?: string;
  /**
   * Work that must not hold the request's database transaction: a network call that may take
   * seconds (an SMTP session, a model's answer). It runs after the access checks and the input
   * parsing, before the handler's transaction opens, and its result reaches the handler as
   * `ctx.outside`. A pooled connection held through such a call would let a few slow calls (a
   * server that never answers) starve every other request of the pool.
   */
  outside?(input: z.output<I>, ctx: OutsideContext): Promise<P>;
  /** Declared by every tool that sends to the outside world: see SendDeclaration. */
  sends?: SendDeclaration<I, P>;
  /**
   * An open-world write that sends nothing to a person says what it reaches instead, in a sentence
   * (it logs in to the organization's own SMTP server; it verifies the telephony account). An
   * open-world write with neither this nor `sends` does not start: the `confirm` convention cannot
   * be forgotten by leaving it out.
   */
  reachesWithoutSending?: string;
  // Method syntax keeps handler parameters bivariant, so tools of different schemas share one list.
  handler(input: z.output<I>, ctx: ToolContext & { outside: P }): Promise<z.input<O>>;
}

export interface Tool<
  I extends ToolInputSchema = ToolInputSchema,
  O extends z.ZodType = z.ZodType,
  P = unknown,
  N extends string = string,
> extends ToolDefinition<I, O, P, N> {
  annotations: ToolAnnotations;
  toolset: string;
}

const TOOL_NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)+$/;

export function defineTool<
  I extends ToolInputSchema,
  O extends z.ZodType,
  P = undefined,
  N extends string = string,
>(def: ToolDefinition<I, O, P, N>): Tool<I, O, P, N> {
  if (!TOOL_NAME.test(def.name)) throw new Error(`Tool name "${def.name}" must be snake_case verb_noun`);
  if (def.description.trim().length < 20) throw new Error(`Tool "${def.name}" needs a real description`);
  checkSendDeclaration(def);
  const read = def.access.kind === 'read';
  return {
    ...def,
    description: def.sends ? `${def.description} ${CONFIRM_RULE}` : def.description,
    toolset: def.toolset ?? 'core',
    annotations: {
      readOnlyHint: read,
      destructiveHint: false,
      idempotentHint: read,
      openWorldHint: false,
      ...def.annotations,
    },
  };
}

/**
 * A sending tool takes the shared `confirm` field and answers the shared result shape; a tool with a
 * `confirm` field but no `sends` declaration would have a convention of its own. Checked when the
 * tool is defined, so such a tool never starts.
 */
function checkSendDeclaration<I extends ToolInputSchema, O extends z.ZodType, P, N extends string>(
  def: ToolDefinition<I, O, P, N>,
): void {
  const hasConfirm = 'confirm' in def.input.shape;
  if (!def.sends) {
    if (hasConfirm) throw new Error(`Tool "${def.name}" takes \`confirm\` but does not declare \`sends\``);
    if (
      def.annotations?.openWorldHint === true &&
      def.access.kind === 'write' &&
      !def.reachesWithoutSending
    ) {
      throw new Error(
        `Tool "${def.name}" is an open-world write: it declares \`sends\` or says in \`reachesWithoutSending\` what it reaches`,
      );
    }
    return;
  }
  if (def.reachesWithoutSending !== undefined) {
    throw new Error(`Tool "${def.name}" declares \`sends\`: it cannot also reach without sending`);
  }
  if (def.input.shape.confirm !== confirmField) {
    throw new Error(`Tool "${def.name}" declares \`sends\`: its input must spread confirmShape`);
  }
  const output = def.output;
  if (
    !(output instanceof z.ZodObject) ||
    output.shape.sent !== sendResultShape.sent ||
    output.shape.preview !== sendResultShape.preview
  ) {
    throw new Error(`Tool "${def.name}" declares \`sends\`: its output must spread sendResultShape`);
  }
  if (def.annotations?.openWorldHint !== true || def.access.kind !== 'write') {
    throw new Error(`Tool "${def.name}" declares \`sends\`: it must be a write with openWorldHint`);
  }
}
