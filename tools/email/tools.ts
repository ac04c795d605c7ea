// Scheduled email tools: schedule (open-world: the mail goes out later through the caller's own
// SMTP account; the `confirm` convention of core/confirm.ts), list, get and cancel. The bounds are the
// specification's table for POST /api/v1/email/schedule; each one is a 400 naming its field.
import { z } from 'zod';
import { confirmShape, sendResultShape } from '../../core/confirm.ts';
import { listParams, objectId, pagedOutput } from '../../core/schemas.ts';
import { describeMoves } from '../../core/state-machine.ts';
import { CONTENT_TYPE } from '../../core/storage.ts';
import { NO_NUL, nulMessage, ONE_LINE, oneLineMessage } from '../../core/text-rules.ts';
import { defineTool, type Tool } from '../../core/tool.ts';
import { senderOf } from '../connected-accounts/store.ts';
import { MAX_ATTACHMENT_BYTES } from '../files/store.ts';
import type { EmailHooks } from './hooks.ts';
import {
  attachmentProblems,
  cancelScheduledEmail,
  checkSchedule,
  getVisibleEmail,
  listScheduledEmails,
  SCHEDULED_EMAIL_STATUSES,
  scheduledEmailMachine,
  scheduledEmailSchema,
  serializeScheduledEmail,
  scheduleEmail as writeSchedule,
} from './store.ts';

type EmailPermission = 'email.view' | 'email.send';
const access = (kind: 'read' | 'write', permission: EmailPermission) =>
  ({ kind, resource: 'email', permission }) as const;

/** The specification's `MAX_ATTACHMENT_BYTES` for one scheduled attachment: 25 MiB. */
const MAX_SCHEDULED_ATTACHMENT_BYTES = MAX_ATTACHMENT_BYTES;

/**
 * A storage key as the upload gave it. Storage is not read when scheduling (the file is read at send
 * time), but keys that could only point outside the organization's files are refused now: an empty,
 * `.` or `..` segment, a leading `/`, a backslash or a control character.
 */
function isPlausibleStorageKey(key: string): boolean {
  for (const char of key) {
    const code = char.charCodeAt(0);
    if (char === '\\' || code < 0x20 || code === 0x7f) return false;
  }
  return key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

const emailAddress = z.email('must be an email address').max(320);

const attachmentInput = z
  .strictObject({
    filename: z
      .string()
      .min(1)
      .max(255)
      .refine(NO_NUL, nulMessage)
      .refine(ONE_LINE, oneLineMessage)
      .describe('File name shown to the recipient, 1-255 characters on one line'),
    content_type: z
      .string()
      .min(1)
      .max(100)
      .regex(CONTENT_TYPE, 'must be a media type with optional parameters, e.g. text/html; charset=utf-8')
      .describe(
        'Media type of the file, 1-100 characters: type/subtype with optional parameters (application/pdf, text/html; charset=utf-8)',
      ),
    storage_key: z
      .string()
      .min(1)
      .max(500)
      .refine(
        isPlausibleStorageKey,
        'must be a storage key: /-separated segments, none empty, "." or "..", no backslash',
      )
      .describe(
        'The `key` of create_upload_url (POST /api/v1/files/upload-url, purpose attachment) once the file is uploaded with exactly `size_bytes`; the file is read when the mail is sent',
      ),
    size_bytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_SCHEDULED_ATTACHMENT_BYTES)
      .describe('Size of the file in bytes, 1 to 26214400'),
  })
  .describe('An attachment, read from storage by its key at send time');

const scheduleInputShape = {
  to: emailAddress.describe('Recipient e-mail address'),
  cc: z
    .array(emailAddress.describe('A copy recipient'))
    .max(20)
    .optional()
    .describe('Copy recipients, at most 20'),
  bcc: z
    .array(emailAddress.describe('A blind copy recipient'))
    .max(20)
    .optional()
    .describe('Blind copy recipients, at most 20 (never shown in the headers)'),
  subject: z
    .string()
    .min(1)
    .max(500)
    .refine(NO_NUL, nulMessage)
    .refine(ONE_LINE, oneLineMessage)
    .describe('Subject line, 1-500 characters on one line'),
  body_html: z.string().min(1).refine(NO_NUL, nulMessage).describe('HTML body, at least 1 character'),
  body_text: z.string().refine(NO_NUL, nulMessage).optional().describe('Plain-text body (optional)'),
  connected_account_id: objectId('connected account').describe(
    'Id of one of your own connected accounts (list_connected_accounts); the mail goes out through it',
  ),
  lead_id: objectId('lead').describe('Id of the live lead the mail is about; the sent mail is logged on it'),
  contact_id: objectId('contact')
    .optional()
    .describe('Id of a live contact of that lead the mail is addressed to'),
  template_id: objectId('template')
    .optional()
    .describe('Id of a template, stored with the email for reference (the body sent is body_html/body_text)'),
  attachments: z.array(attachmentInput).max(10).optional().describe('Attachments, at most 10'),
  scheduled_at: z.iso
    .datetime({ offset: true })
    .describe('When to send (ISO 8601 date-time), between 1 minute and 30 days after now'),
  follow_up: z
    .strictObject({
      amount: z.number().int().min(1).max(90).describe('How many units to wait for a reply, 1-90'),
      unit: z.enum(['days', 'hours']).describe('days or hours'),
    })
    .optional()
    .describe(
      'When no reply from the recipient arrives within this delay after sending, a follow-up task for you is created',
    ),
  enroll_in_workflow_id: objectId('workflow')
    .optional()
    .describe(
      'Id of a workflow of this organization the lead is enrolled in once the mail is sent (it must be active then)',
    ),
};

