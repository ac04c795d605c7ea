// MCP logging on the 2025 revisions: the `logging` capability, `logging/setLevel`, and the
// `notifications/message` a tool call sends (logger "crm", structured data) at or above the level
// the caller's credential set. The endpoint is stateless (a fresh server per request), so the level
// is kept per credential in the shared store (core/log-levels.ts), never in the server instance;
// nothing is sent until a level is set. The 2026-07-28 revision deprecates logging (SEP-2577): there
// the capability is not declared, `logging/setLevel` is the SDK's 404 / -32601, and nothing is sent.
// docs/mcp.md "Logging".
//
// The SDK's own handler and its `ctx.mcpReq.log` keep the level in the server instance and, with
// none set there, send every message: this module replaces the handler and sends through
// `ctx.mcpReq.notify` after its own check against the stored level.
import {
  type CallToolResult,
  type McpRequestContext,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { previewResultSchema } from '../core/confirm.ts';
import type { CallContext } from '../core/invoke.ts';
import { atLeast, LOG_LEVELS, type LogLevel } from '../core/log-levels.ts';
import type { Services } from '../core/services.ts';
import type { Tool } from '../core/tool.ts';
import { type ResultCut, savedIds } from './results.ts';

/** The protocol era a server instance serves (the SDK decides it per request, isLegacyRequest). */
export type Era = McpRequestContext['era'];

/** The `logger` of every message this server sends. */
const LOGGER = 'crm';

/** Whose level it is: the API key or OAuth token, or the user for a session token (as the MCP rate limit counts). */
function levelKeyOf(call: CallContext): string {
  return call.auth.credentialId ?? `user:${call.auth.userId}`;
}

/** The capability entry: `logging` on the 2025 eras, nothing on 2026-07-28. */
export function loggingCapability(era: Era): Pick<ServerCapabilities, 'logging'> {
  return era === 'legacy' ? { logging: {} } : {};
}

// A level outside the eight is -32602 Invalid params (the SDK's check for a handler with schemas).
const setLevelParams = z.looseObject({ level: z.enum(LOG_LEVELS) });

/** `logging/setLevel` on the 2025 eras: the level is stored for the caller's credential (24 h, renewed by each set). */
export function registerLogging(server: Server, era: Era, call: CallContext, services: Services): void {
  if (era !== 'legacy') return;
  server.setRequestHandler('logging/setLevel', { params: setLevelParams }, async ({ level }) => {
    await services.logLevels.set(levelKeyOf(call), level);
    return {};
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a send queued, from its answer: the mail (id, recipient, subject, delivery), ids and times. */
function queuedBy(output: Record<string, unknown>): Record<string, unknown> {
  const queued: Record<string, unknown> = {};
  const { mail } = output;
  if (isRecord(mail)) {
    queued.mail = { id: mail.id, to: mail.to, subject: mail.subject, delivery: mail.delivery };
  }
  for (const [key, value] of Object.entries(output)) {
    if (typeof value === 'string' && (key.endsWith('_id') || key.endsWith('_at'))) queued[key] = value;
  }
  const ids = savedIds(output);
  if (ids.length > 0) queued.records = ids;
  return queued;
}

type Outcome = 'success' | 'tool_error' | 'protocol_error' | 'internal_error';

/**
 * The messages of one `tools/call`. The caller's level is read once, while the tool runs; every
 * message is awaited before the handler answers, so on the 2025 stateless POST it goes out on the
 * request's SSE stream ahead of the result. On 2026-07-28 it sends nothing.
 */
export class ToolCallLog {
  private readonly started = performance.now();

  private constructor(
    private readonly toolName: string,
    private readonly call: CallContext,
    private readonly services: Services,
    /** The caller's level, or null when nothing is to be sent. */
    private readonly level: Promise<LogLevel | null>,
    private readonly ctx: ServerContext | undefined,
  ) {}

  /** The messages of a call served by an SDK server: the caller's level is read while the tool runs. */
  static forRequest(
    era: Era,
    toolName: string,
    call: CallContext,
    services: Services,
    ctx: ServerContext,
  ): ToolCallLog {
    const level = era === 'legacy' ? services.logLevels.get(levelKeyOf(call)) : Promise.resolve(null);
    return new ToolCallLog(toolName, call, services, level, ctx);
  }

  /**
   * The messages of a call whose caller has set no level (mcp/direct-call.ts answers only such
   * calls, having read the level): none are sent, and there is no stream to send them on.
   */
  static silent(toolName: string, call: CallContext, services: Services): ToolCallLog {
    return new ToolCallLog(toolName, call, services, Promise.resolve(null), undefined);
  }

  private async send(level: LogLevel, data: Record<string, unknown>): Promise<void> {
    const min = await this.level;
    if (min === null || !atLeast(level, min) || !this.ctx) return;
    try {
      await this.ctx.mcpReq.notify({
        method: 'notifications/message',
        params: { level, logger: LOGGER, data },
      });
    } catch (err) {
      // The client went away or the stream closed: the call itself is unaffected.
      this.services.logger.warn(
        { err, tool: this.toolName, requestId: this.call.requestId },
        'MCP log message not delivered',
      );
    }
  }

  /**
   * After a successful run: `info` when a sending tool sent or queued something, `notice` when it
   * answered a preview instead, `warning` when the result was cut to the budget.
   */
  async succeeded(tool: Tool, output: unknown, cut: ResultCut | undefined): Promise<void> {
    if (tool.sends && isRecord(output)) {
      const preview = previewResultSchema.safeParse(output);
      if (preview.success) {
        const { action, to, subject } = preview.data.preview;
        await this.send('notice', {
          event: 'preview_returned',
          tool: tool.name,
          message: `Nothing was sent: ${tool.name} answered a preview. Call it again with confirm: true to send.`,
          action,
          to,
          subject,
        });
      } else if (output.sent === true) {
        await this.send('info', {
          event: 'sent',
          tool: tool.name,
          message: `${tool.name} sent or queued it; it goes out in the background.`,
          ...queuedBy(output),
        });
      }
    }
    if (cut) {
      await this.send('warning', {
        event: cut.kind === 'truncated' ? 'result_truncated' : 'result_shortened',
        tool: tool.name,
        message:
          cut.kind === 'truncated'
            ? `The result of ${tool.name} was cut to its first ${cut.budget} characters and returned as an error; ask for less.`
            : `${tool.name} succeeded; its result was shortened to fit ${cut.budget} characters. Do not repeat it.`,
        full_chars: cut.fullChars,
        limit_chars: cut.budget,
      });
    }
  }

  /** After a failure thrown out of the handler: `error` with the request id when it was internal. */
  async failed(err: unknown): Promise<Outcome> {
    const internal = !(err instanceof ProtocolError) || err.code === ProtocolErrorCode.InternalError;
    if (internal) {
      await this.send('error', {
        event: 'internal_error',
        tool: this.toolName,
        message: `${this.toolName} failed inside the server; the server log has the details under this request id.`,
        request_id: this.call.requestId,
      });
    }
    return internal ? 'internal_error' : 'protocol_error';
  }

  /** Last, for every call: `debug` with the tool, how it ended and how long it took. */
  async finished(outcome: Outcome | CallToolResult): Promise<void> {
    const ended = typeof outcome === 'string' ? outcome : outcome.isError ? 'tool_error' : 'success';
    await this.send('debug', {
      event: 'tool_call',
      tool: this.toolName,
      outcome: ended,
      duration_ms: Math.round(performance.now() - this.started),
      request_id: this.call.requestId,
    });
  }
}
