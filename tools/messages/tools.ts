// Message tools: send an SMS, send a WhatsApp message (both under the house's `confirm` convention,
// core/confirm.ts), read one message and list them. This file declares the tools; the send is
// send.ts, the data functions store.ts.
//
// A send answers with the provider's SID and status, so the request sends inline: the tool's
// `outside` step (core/invoke.ts: no transaction held through the network call) checks and writes
// the row `queued` with its activity in a short transaction of its own, wakes the safety-net job,
// then makes the attempt itself; the handler reads the row back. A request that dies after the
// row committed leaves the job and the sweep to send it; one that dies during the provider call
// leaves a claim the sweep ends `unknown` rather than send twice (send.ts).
import { z } from 'zod';
import type { AuthContext } from '../../core/auth-context.ts';
import { actsOn, confirmShape, type SendPreview, sendResultShape } from '../../core/confirm.ts';
import type { Executor } from '../../core/db/client.ts';
import { listParams, objectId, pagedOutput } from '../../core/schemas.ts';
import type { Services } from '../../core/services.ts';
import { actorContext } from '../../core/system-actor.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool, type OutsideContext } from '../../core/tool.ts';
import { attemptMessage, checkSend, type MessageToSend, queueMessage, wakeMessage } from './send.ts';
import {
  CHANNELS,
  type Channel,
  DIRECTIONS,
  listMessagesPage,
  messageRecords,
  messageSchema,
  serializeMessage,
} from './store.ts';

const E164 = /^\+[1-9]\d{6,14}$/;
const TEMPLATE_SID = /^HX[0-9a-fA-F]{32}$/;
const MAX_BODY = 1600;
const MAX_VARIABLES = 20;

const sendShape = {
  lead_id: objectId('lead').describe('Live lead it is logged on'),
  to: z.string().regex(E164, 'must be an E.164 number, e.g. +14155550100').describe('Recipient, E.164'),
  from_phone_number_id: objectId('phone number').describe('Number to send from (list_phone_numbers)'),
  body: z.string().min(1).max(MAX_BODY).refine(NO_NUL, nulMessage).describe(`Text, 1-${MAX_BODY} characters`),
};

const templateShape = {
  template_sid: z
    .string()
    .regex(TEMPLATE_SID, 'must be a template SID: HX followed by 32 hex characters')
    .optional()
    .describe('Approved template (HX + 32 hex)'),
  template_variables: z
    .record(z.string().min(1).max(100).describe('Name'), z.string().max(1000).describe('Value'))
    .refine((v) => Object.keys(v).length <= MAX_VARIABLES, `must have at most ${MAX_VARIABLES} variables`)
    .optional()
    .describe('Template variables (at most 20)'),
};

const sendOutput = z.object({
  ...sendResultShape,
  message: messageSchema.optional().describe('The message (absent for a preview)'),
});

type SendInput = z.output<z.ZodObject<typeof sendShape>> & {
  template_sid?: string | undefined;
  template_variables?: Record<string, string> | undefined;
};

function toSend(channel: Channel, input: SendInput): MessageToSend {
  return {
    channel,
    leadId: input.lead_id,
    to: input.to,
    fromPhoneNumberId: input.from_phone_number_id,
    body: input.body,
    templateSid: input.template_sid ?? null,
    templateVariables: input.template_variables ?? null,
  };
}

/**
 * The outside step of a send that acts: check, write the row and its activity (committed), wake the
 * job, attempt; answers the row's id. A preview does nothing here (its checks run in `preview`).
 */
async function sendOutside(
  channel: Channel,
  input: SendInput & { confirm?: boolean | undefined },
  ctx: OutsideContext,
): Promise<string | null> {
  if (!actsOn(ctx.surface, input.confirm)) return null;
  const message = toSend(channel, input);
  const row = await ctx.read(async (db) => {
    const { from } = await checkSend(db, ctx.services, ctx.auth.orgId, message, ctx.now);
    return queueMessage(actorContext(db, ctx.auth, ctx.now), message, from);
  });
  await wakeMessage(ctx.services, row);
  await attemptMessage(ctx.services, row.id, ctx.now);
  return row.id;
}

