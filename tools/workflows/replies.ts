// Stop on reply: the workflows area's emailReceived hook (core/area.ts). An inbound email from the
// address of an enrolled contact, or one answering an email a workflow step sent, stops the active
// enrollments it concerns with reason `replied`: a sequence must not keep chasing someone who wrote back.
import { and, eq, or } from 'drizzle-orm';
import type { EmailReceivedHook } from '../../core/area.ts';
import { contactHasAddress } from '../contacts/lookups.ts';
import { enrollmentOfEmail } from '../email/store.ts';
import { stopEnrollments } from './store.ts';
import { workflowEnrollments } from './tables.ts';

/**
 * Stops, in the hook's transaction: the active enrollments whose contact has the sender's address
 * (any of its e-mails, case-insensitively), and the one whose step sent the email this one replies
 * to (`repliesToEmailId`, found by In-Reply-To).
 */
export const stopEnrollmentsOnReply: EmailReceivedHook = async (ctx, email) => {
  const address = email.fromAddress.toLowerCase();
  const hasAddress = contactHasAddress(ctx.orgId, workflowEnrollments.contactId, address);
  const repliedEnrollment =
    email.repliesToEmailId === null
      ? null
      : await enrollmentOfEmail(ctx.db, ctx.orgId, email.repliesToEmailId);
  const repliedTo = repliedEnrollment === null ? undefined : eq(workflowEnrollments.id, repliedEnrollment);
  const stopped = await stopEnrollments(
    ctx.db,
    and(eq(workflowEnrollments.orgId, ctx.orgId), or(hasAddress, repliedTo)),
    'replied',
    ctx.now,
  );
  if (stopped.length > 0) {
    ctx.services.logger.info(
      { org_id: ctx.orgId, inbound_email_id: email.inboundEmailId, stopped: stopped.map((row) => row.id) },
      'workflow enrollments stopped by a reply',
    );
  }
};
