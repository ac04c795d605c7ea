// The one way a scheduled email comes into being, shared by schedule_email (tools/email) and a
// workflow's email step (tools/workflows): a `scheduled` row due at its time, written in the
// caller's transaction, and the wake-up of its 'email.send' job after the commit. The row is the
// truth (core/jobs.ts); a lost wake-up is found by the sweeper (sender.ts).
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { newId } from '../../core/ids.ts';
import type { Services } from '../../core/services.ts';
import {
  type ScheduledEmailRow,
  type StoredEmailAttachment,
  type StoredFollowUp,
  scheduledEmails,
} from './tables.ts';

export const sendEmailPayload = z.object({
  id: z.string().describe('The scheduled_emails row to send'),
});

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** Send one scheduled email through its connected account, if it is still due. */
    'email.send': z.output<typeof sendEmailPayload>;
  }
}

export interface NewScheduledEmail {
  /** The sender (their connected account sends it). */
  userId: string;
  connectedAccountId: string;
  leadId: string;
  contactId: string | null;
  to: string;
  cc?: string[];
  bcc?: string[];
  subject: string;
  bodyHtml: string;
  bodyText?: string | null;
  templateId?: string | null;
  attachments?: StoredEmailAttachment[];
  scheduledAt: Date;
  followUp?: StoredFollowUp | null;
  enrollInWorkflowId?: string | null;
  /** Set by a workflow's email step. */
  workflowEnrollmentId?: string | null;
  workflowStep?: number | null;
}

/**
 * Writes the row (status `scheduled`, due at `scheduledAt`) in the caller's tenant transaction.
 * Checks nothing: the caller validated the input and the references.
 */
export async function insertScheduledEmail(
  db: Executor,
  orgId: string,
  input: NewScheduledEmail,
  now: Date,
): Promise<ScheduledEmailRow> {
  const [row] = await db
    .insert(scheduledEmails)
    .values({
      id: newId(now),
      orgId,
      userId: input.userId,
      connectedAccountId: input.connectedAccountId,
      leadId: input.leadId,
      contactId: input.contactId,
      toAddress: input.to,
      cc: input.cc ?? [],
      bcc: input.bcc ?? [],
      subject: input.subject,
      bodyHtml: input.bodyHtml,
      bodyText: input.bodyText ?? null,
      templateId: input.templateId ?? null,
      attachments: input.attachments ?? [],
      scheduledAt: input.scheduledAt,
      status: 'scheduled',
      nextAttemptAt: input.scheduledAt,
      followUp: input.followUp ?? null,
      enrollInWorkflowId: input.enrollInWorkflowId ?? null,
      workflowEnrollmentId: input.workflowEnrollmentId ?? null,
      workflowStep: input.workflowStep ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (!row) throw new Error('scheduled email not inserted');
  return row;
}

/** The job id of the attempt a row is due for: the row id for the first, `<id>:<n>` after. */
export function emailJobId(id: string, attemptsMade: number): string {
  return attemptsMade === 0 ? id : `${id}:${attemptsMade + 1}`;
}

/**
 * Enqueues the row's 'email.send' job, delayed until its time. Call it after the commit; a failure
 * to enqueue is harmless (the sweeper finds the due row), so it is logged, not thrown. Both queues
 * hold a 30-day delay (the in-process one arms waits beyond a Node timer in steps).
 */
export async function wakeScheduledEmail(
  services: Services,
  row: Pick<ScheduledEmailRow, 'id' | 'scheduledAt'>,
  now = new Date(),
): Promise<void> {
  const delayMs = Math.max(0, row.scheduledAt.getTime() - now.getTime());
  try {
    await services.jobs.enqueue('email.send', { id: row.id }, { delayMs, jobId: emailJobId(row.id, 0) });
  } catch (err) {
    services.logger.warn({ err, email_id: row.id }, 'could not enqueue a scheduled email; the sweeper will');
  }
}
