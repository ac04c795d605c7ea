// What other areas ask of voice agents without reading their table (docs/architecture.md
// "Boundaries"): an agent's facts for a phone number's reference and for the call hooks.
import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { type VoiceAgentStatus, voiceAgentMachine } from './store.ts';
import { voiceAgents } from './tables.ts';

export interface VoiceAgentFacts {
  id: string;
  name: string;
  instructions: string;
  greeting: string;
  voice: string;
  language: string;
  useKnowledgeBase: boolean;
  status: VoiceAgentStatus;
}

/** The live (not trashed) voice agent of the organization, or null; `lock` takes a key-share lock. */
export async function voiceAgentFacts(
  db: Executor,
  orgId: string,
  id: string,
  lock = false,
): Promise<VoiceAgentFacts | null> {
  const query = db
    .select({
      id: voiceAgents.id,
      name: voiceAgents.name,
      instructions: voiceAgents.instructions,
      greeting: voiceAgents.greeting,
      voice: voiceAgents.voice,
      language: voiceAgents.language,
      useKnowledgeBase: voiceAgents.useKnowledgeBase,
      status: voiceAgents.status,
    })
    .from(voiceAgents)
    .where(and(eq(voiceAgents.id, id), eq(voiceAgents.orgId, orgId), isNull(voiceAgents.deletedAt)))
    .limit(1);
  const [row] = lock ? await query.for('key share') : await query;
  return row ? { ...row, status: voiceAgentMachine.parse(row.status) } : null;
}

/** The voice agent when it is live and active (answers calls), null when paused, trashed or unknown. */
export async function activeVoiceAgent(
  db: Executor,
  orgId: string,
  id: string,
  lock = false,
): Promise<VoiceAgentFacts | null> {
  const facts = await voiceAgentFacts(db, orgId, id, lock);
  return facts?.status === 'active' ? facts : null;
}

/**
 * The organization of a live voice agent and its facts, found by id alone, for the voice relay's
 * handshake (a provider's call carries no tenant): `db` is the system handle (`services.db.system`),
 * the way the telephony hooks find an organization by its Account SID. Null when unknown or trashed.
 */
export async function voiceAgentForRelay(
  db: Executor,
  id: string,
): Promise<{ orgId: string; facts: VoiceAgentFacts } | null> {
  const [row] = await db
    .select({ orgId: voiceAgents.orgId })
    .from(voiceAgents)
    .where(and(eq(voiceAgents.id, id), isNull(voiceAgents.deletedAt)))
    .limit(1);
  if (!row) return null;
  const facts = await voiceAgentFacts(db, row.orgId, id);
  return facts ? { orgId: row.orgId, facts } : null;
}
