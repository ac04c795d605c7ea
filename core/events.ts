// Event names of the specification and the transactional outbox. An event row is inserted in the
// same transaction as the change that causes it: a rolled-back change leaves no event, a committed
// one is never lost (the relay of the webhooks work moves rows on to deliveries).

import type { Executor } from './db/client.ts';
import { outboxEvents } from './db/schema.ts';
import { newId } from './ids.ts';

export const EVENT_NAMES = [
  'lead.created',
  'lead.updated',
  'lead.deleted',
  'lead.status_changed',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'opportunity.created',
  'opportunity.updated',
  'opportunity.won',
  'opportunity.lost',
  'activity.created',
  'task.created',
  'task.completed',
  'call.completed',
  'email.received',
  'email.sent',
  'sms.received',
  'sms.sent',
  'form.submitted',
  'proposal.sent',
  'proposal.accepted',
  'proposal.declined',
  'contract.signed',
  'invoice.created',
  'invoice.sent',
  'invoice.paid',
  'invoice.overdue',
  'workflow.triggered',
  'webhook.test',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export function isEventName(value: string): value is EventName {
  return (EVENT_NAMES as readonly string[]).includes(value);
}

export async function recordEvent(
  tx: Executor,
  orgId: string,
  event: EventName,
  data: Record<string, unknown>,
): Promise<string> {
  const id = newId();
  await tx.insert(outboxEvents).values({ id, orgId, event, data });
  return id;
}
