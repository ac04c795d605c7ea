// The confirm convention over MCP, with the person asked (core/confirm.ts: a sending tool called
// without `confirm: true` only previews). On a request whose client declares form elicitation, the
// tool's preview is put to the person as an `elicitation/create` (the SDK's input-required result,
// answered by the client and retried with the answer): accept with "send" runs the tool with
// `confirm: true`; decline, cancel or "don't send" answer the preview with `sent: false`, as
// today. The preview is computed again on the retry and must be the one the person saw (its digest
// travels as the request state), else they are asked again. Where no client capability is known
// (the 2025 revisions served statelessly: each request meets a fresh server that never saw the
// client's initialize) nothing changes: the preview is the answer. docs/mcp.md "Elicitation".
import { createHash } from 'node:crypto';
import {
  acceptedContent,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { previewResultSchema, type SendPreview } from '../core/confirm.ts';

/** The key of the confirmation in the input-required exchange. */
const CONFIRM_INPUT = 'confirm_send';

const answerSchema = z.object({ confirm: z.boolean() });

/** The question's form: one boolean. */
const REQUESTED_SCHEMA = {
  type: 'object' as const,
  properties: {
    confirm: {
      type: 'boolean' as const,
      title: 'Send it',
      description: 'Yes sends it now as described; no sends nothing.',
      default: false,
    },
  },
  required: ['confirm'],
};

/** Whether this request's client can be asked: it declared form-mode elicitation (a bare `elicitation: {}` is form). */
export function canAskToConfirm(server: Server): boolean {
  // On 2026-07-28 the SDK fills this per request from the request's own capabilities envelope.
  const elicitation = server.getClientCapabilities()?.elicitation;
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
}

/** The preview in a few lines for the person: action, sender, recipients, subject, amounts, timing, attachments. */
function describePreview(preview: SendPreview): string {
  const lines = [preview.action, `From: ${preview.sender}`, `To: ${preview.to.join(', ') || '(nobody)'}`];
  if (preview.cc.length > 0) lines.push(`Cc: ${preview.cc.join(', ')}`);
  if (preview.bcc.length > 0) lines.push(`Bcc: ${preview.bcc.join(', ')}`);
  lines.push(`Subject: ${preview.subject}`);
  for (const amount of preview.amounts) lines.push(`${amount.label}: ${amount.amount} ${amount.currency}`);
  if (preview.send_at) lines.push(`Goes out at: ${preview.send_at}`);
  if (preview.attachments.length > 0) lines.push(`Attachments: ${preview.attachments.join(', ')}`);
  lines.push(...preview.details);
  lines.push('Send it?');
  return lines.join('\n');
}

function digestOf(preview: SendPreview): string {
  return createHash('sha256').update(JSON.stringify(preview)).digest('base64url');
}

/**
 * What to do with a sending tool's preview on a client that can be asked: `send` (the person
 * accepted this very preview), `preview` (they declined or cancelled: answer the preview), or the
 * input-required result that asks them.
 */
export function confirmDecision(
  output: unknown,
  ctx: ServerContext,
): { kind: 'send' } | { kind: 'preview' } | { kind: 'ask'; result: InputRequiredResult } {
  const parsed = previewResultSchema.safeParse(output);
  // Not a preview (the tool acted, or answered otherwise): nothing to ask.
  if (!parsed.success) return { kind: 'preview' };
  const digest = digestOf(parsed.data.preview);
  const responses = ctx.mcpReq.inputResponses;
  const answer = inputResponse(responses, CONFIRM_INPUT);
  if (answer.kind === 'elicit') {
    const accepted = acceptedContent(responses, CONFIRM_INPUT, answerSchema);
    if (answer.action !== 'accept' || accepted?.confirm !== true) return { kind: 'preview' };
    // The person confirmed what they were shown; a preview that changed since is asked again.
    if (ctx.mcpReq.requestState() === digest) return { kind: 'send' };
  }
  return {
    kind: 'ask',
    result: inputRequired({
      inputRequests: {
        [CONFIRM_INPUT]: inputRequired.elicit({
          mode: 'form',
          message: describePreview(parsed.data.preview),
          requestedSchema: REQUESTED_SCHEMA,
        }),
      },
      requestState: digest,
    }),
  };
}