/** schedule_email, built with the hooks that find an `enroll_in_workflow_id`'s target. */
export function scheduleEmailTool(hooks: EmailHooks) {
  return defineTool({
    name: 'schedule_email',
    title: 'Schedule an email to a lead',
    description:
      'Schedules an email to a lead to go out later (1 minute to 30 days ahead) through one of your verified connected accounts, with optional attachments (create_upload_url), a follow-up task if nobody replies and a workflow to enroll the lead in afterwards. Returns `job_id`.',
    input: z.strictObject({
      ...scheduleInputShape,
      ...confirmShape,
    }),
    output: z.object({
      ...sendResultShape,
      message: z.string().optional().describe('What was done (absent in a preview)'),
      job_id: z.string().optional().describe('Id of the scheduled email (absent in a preview)'),
      scheduled_at: z.string().optional().describe('When it is sent (ISO 8601; absent in a preview)'),
    }),
    access: access('write', 'email.send'),
    errors: [
      {
        code: 'validation_failed',
        when: 'scheduled_at is not 1 minute to 30 days ahead, a reference is not yours or not live, the account is not verified, or an attachment is not an upload of your organization with its declared size',
      },
    ],
    annotations: { idempotentHint: false, openWorldHint: true },
    toolset: 'email',
    // The attachments are looked up in the store (a network call on S3) before the transaction opens.
    async outside(input, ctx) {
      return attachmentProblems(ctx.services.files, ctx.auth.orgId, input.attachments ?? []);
    },
    sends: {
      async preview(input, ctx) {
        const { confirm: _confirm, ...schedule } = input;
        const checked = await checkSchedule(hooks, ctx, schedule, ctx.outside);
        const details: string[] = [];
        if (schedule.follow_up) {
          details.push(
            `A follow-up task for you if no reply arrives within ${schedule.follow_up.amount} ${schedule.follow_up.unit}`,
          );
        }
        if (checked.workflow) {
          details.push(
            `Then enrolls the lead in workflow ${checked.workflow.name} (${checked.workflow.status})`,
          );
        }
        return {
          action: `Schedule an e-mail to ${schedule.to}, sent through your connected account`,
          sender: senderOf(checked.account),
          to: [schedule.to],
          cc: schedule.cc ?? [],
          bcc: schedule.bcc ?? [],
          subject: schedule.subject,
          amounts: [],
          send_at: checked.scheduledAt.toISOString(),
          attachments: (schedule.attachments ?? []).map((a) => a.filename),
          details,
        };
      },
    },
    async handler(input, ctx) {
      const { confirm: _confirm, ...schedule } = input;
      return { sent: true, ...(await writeSchedule(hooks, ctx, schedule, ctx.outside)) };
    },
  });
}

const emailIdShape = {
  job_id: objectId('scheduled email').describe('Id of the scheduled email (the job_id)'),
};

export const listScheduledEmailsTool = defineTool({
  name: 'list_scheduled_emails',
  title: 'List scheduled emails',
  description:
    'Lists scheduled emails, newest first: your own, or every one of the organization for owners, admins and managers. ' +
    'Filter by `status` (scheduled, sending, sent, failed, cancelled) and `lead_id`. Paginated: returns `scheduled_emails` ' +
    'plus `total`, `page`, `limit`, `totalPages`; `limit` is 1-100 (default 25).',
  input: z.strictObject({
    page: listParams(['created_at']).page,
    limit: listParams(['created_at']).limit,
    status: z.enum(SCHEDULED_EMAIL_STATUSES).optional().describe('Only emails in this status'),
    lead_id: objectId('lead').optional().describe('Only emails to this lead'),
  }),
  output: pagedOutput('scheduled_emails', scheduledEmailSchema),
  access: access('read', 'email.view'),
  toolset: 'email',
  async handler(input, { db, auth }) {
    return listScheduledEmails(db, auth, input);
  },
});

const emailOutput = z.object({ scheduled_email: scheduledEmailSchema });

export const getScheduledEmailTool = defineTool({
  name: 'get_scheduled_email',
  title: 'Get a scheduled email',
  description:
    'Returns one scheduled email by its job_id: status, attempts, the reason of a failure, the Message-ID it went out with, ' +
    'the activity recorded and the follow-up. Your own, or any of the organization for owners, admins and managers.',
  input: z.strictObject(emailIdShape),
  output: emailOutput,
  access: access('read', 'email.view'),
  toolset: 'email',
  async handler(input, { db, auth }) {
    return { scheduled_email: serializeScheduledEmail(await getVisibleEmail(db, auth, input.job_id)) };
  },
});

export const cancelScheduledEmailTool = defineTool({
  name: 'cancel_scheduled_email',
  title: 'Cancel a scheduled email',
  description:
    'Cancels a scheduled email that has not been sent: only while its status is `scheduled` (sending, sent or failed is a ' +
    `400 invalid_transition). Cancelling it again returns it unchanged. The moves: ${describeMoves(scheduledEmailMachine)}.`,
  input: z.strictObject(emailIdShape),
  output: emailOutput,
  access: access('write', 'email.send'),
  errors: [{ code: 'invalid_transition', when: 'the email is being sent, was sent or failed' }],
  annotations: { idempotentHint: true, destructiveHint: true },
  toolset: 'email',
  async handler(input, ctx) {
    return { scheduled_email: await cancelScheduledEmail(ctx, input.job_id) };
  },
});

/** The area's tools, in listing order, with schedule_email built by scheduleEmailTool. */
export function emailTools<S extends Tool>(scheduleEmail: S) {
  return [scheduleEmail, listScheduledEmailsTool, getScheduledEmailTool, cancelScheduledEmailTool];
}
