// The mail a send queues: the link to the public page. Until the mail outbox (core/mail-outbox.ts,
// branch `delivery`) is merged, nothing is mailed: send returns the link for the caller to pass on.
import type { ToolContext } from '../../core/tool.ts';
import type { SendPlan, Sent } from './store.ts';

export function proposalMessage(plan: SendPlan, sent: Sent): { subject: string; text: string } {
  const lines = [
    `You have received a proposal: ${plan.row.title}`,
    '',
    'Read it, and accept or decline it, here:',
    sent.publicUrl,
  ];
  if (plan.row.validUntil !== null) lines.push('', `It is valid until ${plan.row.validUntil}.`);
  return { subject: plan.subject, text: lines.join('\n') };
}

export async function deliverProposal(_ctx: ToolContext, _plan: SendPlan, _sent: Sent): Promise<void> {
  // Wired to the mail outbox once it is merged (idempotency key proposal:<id>:send:<n>).
}
