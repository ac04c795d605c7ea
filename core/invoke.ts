// The one pipeline every call goes through, whichever surface it came from:
// (authenticated caller) -> role permission -> plan feature -> token scope -> validate input ->
// handler in a tenant transaction -> validate output -> commit (outbox events commit with it).
// A REST POST with an Idempotency-Key claims its key between the checks and the run
// (core/idempotency.ts), which is why admitCall and runTool are separate.
import type { z } from 'zod';
import {
  checkFeature,
  holdsScope,
  type PlanTable,
  type RoleTable,
  requiredScopes,
  roleHas,
  type Surface,
} from './access.ts';
import type { AuthContext } from './auth-context.ts';
import { actsOn, readConfirm } from './confirm.ts';
import type { Executor } from './db/client.ts';
import { AppError, type ErrorDetail, toAppError } from './errors.ts';
import { recordEvent } from './events.ts';
import type { Services } from './services.ts';
import type { Tool, ToolContext } from './tool.ts';

export interface CallContext {
  auth: AuthContext;
  surface: Surface;
  requestId: string;
  /** The role table the areas declared (tools/index.ts CATALOGUE), passed in by the surface. */
  access: RoleTable;
  /** The plan table the areas declared (the same catalogue), for the tools' plan features. */
  plans: PlanTable;
}

export function zodDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({
    field: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
    code: issue.code,
  }));
}

/** Access checks in the specification's order: permission (403), plan feature (402), scope (403). */
function authorize(tool: Tool, call: CallContext): void {
  const { auth } = call;
  const { permission, feature, kind, resource } = tool.access;
  if (permission && !roleHas(call.access, auth.role, permission)) {
    throw new AppError('forbidden', { extra: { required_permission: permission } });
  }
  if (feature) {
    const check = checkFeature(
      auth.plan,
      auth.disabledFeatures,
      feature,
      call.plans.lowest.get(feature) ?? 'free',
    );
    if (!check.ok) {
      throw new AppError(check.reason, {
        message: `The "${feature}" feature is not available to this organization`,
        extra: { feature, current_plan: auth.plan },
      });
    }
  }
  if (auth.scopes !== null) {
    const needed = requiredScopes(call.surface, kind, resource);
    if (needed && !holdsScope(auth.scopes, needed)) {
      throw new AppError('scope_missing', {
        error: `Token lacks required scope: ${needed[0]}`,
        extra: { required_scope: needed[0] },
      });
    }
  }
}

/** True when the caller may see the tool at all (used to list MCP tools per caller). */
export function canSee(tool: Tool, call: CallContext): boolean {
  try {
    authorize(tool, call);
    return true;
  } catch {
    return false;
  }
}

function parseInput<I extends z.ZodObject>(tool: Tool<I>, raw: unknown): z.output<I> {
  const parsed = tool.input.safeParse(raw ?? {});
  if (!parsed.success) throw new AppError('validation_failed', { details: zodDetails(parsed.error) });
  return parsed.data;
}

/** The checks before anything runs (access, then input): a refusal here has run nothing. */
export function admitCall<I extends z.ZodObject, O extends z.ZodType, P>(
  tool: Tool<I, O, P>,
  rawInput: unknown,
  call: CallContext,
): z.output<I> {
  authorize(tool, call);
  return parseInput(tool, rawInput);
}

export async function invokeTool<I extends z.ZodObject, O extends z.ZodType, P>(
  tool: Tool<I, O, P>,
  rawInput: unknown,
  call: CallContext,
  services: Services,
): Promise<z.output<O>> {
  return runTool(tool, admitCall(tool, rawInput, call), call, services);
}

/**
 * A tool's `outside` step (ToolDefinition.outside): network work of seconds, outside any
 * transaction, with short tenant reads of its own. Undefined for a tool without one, whose P is
 * undefined (defineTool).
 */
async function runOutside<I extends z.ZodObject, O extends z.ZodType, P>(
  tool: Tool<I, O, P>,
  input: z.output<I>,
  call: CallContext,
  services: Services,
): Promise<P> {
  if (!tool.outside) return undefined as P;
  try {
    return await tool.outside(input, {
      auth: call.auth,
      services,
      surface: call.surface,
      requestId: call.requestId,
      now: new Date(),
      read: (fn) => services.db.withTenant(call.auth.orgId, fn),
    });
  } catch (err) {
    const appError = toAppError(err);
    if (appError.code === 'internal') {
      services.logger.error({ err, tool: tool.name, requestId: call.requestId }, 'tool failed');
    }
    throw appError;
  }
}

