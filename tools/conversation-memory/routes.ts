// Conversation memory routes: a lead's summary and commitments, addressed by the lead id and the commitment index.

import { type Route, route } from '../../core/route.ts';
import {
  addCommitment,
  getConversationMemory,
  markCommitmentKept,
  markCommitmentMissed,
  updateConversationSummary,
} from './tools.ts';

export const conversationMemoryRoutes: Route[] = [
  route('GET', '/leads/:id/conversation-memory', getConversationMemory),
  route('PUT', '/leads/:id/conversation-memory', updateConversationSummary),
  route('POST', '/leads/:id/conversation-memory/commitments', addCommitment, { status: 201 }),
  route('POST', '/leads/:id/conversation-memory/commitments/:index/kept', markCommitmentKept),
  route('POST', '/leads/:id/conversation-memory/commitments/:index/missed', markCommitmentMissed),
];
