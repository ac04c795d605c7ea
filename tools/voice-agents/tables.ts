// The voice agents area's table: what an agent says and how (instructions, greeting, voice,
// language), whether it grounds its answers in the knowledge base, its status, and the trash columns.
import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, updatedAt } from '../../core/db/schema.ts';

export const voiceAgents = pgTable(
  'voice_agents',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    instructions: text('instructions').notNull(),
    greeting: text('greeting').notNull(),
    voice: text('voice').notNull(),
    language: text('language').notNull(),
    useKnowledgeBase: boolean('use_knowledge_base').notNull().default(false),
    /** active | paused (the status machine of store.ts). A paused agent answers no call. */
    status: text('status').notNull().default('active'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('voice_agents_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('voice_agents_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
  ],
);

export type VoiceAgentRow = typeof voiceAgents.$inferSelect;