/**
 * Runs an admitted call: the `outside` step, the handler in its tenant transaction, the output check,
 * then the after-commit hooks. `keep`, when given, runs last inside the transaction with the checked
 * output, so what it writes commits or rolls back with the handler's changes (the idempotency key's
 * answer, core/idempotency.ts). A sending tool called without the decision to send only previews
 * (previewOnly, core/confirm.ts), on every path that runs a tool.
 */
export async function runTool<I extends z.ZodObject, O extends z.ZodType, P>(
  tool: Tool<I, O, P>,
  input: z.output<I>,
  call: CallContext,
  services: Services,
  keep?: (tx: Executor, output: z.output<O>) => Promise<void>,
): Promise<z.output<O>> {
  // The network part of the tool, if any, before any transaction (ToolDefinition.outside).
  const outside = await runOutside(tool, input, call, services);
  if (tool.sends && !actsOn(call.surface, readConfirm(input))) {
    return previewOnly(tool, input, outside, call, services, keep);
  }
  const committed: (() => Promise<void> | void)[] = [];
  let output: z.output<O>;
  try {
    output = await services.db.withTenant(call.auth.orgId, async (tx) => {
      const result = await tool.handler(input, {
        outside,
        auth: call.auth,
        db: tx,
        emit: async (event, data) => {
          await recordEvent(tx, call.auth.orgId, event, data);
        },
        afterCommit: (fn) => {
          committed.push(fn);
        },
        services,
        surface: call.surface,
        requestId: call.requestId,
        now: new Date(),
      });
      // Checked inside the transaction: output that breaks its own contract rolls the change back.
      const checked = tool.output.safeParse(result);
      if (!checked.success) {
        throw new Error(`Tool ${tool.name} returned output outside its schema: ${checked.error.message}`);
      }
      if (keep) await keep(tx, checked.data);
      return checked.data;
    });
  } catch (err) {
    const appError = toAppError(err);
    if (appError.code === 'internal') {
      services.logger.error({ err, tool: tool.name, requestId: call.requestId }, 'tool failed');
    }
    throw appError;
  }
  for (const fn of committed) {
    // The change is committed: a failing hook is logged, and the caller still learns it succeeded.
    try {
      await fn();
    } catch (err) {
      services.logger.error({ err, tool: tool.name, requestId: call.requestId }, 'after-commit hook failed');
    }
  }
  return output;
}

/** Thrown to roll a preview's transaction back once the preview is read. */
class PreviewRollback extends Error {}

/**
 * A sending tool called without the decision to send (core/confirm.ts): its preview, computed in a
 * tenant transaction that is always rolled back, so a preview changes nothing even if the area's
 * preview code wrote or emitted by mistake. The `outside` step has run (it only reads); the handler
 * does not; `keep` (runTool) stores the preview as the answer in a short transaction of its own.
 */
async function previewOnly<I extends z.ZodObject, O extends z.ZodType, P>(
  tool: Tool<I, O, P>,
  input: z.output<I>,
  outside: P,
  call: CallContext,
  services: Services,
  keep: ((tx: Executor, output: z.output<O>) => Promise<void>) | undefined,
): Promise<z.output<O>> {
  const sends = tool.sends;
  if (!sends) throw new Error(`Tool ${tool.name} has no preview`);
  let output: z.output<O> | undefined;
  try {
    await services.db.withTenant(call.auth.orgId, async (tx) => {
      const ctx: ToolContext & { outside: P } = {
        outside,
        auth: call.auth,
        db: tx,
        emit: async (event, data) => {
          await recordEvent(tx, call.auth.orgId, event, data);
        },
        afterCommit: () => {},
        services,
        surface: call.surface,
        requestId: call.requestId,
        now: new Date(),
      };
      const preview = await sends.preview(input, ctx);
      const checked = tool.output.safeParse({ sent: false, preview });
      if (!checked.success) {
        throw new Error(`Tool ${tool.name} returned a preview outside its schema: ${checked.error.message}`);
      }
      output = checked.data;
      throw new PreviewRollback('preview only');
    });
  } catch (err) {
    if (!(err instanceof PreviewRollback)) {
      const appError = toAppError(err);
      if (appError.code === 'internal') {
        services.logger.error({ err, tool: tool.name, requestId: call.requestId }, 'tool preview failed');
      }
      throw appError;
    }
  }
  if (output === undefined) throw new Error(`Tool ${tool.name} produced no preview`);
  // The preview is the answer an idempotency key keeps (core/idempotency.ts), in a transaction of its own.
  const answer = output;
  if (keep) {
    try {
      await services.db.withTenant(call.auth.orgId, (tx) => keep(tx, answer));
    } catch (err) {
      throw toAppError(err);
    }
  }
  return answer;
}
