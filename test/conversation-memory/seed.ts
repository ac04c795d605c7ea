// Rows of tools/conversation-memory written straight to its table, for what its routes cannot make: a
// lead's memory with commitments of any status and due date, which only the summarizing job writes.
// Tests of other areas seed through here instead of importing this area's tables (test/README.md,
// "Fixtures").
import { conversationMemories } from '../../tools/conversation-memory/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** A lead's memory (keyed by the lead): the organization comes from the call. */
export type ConversationMemorySeed = Omit<typeof conversationMemories.$inferInsert, 'orgId'>;

/** Memories of one organization's leads, inserted in one statement; their lead ids, in order. */
export async function seedConversationMemories(
  t: TestContext,
  orgId: string,
  rows: ConversationMemorySeed[],
): Promise<string[]> {
  await t.services.db.system.insert(conversationMemories).values(rows.map((row) => ({ ...row, orgId })));
  return rows.map((row) => row.leadId);
}
