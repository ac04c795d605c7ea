// Phone number tools: list, get, create, update, delete (to the trash) and set the default voice
// agent. This file declares the tools; the data functions are store.ts, the rules
// docs/areas/phone-numbers.md. Nothing here calls the telephony provider: a number is a record the
// call and message hooks read.
import { z } from 'zod';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import {
  insertPhoneNumber,
  listPhoneNumbersPage,
  PHONE_NUMBER_SORT_FIELDS,
  phoneNumberRecords,
  phoneNumberSchema,
  serializePhoneNumber,
  writePhoneNumber,
} from './store.ts';

const MAX_LABEL = 100;

/** E.164: `+`, then 7-15 digits, the first not 0. */
const E164 = /^\+[1-9]\d{6,14}$/;
const e164 = (what: string) =>
  z
    .string()
    .trim()
    .regex(E164, 'must be an E.164 number: + then 7-15 digits, the first not 0 (e.g. +14155550100)')
    .describe(what);

const numberField = e164('E.164, e.g. +14155550100; unique while live');
const labelField = z
  .string()
  .trim()
  .max(MAX_LABEL)
  .refine(NO_NUL, nulMessage)
  .transform((v) => (v === '' ? null : v))
  .nullable()
  .describe(`Label (<= ${MAX_LABEL}); null for none`);
const capabilitiesField = z
  .strictObject({
    voice: z.boolean().optional().describe('Calls (default true)'),
    sms: z.boolean().optional().describe('SMS (default true)'),
    whatsapp: z.boolean().optional().describe('WhatsApp (default false)'),
  })
  .describe('Capabilities; omitted flags are kept');
const defaultVoiceAgentField = objectId('voice agent')
  .nullable()
  .describe('Active voice agent id; null for none');
const forwardToField = e164('E.164 to dial when no agent answers')
  .nullable()
  .describe('E.164 to dial when no agent answers; null for none');
const ownerField = objectId('owner').describe('An active user (default: the creator)');

const idShape = { id: objectId('phone number') };
const output = z.object({ phone_number: phoneNumberSchema });

const access = (
  kind: 'read' | 'write',
  permission: 'phone_numbers.view' | 'phone_numbers.create' | 'phone_numbers.edit' | 'phone_numbers.delete',
) => ({ kind, resource: 'telephony', permission }) as const;

// Records of this server only: nothing reaches the provider, so none of these is open-world.
const closed = { openWorldHint: false } as const;

export const listPhoneNumbers = defineTool({
  name: 'list_phone_numbers',
  title: 'List phone numbers',
  description: 'Lists the live phone numbers, newest first; `search` matches the number or the label.',
  input: z.strictObject({ ...listParams(PHONE_NUMBER_SORT_FIELDS) }),
  output: pagedOutput('phone_numbers', phoneNumberSchema),
  access: access('read', 'phone_numbers.view'),
  annotations: closed,
  toolset: 'telephony',
  handler: (input, { db, auth }) => listPhoneNumbersPage(db, auth.orgId, input),
});

export const getPhoneNumber = defineTool({
  name: 'get_phone_number',
  title: 'Get a phone number',
  description: 'Returns one phone number by id (find ids with list_phone_numbers); trashed ones answer 404.',
  input: z.strictObject(idShape),
  output,
  access: access('read', 'phone_numbers.view'),
  annotations: closed,
  toolset: 'telephony',
  async handler(input, { db, auth }) {
    return { phone_number: serializePhoneNumber(await phoneNumberRecords.getLive(db, auth.orgId, input.id)) };
  },
});

export const createPhoneNumber = defineTool({
  name: 'create_phone_number',
  title: 'Add a phone number',
  description: 'Records a number held at the provider (buys nothing); one live anywhere is a 409.',
  input: z.strictObject({
    number: numberField,
    label: labelField.optional(),
    capabilities: capabilitiesField.optional(),
    default_voice_agent_id: defaultVoiceAgentField.optional(),
    forward_to: forwardToField.optional(),
    owner_id: ownerField.optional(),
  }),
  output,
  access: access('write', 'phone_numbers.create'),
  annotations: closed,
  toolset: 'telephony',
  async handler(input, ctx) {
    return {
      phone_number: await insertPhoneNumber(ctx, {
        number: input.number,
        label: input.label,
        capabilities: input.capabilities,
        defaultVoiceAgentId: input.default_voice_agent_id,
        forwardTo: input.forward_to,
        ownerId: input.owner_id,
      }),
    };
  },
});

export const updatePhoneNumber = defineTool({
  name: 'update_phone_number',
  title: 'Update a phone number',
  description:
    'Changes the fields sent of a phone number; null clears label, forward_to and default_voice_agent_id.',
  input: z.strictObject({
    ...idShape,
    number: numberField.optional(),
    label: labelField.optional(),
    capabilities: capabilitiesField.optional(),
    default_voice_agent_id: defaultVoiceAgentField.optional(),
    forward_to: forwardToField.optional(),
    owner_id: ownerField.optional(),
  }),
  output,
  access: access('write', 'phone_numbers.edit'),
  annotations: { idempotentHint: true, ...closed },
  toolset: 'telephony',
  async handler(input, ctx) {
    return {
      phone_number: await writePhoneNumber(ctx, input.id, {
        number: input.number,
        label: input.label,
        capabilities: input.capabilities,
        defaultVoiceAgentId: input.default_voice_agent_id,
        forwardTo: input.forward_to,
        ownerId: input.owner_id,
      }),
    };
  },
});

export const setDefaultVoiceAgent = defineTool({
  name: 'set_phone_number_default_voice_agent',
  title: 'Set the default voice agent of a phone number',
  description: 'Sets the active voice agent that answers calls to the number, or clears it with null.',
  input: z.strictObject({
    ...idShape,
    default_voice_agent_id: defaultVoiceAgentField,
  }),
  output,
  access: access('write', 'phone_numbers.edit'),
  annotations: { idempotentHint: true, ...closed },
  toolset: 'telephony',
  async handler(input, ctx) {
    return {
      phone_number: await writePhoneNumber(ctx, input.id, {
        defaultVoiceAgentId: input.default_voice_agent_id,
      }),
    };
  },
});

export const deletePhoneNumber = defineTool({
  name: 'delete_phone_number',
  title: 'Delete a phone number',
  description: 'Trashes a phone number, freeing it (restore_trash_item undoes it while free).',
  input: z.strictObject(idShape),
  output: messageOutput,
  access: access('write', 'phone_numbers.delete'),
  annotations: { destructiveHint: true, idempotentHint: true, ...closed },
  toolset: 'telephony',
  async handler(input, ctx) {
    await phoneNumberRecords.trash(ctx, input.id);
    return { message: 'Phone number moved to the trash' };
  },
});

export const phoneNumberTools = [
  listPhoneNumbers,
  getPhoneNumber,
  createPhoneNumber,
  updatePhoneNumber,
  setDefaultVoiceAgent,
  deletePhoneNumber,
];
