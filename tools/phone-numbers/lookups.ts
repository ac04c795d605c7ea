// What other areas ask of phone numbers without reading their table (docs/architecture.md
// "Boundaries"): a live number of the organization, and the live number a public call or message hook
// was sent to, found without a tenant (the number dialled names the organization; the hook then works
// in that organization's own tenant transaction). The table keeps its row-level security: the lookup
// without a tenant runs on the system connection, as the public proposal page finds its token.
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { type PhoneNumberRow, phoneNumbers } from './tables.ts';

export interface PhoneNumberFacts {
  id: string;
  orgId: string;
  /** E.164. */
  number: string;
  capabilities: { voice: boolean; sms: boolean; whatsapp: boolean };
  /** Kept while the agent is paused or trashed: ask tools/voice-agents/lookups.ts activeVoiceAgent. */
  defaultVoiceAgentId: string | null;
  /** Where an incoming call goes when no active agent answers; null for nowhere. */
  forwardTo: string | null;
  ownerId: string | null;
}

/** The shape of a stored E.164 number: lookups answer null for anything else without a query. */
const E164 = /^\+[1-9]\d{6,14}$/;

function factsOf(row: PhoneNumberRow): PhoneNumberFacts {
  return {
    id: row.id,
    orgId: row.orgId,
    number: row.number,
    capabilities: { voice: row.voice, sms: row.sms, whatsapp: row.whatsapp },
    defaultVoiceAgentId: row.defaultVoiceAgentId,
    forwardTo: row.forwardTo,
    ownerId: row.ownerId,
  };
}

/** The organization's live (not trashed) number with this id, or null. */
export async function liveNumberOf(
  db: Executor,
  orgId: string,
  id: string,
): Promise<PhoneNumberFacts | null> {
  const [row] = await db
    .select()
    .from(phoneNumbers)
    .where(and(eq(phoneNumbers.id, id), eq(phoneNumbers.orgId, orgId), isNull(phoneNumbers.deletedAt)))
    .limit(1);
  return row ? factsOf(row) : null;
}

/**
 * The live number `e164` in whichever organization holds it, or null (at most one: the unique index).
 * `system` is the connection without a tenant (services.db.system); a caller then opens the
 * organization's own tenant transaction to act on it.
 */
export async function numberByE164(system: Executor, e164: string): Promise<PhoneNumberFacts | null> {
  if (!E164.test(e164)) return null;
  const [row] = await system
    .select()
    .from(phoneNumbers)
    .where(and(eq(phoneNumbers.number, e164), isNull(phoneNumbers.deletedAt)))
    .limit(1);
  return row ? factsOf(row) : null;
}

/**
 * The organization's first live number (the oldest) that carries `capability`, or null: the number a
 * workflow's sms step sends from (tools/messages).
 */
export async function firstNumberWith(
  db: Executor,
  orgId: string,
  capability: 'voice' | 'sms' | 'whatsapp',
): Promise<PhoneNumberFacts | null> {
  const [row] = await db
    .select()
    .from(phoneNumbers)
    .where(
      and(eq(phoneNumbers.orgId, orgId), isNull(phoneNumbers.deletedAt), eq(phoneNumbers[capability], true)),
    )
    .orderBy(asc(phoneNumbers.createdAt), asc(phoneNumbers.id))
    .limit(1);
  return row ? factsOf(row) : null;
}
