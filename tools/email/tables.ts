// The email area's table: one row per scheduled email, the truth about it from scheduling to its
// outcome. The 'email.send' job only carries the row id (core/jobs.ts "the database is the truth"):
// the row's `status` and `next_attempt_at` (the scheduled time, then the lease of a claim, then the
// time of the next attempt) decide whether a job has anything to do, so a lost or doubled job never
// loses or doubles a mail.
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, id, orgId, ts, updatedAt } from '../../core/db/schema.ts';
import { connectedAccounts } from '../connected-accounts/tables.ts';
import { contacts } from '../contacts/tables.ts';
import { leadRef } from '../leads/tables.ts';

/** An attachment as scheduled: the file is read from the storage port by its key at send time. */
export interface StoredEmailAttachment {
  filename: string;
  content_type: string;
  storage_key: string;
  size_bytes: number;
}

export interface StoredFollowUp {
  amount: number;
  unit: 'days' | 'hours';
}

export const scheduledEmails = pgTable(
  'scheduled_emails',
  {
    /** Also the `job_id` of the scheduling answer. */
    id: id(),
    orgId: orgId(),
    /** The sender: the user who scheduled it (or enrolled the lead, for a workflow step). */
    userId: text('user_id').notNull(),
    connectedAccountId: text('connected_account_id').references(() => connectedAccounts.id, {
      onDelete: 'set null',
    }),
    leadId: leadRef().notNull(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    toAddress: text('to_address').notNull(),
    cc: jsonb('cc').$type<string[]>().notNull().default([]),
    bcc: jsonb('bcc').$type<string[]>().notNull().default([]),
    subject: text('subject').notNull(),
    bodyHtml: text('body_html').notNull(),
    bodyText: text('body_text'),
    templateId: text('template_id'),
    attachments: jsonb('attachments').$type<StoredEmailAttachment[]>().notNull().default([]),
    scheduledAt: ts('scheduled_at').notNull(),
    /** scheduled | sending | sent | failed | cancelled */
    status: text('status').notNull().default('scheduled'),
    attempts: integer('attempts').notNull().default(0),
    /** When a job has something to do: the scheduled time, a claim's lease, the next attempt; null once final. */
    nextAttemptAt: ts('next_attempt_at'),
    lastError: text('last_error'),
    /** The Message-ID the mail went out with (stable per row, the same on every attempt). */
    messageId: text('message_id'),
    sentAt: ts('sent_at'),
    cancelledAt: ts('cancelled_at'),
    /** The outgoing email activity recorded on the lead once sent. */
    activityId: text('activity_id'),
    followUp: jsonb('follow_up').$type<StoredFollowUp>(),
    /** sent_at + follow_up, set when sent. */
    followUpDueAt: ts('follow_up_due_at'),
    /** pending (waiting for a reply) | created (the task exists) | cancelled (a reply came) */
    followUpStatus: text('follow_up_status'),
    followUpTaskId: text('follow_up_task_id'),
    /** Enroll the lead in this workflow once sent (tools/workflows). */
    enrollInWorkflowId: text('enroll_in_workflow_id'),
    /** The enrollment made after sending. */
    enrollmentId: text('enrollment_id'),
    /** Set when a workflow's email step wrote this row: the enrollment and the step's index. */
    workflowEnrollmentId: text('workflow_enrollment_id'),
    workflowStep: integer('workflow_step'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // The sweeper: rows due (scheduled past their time, claims whose lease expired).
    index('scheduled_emails_due_idx').on(t.nextAttemptAt).where(sql`${t.status} in ('scheduled', 'sending')`),
    index('scheduled_emails_org_created_idx').on(t.orgId, t.createdAt.desc(), t.id.desc()),
    // Threading: an inbound mail's In-Reply-To names the Message-ID of the mail it answers.
    index('scheduled_emails_message_idx').on(t.orgId, t.messageId),
    index('scheduled_emails_follow_up_idx').on(t.followUpDueAt).where(sql`${t.followUpStatus} = 'pending'`),
    index('scheduled_emails_lead_idx').on(t.leadId),
    index('scheduled_emails_account_idx').on(t.connectedAccountId),
    index('scheduled_emails_contact_idx').on(t.contactId),
    index('scheduled_emails_enrollment_idx').on(t.workflowEnrollmentId),
  ],
);

export type ScheduledEmailRow = typeof scheduledEmails.$inferSelect;
