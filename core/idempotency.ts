// REST idempotency keys (Stripe's semantics; docs/decisions.md "Idempotency keys"): a `POST` with an
// `Idempotency-Key` runs at most once per organization, credential and key for 24 hours. The first
// request claims the key in a short transaction of its own, committed before anything runs, so a
// concurrent request with the key sees the claim and is told 409 instead of running too. The
// handler's answer is then written in the handler's own transaction, with its changes: a response is
// never kept for work that rolled back, and work never commits without its response. A later request
// with the key and the same method, path and input gets the kept answer; a different request 422.
// Refusals before anything ran (authentication, role, plan, scope, rate limits, validation) never
// reach the claim, so the key stays free for the corrected retry; 5xx answers release it too.
// A claim whose process died is taken over once its lease lapses.
import { createHash, randomBytes } from 'node:crypto';
import { and, eq, lt, or } from 'drizzle-orm';
import type { z } from 'zod';
import type { AuthContext } from './auth-context.ts';
import type { Executor } from './db/client.ts';
import { idempotencyKeys } from './db/schema.ts';
import { AppError, toAppError } from './errors.ts';
import { newId } from './ids.ts';
import { admitCall, type CallContext, runTool } from './invoke.ts';
import type { Services } from './services.ts';
import type { Tool } from './tool.ts';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** How long an outcome is kept and answered again. */
const IDEMPOTENCY_KEPT_MS = 24 * 60 * 60 * 1000;
/**
 * How long a claim holds its key without an outcome. Longer than any request may run (statement,
 * lock and SMTP time limits are seconds to a minute), short enough that a key whose process died
 * mid-request can be used again the same hour.
 */
const IDEMPOTENCY_LEASE_MS = 10 * 60 * 1000;

/** 1 to 255 printable ASCII characters (a UUID is the usual choice). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * The key of a request, or undefined when it carries none; a malformed one is a 400 naming the
 * header (refused before execution, so nothing is kept).
 */
export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (KEY_PATTERN.test(value)) return value;
  throw new AppError('validation_failed', {
    message: `The ${IDEMPOTENCY_KEY_HEADER} header must be 1 to 255 printable ASCII characters`,
    details: [
      {
        field: IDEMPOTENCY_KEY_HEADER,
        message: 'must be 1 to 255 printable ASCII characters',
        code: 'invalid_format',
      },
    ],
  });
}

/** What makes two requests "the same": the method, the path and the input the tool is given. */
export interface IdempotentRequest {
  key: string;
  method: string;
  path: string;
  /** The raw input (path parameters, query and body) before parsing. */
  input: unknown;
}

/** An answer as sent: status and JSON text; `replayed` when it is a kept one sent again. */
export interface IdempotentAnswer {
  status: number;
  json: string;
  replayed: boolean;
}

/** JSON with object keys sorted at every level, so key order in a body does not make a request different. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function requestHash(request: IdempotentRequest): string {
  return createHash('sha256')
    .update(`${request.method}\n${request.path}\n${canonicalJson(request.input)}`)
    .digest('hex');
}

/** Keys are per credential: two API keys of one user, or a key and a session, never share one. */
function credentialOf(auth: AuthContext): string {
  return auth.credentialId ?? `session:${auth.userId}`;
}

type Claim = { kind: 'run'; id: string; claim: string } | { kind: 'replay'; status: number; json: string };

function inUse(): AppError {
  return new AppError('idempotency_key_in_use', {
    message: `A request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry once it has finished`,
  });
}

/**
 * Claims the key for this request, or finds what it already holds. Runs in its own transaction,
 * committed before the tool runs, so a concurrent request sees the claim. On PostgreSQL a second
 * insert of the same key waits only for this short transaction, never for the tool.
 */
async function claimKey(services: Services, auth: AuthContext, request: IdempotentRequest): Promise<Claim> {
  const credential = credentialOf(auth);
  const hash = requestHash(request);
  const fresh = (now: Date) => ({
    method: request.method,
    path: request.path,
    requestHash: hash,
    status: 'in_flight',
    claim: randomBytes(12).toString('hex'),
    leaseUntil: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS),
    responseStatus: null,
    responseBody: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_KEPT_MS),
  });
  // A row released (deleted) or taken over between two statements sends us round again.
  for (let round = 0; round < 3; round++) {
    const claim = await services.db.withTenant(auth.orgId, async (tx): Promise<Claim | null> => {
      const now = new Date();
      const values = fresh(now);
      const id = newId(now);
      const inserted = await tx
        .insert(idempotencyKeys)
        .values({ id, orgId: auth.orgId, credential, key: request.key, ...values })
        .onConflictDoNothing({
          target: [idempotencyKeys.orgId, idempotencyKeys.credential, idempotencyKeys.key],
        })
        .returning({ id: idempotencyKeys.id });
      if (inserted.length > 0) return { kind: 'run', id, claim: values.claim };

      const [row] = await tx
        .select()
        .from(idempotencyKeys)
        .where(
          and(
            eq(idempotencyKeys.orgId, auth.orgId),
            eq(idempotencyKeys.credential, credential),
            eq(idempotencyKeys.key, request.key),
          ),
        )
        .limit(1);
      if (!row) return null;
      const expired = row.expiresAt <= now;
      const abandoned = row.status === 'in_flight' && row.leaseUntil !== null && row.leaseUntil <= now;
      if (expired || abandoned) {
        // Only if nobody finished or took it meanwhile: the claim and status must still be the ones read.
        const [taken] = await tx
          .update(idempotencyKeys)
          .set(values)
          .where(
            and(
              eq(idempotencyKeys.id, row.id),
              eq(idempotencyKeys.claim, row.claim),
              eq(idempotencyKeys.status, row.status),
            ),
          )
          .returning({ id: idempotencyKeys.id });
        return taken ? { kind: 'run', id: row.id, claim: values.claim } : null;
      }
      if (row.requestHash !== hash) {
        throw new AppError('idempotency_key_reused', {
          message: `This ${IDEMPOTENCY_KEY_HEADER} was used for a different request (method, path or body); use a new key`,
        });
      }
      if (row.status !== 'done' || row.responseStatus === null || row.responseBody === null) throw inUse();
      return { kind: 'replay', status: row.responseStatus, json: row.responseBody };
    });
    if (claim) return claim;
  }
  throw inUse();
}

