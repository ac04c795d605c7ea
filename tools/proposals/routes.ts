// Proposal routes: the collection, one proposal (PUT merges exactly like PATCH), send, and the
// suggest-questions route of the specification (no body; the path id is validated like the others).
import { type Route, route } from '../../core/route.ts';
import { documentRoutes } from '../documents/routes.ts';
import { expireProposal, proposalTools, sendProposal, suggestProposalQuestions } from './tools.ts';

export const proposalRoutes: Route[] = [
  ...documentRoutes('proposal', proposalTools),
  route('POST', '/proposals/:id/send', sendProposal),
  route('POST', '/proposals/:id/expire', expireProposal),
  route('POST', '/proposal-ai/:id/suggest-questions', suggestProposalQuestions, {
    input: ({ params }) => ({ ...params }),
  }),
];
