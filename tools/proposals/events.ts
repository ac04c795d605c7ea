// The events the proposals area emits, with the payload each carries: the proposal as
// `get_proposal` returns it plus the move (the link never travels: `public_url` is null), and the
// signature of an acceptance. The schemas document the webhooks section of the OpenAPI document,
// and the declaration merging below makes `emit` check every payload at compile time.
import { z } from 'zod';
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';
import { PROPOSAL_STATUSES, proposalSchema } from './store.ts';

const statusMove = {
  previous_status: z.enum(PROPOSAL_STATUSES).describe('The status before the move'),
};

export const proposalsEvents = {
  'proposal.sent': proposalSchema.extend({
    ...statusMove,
    public_url: z.null().describe('Always null: webhook receivers do not get the link to answer it'),
    resend: z.boolean().describe('True when the proposal had been sent before'),
    mail_id: z.string().nullable().describe('The queued mail carrying the link, or null when none was sent'),
  }),
  'proposal.accepted': proposalSchema.extend(statusMove),
  'proposal.declined': proposalSchema.extend(statusMove),
  'contract.signed': proposalSchema
    .pick({ lead_id: true, opportunity_id: true, title: true, total: true, currency: true })
    .extend({
      proposal_id: z.string().describe('The accepted proposal'),
      signer: z
        .object({
          name: z.string().describe('Name the signer typed'),
          email: z.string().describe('Email address the signer typed'),
        })
        .describe('Who signed'),
      signature: z.string().describe('The signature as typed on the public page'),
      signed_at: z.string().describe('When it was signed (ISO 8601)'),
    })
    .describe('A proposal accepted with a typed signature'),
} satisfies EventSchemas;

type ProposalsEvents = PayloadsOf<typeof proposalsEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends ProposalsEvents {}
}