/** The row of this claim, as long as it is still ours and running. */
function ours(claim: { id: string; claim: string }) {
  return and(
    eq(idempotencyKeys.id, claim.id),
    eq(idempotencyKeys.claim, claim.claim),
    eq(idempotencyKeys.status, 'in_flight'),
  );
}

/** Writes the outcome on the claim; false when the claim is no longer ours (its lease lapsed and another request took the key). */
async function keepOutcome(
  db: Executor,
  claim: { id: string; claim: string },
  status: number,
  json: string,
): Promise<boolean> {
  const kept = await db
    .update(idempotencyKeys)
    .set({ status: 'done', responseStatus: status, responseBody: json, leaseUntil: null })
    .where(ours(claim))
    .returning({ id: idempotencyKeys.id });
  return kept.length > 0;
}

/**
 * Whether a failure raised once the tool started is kept like a success. Stripe's rule: a result is
 * kept once the endpoint started executing, except validation failures and errors the server may
 * not repeat (5xx: the retry may succeed). Refusals of access (401, 402, 403) and rate limits (429)
 * are answered before the claim by the pipeline; a tool raising one itself is refused alike.
 */
function keptAfterFailure(error: AppError): boolean {
  if (error.status >= 500) return false;
  if ([401, 402, 403, 429].includes(error.status)) return false;
  return (
    error.code !== 'validation_failed' &&
    error.code !== 'invalid_json' &&
    error.code !== 'idempotency_key_in_use'
  );
}

/**
 * Runs a tool for a request carrying an idempotency key: the access and input checks first (a
 * refusal keeps nothing), then the claim, then the tool with its outcome kept in its transaction.
 * Answers the kept response instead when the key already holds one for this request.
 */
export async function invokeIdempotent<I extends z.ZodObject, O extends z.ZodType, P>(
  tool: Tool<I, O, P>,
  request: IdempotentRequest,
  call: CallContext,
  services: Services,
  statusOf: (output: z.output<O>) => number,
): Promise<IdempotentAnswer> {
  const input = admitCall(tool, request.input, call);
  const claim = await claimKey(services, call.auth, request);
  if (claim.kind === 'replay') return { status: claim.status, json: claim.json, replayed: true };
  let answer: IdempotentAnswer | undefined;
  try {
    await runTool(tool, input, call, services, async (tx, output) => {
      answer = { status: statusOf(output), json: JSON.stringify(output), replayed: false };
      // Rolls the tool's changes back if another request took the key over: it runs, not both.
      if (!(await keepOutcome(tx, claim, answer.status, answer.json))) throw inUse();
    });
  } catch (err) {
    const error = toAppError(err);
    await settleFailure(services, call, claim, error);
    throw error;
  }
  if (!answer) throw new Error(`Tool ${tool.name} finished without its answer being kept`);
  return answer;
}

/** After a failure: keep the error as the key's answer, or free the key for a retry. */
async function settleFailure(
  services: Services,
  call: CallContext,
  claim: { id: string; claim: string },
  error: AppError,
): Promise<void> {
  try {
    await services.db.withTenant(call.auth.orgId, async (tx) => {
      if (keptAfterFailure(error)) {
        await keepOutcome(tx, claim, error.status, JSON.stringify(error.body));
      } else {
        await tx.delete(idempotencyKeys).where(ours(claim));
      }
    });
  } catch (err) {
    // The claim's lease frees the key later; the caller still learns the original failure.
    services.logger.error({ err, requestId: call.requestId }, 'could not settle an idempotency key');
  }
}

/** Deletes keys kept past their 24 hours (the daily 'idempotency.expire' job); returns how many. */
export async function deleteExpiredIdempotencyKeys(services: Services, now = new Date()): Promise<number> {
  const deleted = await services.db.system
    .delete(idempotencyKeys)
    .where(
      or(
        lt(idempotencyKeys.expiresAt, now),
        and(eq(idempotencyKeys.status, 'in_flight'), lt(idempotencyKeys.leaseUntil, now)),
      ),
    )
    .returning({ id: idempotencyKeys.id });
  return deleted.length;
}
