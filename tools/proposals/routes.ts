// Proposal routes: the collection, one proposal (PUT merges exactly like PATCH), send, and the
// suggest-questions route of the specification (no body; the path id is validated like the others).
import { type Route, route } from '../../core/route.ts';
import {
  createProposal,
  deleteProposal,
  expireProposal,
  getProposal,
  listProposals,
  sendProposal,
  suggestProposalQuestions,
  updateProposal,
} from './tools.ts';

export const proposalRoutes: Route[] = [
  route('GET', '/proposals', listProposals),
  route('POST', '/proposals', createProposal),
  route('GET', '/proposals/:id', getProposal),
  route('PATCH', '/proposals/:id', updateProposal),
  route('PUT', '/proposals/:id', updateProposal),
  route('DELETE', '/proposals/:id', deleteProposal),
  route('POST', '/proposals/:id/send', sendProposal),
  route('POST', '/proposals/:id/expire', expireProposal),
  route('POST', '/proposal-ai/:id/suggest-questions', suggestProposalQuestions, {
    input: ({ params }) => ({ ...params }),
  }),
];