async function sendPreview(
  channel: Channel,
  input: SendInput,
  ctx: { db: Executor; services: Services; auth: AuthContext; now: Date },
): Promise<SendPreview> {
  const message = toSend(channel, input);
  const { from } = await checkSend(ctx.db, ctx.services, ctx.auth.orgId, message, ctx.now);
  const what = channel === 'sms' ? 'an SMS' : 'a WhatsApp message';
  const details = [`Channel: ${channel}`, 'Logged on the lead as an outbound activity'];
  if (message.templateSid) details.push(`Template ${message.templateSid}`);
  return {
    action: `Send ${what} to ${message.to} from ${from}`,
    sender: from,
    to: [message.to],
    cc: [],
    bcc: [],
    subject: message.body.split('\n')[0] ?? '',
    amounts: [],
    send_at: null,
    attachments: [],
    details,
  };
}

const sendErrors = [
  { code: 'telephony_not_configured', when: 'The organization has not connected its Twilio account' },
] as const;

export const sendSms = defineTool({
  name: 'send_sms',
  title: 'Send an SMS',
  description: 'Sends an SMS to a lead, logged on the lead.',
  input: z.strictObject({ ...sendShape, ...confirmShape }),
  output: sendOutput,
  access: { kind: 'write', resource: 'telephony', permission: 'messages.send' },
  annotations: { openWorldHint: true },
  errors: sendErrors,
  toolset: 'telephony',
  outside: (input, ctx) => sendOutside('sms', input, ctx),
  sends: { preview: (input, ctx) => sendPreview('sms', input, ctx) },
  async handler(_input, { db, auth, outside }) {
    return sentAnswer(db, auth.orgId, outside);
  },
});

export const sendWhatsapp = defineTool({
  name: 'send_whatsapp',
  title: 'Send a WhatsApp message',
  description:
    'Sends a WhatsApp message to a lead. Free-form only within 24h of their last message, else template_sid.',
  input: z.strictObject({ ...sendShape, ...templateShape, ...confirmShape }),
  output: sendOutput,
  access: { kind: 'write', resource: 'telephony', permission: 'messages.send' },
  annotations: { openWorldHint: true },
  errors: sendErrors,
  toolset: 'telephony',
  outside: (input, ctx) => sendOutside('whatsapp', input, ctx),
  sends: { preview: (input, ctx) => sendPreview('whatsapp', input, ctx) },
  async handler(_input, { db, auth, outside }) {
    return sentAnswer(db, auth.orgId, outside);
  },
});

/** The answer of a send that acted: the row as the attempt left it; `sent` false when it failed. */
async function sentAnswer(db: Executor, orgId: string, id: string | null) {
  if (id === null) throw new Error('a send acted without its outside step');
  const message = serializeMessage(await messageRecords.getLive(db, orgId, id));
  return { sent: message.status !== 'failed', message };
}

export const getMessage = defineTool({
  name: 'get_message',
  title: 'Get a message',
  description: 'Returns one SMS or WhatsApp message by id, with its provider status and error.',
  input: z.strictObject({ id: objectId('message') }),
  output: z.object({ message: messageSchema }),
  access: { kind: 'read', resource: 'telephony', permission: 'messages.view' },
  toolset: 'telephony',
  async handler(input, { db, auth }) {
    return { message: serializeMessage(await messageRecords.getLive(db, auth.orgId, input.id)) };
  },
});

const list = listParams(['created_at']);

export const listMessages = defineTool({
  name: 'list_messages',
  title: 'List messages',
  description:
    'Lists SMS and WhatsApp messages, newest first, by lead_id, channel, direction. Paged: `messages`, `total`, `totalPages`.',
  input: z.strictObject({
    page: list.page,
    limit: list.limit,
    sort: list.sort,
    lead_id: objectId('lead').optional().describe('This lead only'),
    channel: z.enum(CHANNELS).optional().describe('sms or whatsapp'),
    direction: z.enum(DIRECTIONS).optional().describe('inbound or outbound'),
  }),
  output: pagedOutput('messages', messageSchema),
  access: { kind: 'read', resource: 'telephony', permission: 'messages.view' },
  toolset: 'telephony',
  handler: (input, { db, auth }) => listMessagesPage(db, auth.orgId, input),
});

export const messageTools = [sendSms, sendWhatsapp, getMessage, listMessages];
