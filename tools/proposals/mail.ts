// The mail a send queues: the link to the public page, through the document kit's send flow
// (tools/documents/send.ts: the outbox key `proposal:<id>:send:<n>`, the sender's own verified
// connected account when they have one, woken after the commit).
import type { QueuedMail } from '../../core/mail-outbox.ts';
import type { ToolContext } from '../../core/tool.ts';
import { queueDocumentMail } from '../documents/send.ts';
import type { SendPlan, Sent } from './store.ts';

function proposalMessage(plan: SendPlan, sent: Sent): { subject: string; text: string } {
  const lines = [
    'Hello,',
    '',
    `You have received a proposal: ${plan.row.title}`,
    '',
    'Read it, and accept or decline it, here:',
    sent.publicUrl,
  ];
  if (plan.row.validUntil !== null) lines.push('', `It is valid until ${plan.row.validUntil}.`);
  return { subject: plan.subject, text: lines.join('\n') };
}

/** Queues the mail of one send; returns it as the send answers it (outbox row id, recipient, delivery). */
export function deliverProposal(ctx: ToolContext, plan: SendPlan, sent: Sent): Promise<QueuedMail> {
  const { subject, text } = proposalMessage(plan, sent);
  return queueDocumentMail(ctx, {
    kind: 'proposal',
    id: plan.row.id,
    sendNumber: sent.sendNumber,
    to: plan.to,
    subject,
    text,
  });
}
