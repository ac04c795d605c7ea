// The phone numbers store: the record shape, creating and changing a number (its default voice agent
// checked through the voice agents' lookups), the list, and the trash and owned-record entries, on
// the record helper (core/records.ts). A live number is unique across the service: the unique index
// is the rule, its violation the 409 naming `number`. No events: the specification's catalogue names
// none for phone numbers.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { isUniqueViolation } from '../../core/db/errors.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError, validationError } from '../../core/errors.ts';
import type { OwnedRecordTable } from '../../core/ownership.ts';
import {
  assertAssignableOwner,
  auditFields,
  auditValues,
  defineRecordTable,
  type ListParams,
  newRecordStamp,
  type PagedList,
  type RecordContext,
  type SortColumn,
  sentFields,
} from '../../core/records.ts';
import type { TrashType } from '../../core/trash.ts';
import { activeVoiceAgent } from '../voice-agents/lookups.ts';
import { type PhoneNumberRow, phoneNumbers } from './tables.ts';

const capabilitiesSchema = z
  .object({
    voice: z.boolean().describe('Takes and makes calls'),
    sms: z.boolean().describe('Sends and receives SMS'),
    whatsapp: z.boolean().describe('Sends and receives WhatsApp messages'),
  })
  .describe('What the number can carry');
export type Capabilities = z.output<typeof capabilitiesSchema>;

export const phoneNumberSchema = z
  .object({
    _id: z.string().describe('Phone number id (24 hex characters)'),
    number: z.string().describe('The number in E.164 form, e.g. +14155550100'),
    label: z.string().nullable().describe('A label for people, e.g. "Sales line"; null for none'),
    capabilities: capabilitiesSchema,
    default_voice_agent_id: z
      .string()
      .nullable()
      .describe(
        'The voice agent that answers incoming calls; null for none. Kept while that agent is paused or trashed, when calls go to forward_to instead',
      ),
    forward_to: z
      .string()
      .nullable()
      .describe('E.164 number an incoming call is dialled to when no agent answers; null for none'),
    owner_id: z.string().nullable().describe('Id of the user the number belongs to'),
    ...auditFields('phone number'),
  })
  .describe('A phone number of the organization');
export type PhoneNumberRecord = z.output<typeof phoneNumberSchema>;

export function serializePhoneNumber(row: PhoneNumberRow): PhoneNumberRecord {
  return {
    _id: row.id,
    number: row.number,
    label: row.label,
    capabilities: { voice: row.voice, sms: row.sms, whatsapp: row.whatsapp },
    default_voice_agent_id: row.defaultVoiceAgentId,
    forward_to: row.forwardTo,
    owner_id: row.ownerId,
    ...auditValues(row),
  };
}

/** The phone_numbers table on the record helper: lookups, lists, trash, restore with the owner fallback. */
export const phoneNumberRecords = defineRecordTable<PhoneNumberRow>({
  label: 'Phone number',
  table: phoneNumbers,
  select: (db) => db.select().from(phoneNumbers).$dynamic(),
  update: (db, set, where) => db.update(phoneNumbers).set(set).where(where).returning(),
  ownerId: phoneNumbers.ownerId,
});

const numberTaken = (number: string) =>
  new AppError('conflict', {
    message: `The number ${number} is in use already`,
    details: [{ field: 'number', message: `${number} is a live number already`, code: 'number_taken' }],
  });

/** A write that may meet the one-live-number index: its violation is the 409 naming `number`. */
async function withNumberConflict<T>(number: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw numberTaken(number);
    throw err;
  }
}

/**
 * The 400 naming default_voice_agent_id unless it is a live, active voice agent of the organization.
 * Another organization's, an unknown, a paused and a trashed agent are the same answer, so the
 * refusal reveals nothing. The agent is key-share locked, so it cannot be paused or trashed before
 * this write commits.
 */
async function assertDefaultVoiceAgent(ctx: RecordContext, agentId: string): Promise<void> {
  if (!(await activeVoiceAgent(ctx.db, ctx.auth.orgId, agentId, true))) {
    throw validationError([
      {
        field: 'default_voice_agent_id',
        message: 'must be the id of an active voice agent of this organization',
        code: 'invalid_voice_agent',
      },
    ]);
  }
}

export interface PhoneNumberFields {
  label?: string | null | undefined;
  capabilities?: Partial<Capabilities> | undefined;
  defaultVoiceAgentId?: string | null | undefined;
  forwardTo?: string | null | undefined;
  ownerId?: string | undefined;
}

export type NewPhoneNumber = PhoneNumberFields & { number: string };

