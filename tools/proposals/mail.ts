// The mail a send queues: the link to the public page, through the mail outbox
// (core/mail-outbox.ts) in the send's own transaction, one row per send under the key
// `proposal:<id>:send:<n>` (a retried job sends nothing twice, a resend is a new mail), woken after
// the commit. It leaves from the sender's own verified connected account when they have one, else
// as system mail with their address as Reply-To (invoices/parties.ts documentSender).
import { type QueuedMail, queueMail, wakeMail } from '../../core/mail-outbox.ts';
import type { ToolContext } from '../../core/tool.ts';
import { documentDelivery, documentSender } from '../invoices/parties.ts';
import type { SendPlan, Sent } from './store.ts';

export function proposalMessage(plan: SendPlan, sent: Sent): { subject: string; text: string } {
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
export async function deliverProposal(ctx: ToolContext, plan: SendPlan, sent: Sent): Promise<QueuedMail> {
  const { subject, text } = proposalMessage(plan, sent);
  const sender = await documentSender(ctx.db, ctx.auth.orgId, ctx.auth.userId);
  const mail = await queueMail(ctx.db, {
    orgId: ctx.auth.orgId,
    key: `proposal:${plan.row.id}:send:${sent.sendNumber}`,
    subject: { type: 'proposal', id: plan.row.id },
    accountId: sender.accountId,
    message: { to: plan.to, subject, text, ...(sender.replyTo ? { replyTo: sender.replyTo } : {}) },
  });
  const services = ctx.services;
  ctx.afterCommit(() => wakeMail(services, mail.id));
  return { id: mail.id, to: plan.to, subject, delivery: documentDelivery(sender, services.mailer.delivery) };
}
