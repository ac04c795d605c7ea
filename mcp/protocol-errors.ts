// Failures of the MCP requests that are no tool call (resources, prompts, completion): they have no
// `isError` result to carry the REST envelope, so they are JSON-RPC errors carrying it as `data`.
// Bad input and a missing record are -32602 Invalid params, an access refusal (scope, permission,
// plan) -32600 Invalid request; an unknown failure never shows its cause (a request id does).
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { AppError } from '../core/errors.ts';
import type { CallContext } from '../core/invoke.ts';
import type { Services } from '../core/services.ts';

const INVALID_PARAMS_CODES: ReadonlySet<string> = new Set([
  'validation_failed',
  'invalid_id',
  'not_found',
  'invalid_operation',
]);

/** The JSON-RPC error for anything a resource, prompt or completion handler threw. */
export function protocolErrorOf(
  err: unknown,
  call: CallContext,
  services: Services,
  what: string,
): ProtocolError {
  if (err instanceof ProtocolError) return err;
  if (err instanceof AppError && err.code !== 'internal') {
    const form = err.mcpForm;
    if (form.kind === 'jsonrpc') return new ProtocolError(form.code, err.body.error, err.body);
    const code = INVALID_PARAMS_CODES.has(err.code)
      ? ProtocolErrorCode.InvalidParams
      : ProtocolErrorCode.InvalidRequest;
    return new ProtocolError(code, err.body.message ?? err.body.error, err.body);
  }
  // invokeTool has already logged an internal AppError with its cause; anything else is new here.
  if (!(err instanceof AppError)) {
    services.logger.error({ err, requestId: call.requestId }, `MCP ${what} failed`);
  }
  return new ProtocolError(ProtocolErrorCode.InternalError, `Internal error (request id ${call.requestId})`, {
    request_id: call.requestId,
  });
}