/** Creates a number: voice and SMS unless told otherwise, owned by the creator unless `ownerId` says. */
export async function insertPhoneNumber(
  ctx: RecordContext,
  input: NewPhoneNumber,
): Promise<PhoneNumberRecord> {
  const orgId = ctx.auth.orgId;
  const ownerId = input.ownerId ?? ctx.auth.userId;
  if (ownerId !== ctx.auth.userId) await assertAssignableOwner(ctx.db, orgId, ownerId);
  const defaultVoiceAgentId = input.defaultVoiceAgentId ?? null;
  if (defaultVoiceAgentId !== null) await assertDefaultVoiceAgent(ctx, defaultVoiceAgentId);
  const rows = await withNumberConflict(input.number, () =>
    ctx.db
      .insert(phoneNumbers)
      .values({
        ...newRecordStamp(ctx),
        number: input.number,
        label: input.label ?? null,
        voice: input.capabilities?.voice ?? true,
        sms: input.capabilities?.sms ?? true,
        whatsapp: input.capabilities?.whatsapp ?? false,
        defaultVoiceAgentId,
        forwardTo: input.forwardTo ?? null,
        ownerId,
      })
      .returning(),
  );
  const [row] = rows;
  if (!row) throw new Error('insert returned no phone number');
  return serializePhoneNumber(row);
}

/**
 * Changes the fields sent of a live number (a 404 otherwise); null clears label, forward_to and the
 * default voice agent. A default voice agent sent is checked like on create; capabilities merge.
 */
export async function writePhoneNumber(
  ctx: RecordContext,
  id: string,
  changes: PhoneNumberFields & { number?: string | undefined },
): Promise<PhoneNumberRecord> {
  const orgId = ctx.auth.orgId;
  const before = await phoneNumberRecords.getLive(ctx.db, orgId, id, true);
  if (changes.ownerId !== undefined && changes.ownerId !== before.ownerId) {
    await assertAssignableOwner(ctx.db, orgId, changes.ownerId);
  }
  if (changes.defaultVoiceAgentId) await assertDefaultVoiceAgent(ctx, changes.defaultVoiceAgentId);
  const caps = changes.capabilities ?? {};
  const number = changes.number ?? before.number;
  const row = await withNumberConflict(number, () =>
    phoneNumberRecords.write(ctx.db, orgId, before.id, {
      number,
      ...sentFields({
        label: changes.label,
        voice: caps.voice,
        sms: caps.sms,
        whatsapp: caps.whatsapp,
        defaultVoiceAgentId: changes.defaultVoiceAgentId,
        forwardTo: changes.forwardTo,
        ownerId: changes.ownerId,
      }),
      updatedAt: ctx.now,
    }),
  );
  return serializePhoneNumber(row);
}

export const PHONE_NUMBER_SORT_FIELDS = ['number', 'created_at'] as const;

const SORT_COLUMNS: Record<(typeof PHONE_NUMBER_SORT_FIELDS)[number], SortColumn> = {
  number: phoneNumbers.number,
  created_at: phoneNumbers.createdAt,
};

/** The organization's live numbers, newest first; `search` matches the number or the label. */
export function listPhoneNumbersPage(
  db: Executor,
  orgId: string,
  params: ListParams,
): Promise<PagedList<'phone_numbers', PhoneNumberRecord>> {
  return phoneNumberRecords.list(db, 'phone_numbers', serializePhoneNumber, params, {
    conditions: phoneNumberRecords.liveConditions(orgId),
    sortColumns: SORT_COLUMNS,
    match: (search) => {
      const like = `%${escapeLike(search)}%`;
      return { where: sql`(${phoneNumbers.number} ilike ${like} or ${phoneNumbers.label} ilike ${like})` };
    },
  });
}

/** Restores a number unless another live number took it meanwhile (then the 409 naming `number`). */
async function restorePhoneNumber(ctx: RecordContext, id: string): Promise<PhoneNumberRecord> {
  const before = await phoneNumberRecords.getTrashed(ctx.db, ctx.auth.orgId, id);
  const { row } = await withNumberConflict(before.number, () => phoneNumberRecords.restore(ctx, id));
  return serializePhoneNumber(row);
}

/** The phone number entry of the trash registry; its number is its name there. */
export const phoneNumberTrashTypes: readonly TrashType[] = [
  phoneNumberRecords.trashType({
    type: 'phone_number',
    recordKey: 'phone_number',
    resource: 'telephony',
    schema: phoneNumberSchema,
    name: phoneNumbers.number,
    restore: restorePhoneNumber,
  }),
];

/** A deleted user's numbers go to the heir or to the trash with the rest of their records; no event. */
export const phoneNumberOwnership: readonly OwnedRecordTable[] = [
  phoneNumberRecords.ownedRecords({ name: 'phone_numbers', async announce() {} }),
];
