// What workflows do when the email area's sender records a scheduled email (docs/architecture.md
// "Boundaries": the dependency goes workflows -> email, so email runs these hooks and never names
// workflows): a sent email with `enroll_in_workflow_id` enrolls its lead; a failed one whose sender
// was refused fails the enrollment that wrote it, whose later emails would meet the same refusal.
import { and, eq } from 'drizzle-orm';
import type { EmailSentHook, EnrollTargetHook } from '../../core/area.ts';
import { enrollLead, lockLiveWorkflow, wakeEnrollment } from './enroll.ts';
import { triggeredPayload } from './shape.ts';
import { workflowEnrollments } from './tables.ts';

/** The live workflow an email may name in `enroll_in_workflow_id` (paused is accepted at scheduling). */
export const workflowEnrollTarget: EnrollTargetHook = async (db, orgId, id) => {
  const row = await lockLiveWorkflow(db, orgId, id);
  return row ? { id: row.id, name: row.name, status: row.status } : null;
};

export const enrollOnEmailSent: EmailSentHook = {
  async sent(ctx, email) {
    if (!email.enrollInWorkflowId || !email.leadLive) return {};
    const workflow = await lockLiveWorkflow(ctx.db, ctx.orgId, email.enrollInWorkflowId);
    if (workflow?.status !== 'active')
      return { note: `not enrolled: the workflow ${workflow ? 'is paused' : 'was deleted'}` };
    const enrolled = await enrollLead(
      ctx,
      {
        workflow,
        leadId: email.leadId,
        contactId: email.contactId,
        enrolledBy: email.userId,
        connectedAccountId: email.connectedAccountId,
        sourceEmailId: email.emailId,
      },
      (enrollment) => triggeredPayload(enrollment, workflow),
    );
    // One active enrollment per lead and workflow: the lead runs on in the one it has (the
    // enrollment route answers 409 already_enrolled), and this email enrolls nothing.
    if (!enrolled.created)
      return { note: `not enrolled: already_enrolled (enrollment ${enrolled.enrollment.id})` };
    const { enrollment } = enrolled;
    return {
      enrollmentId: enrollment.id,
      afterCommit: () => wakeEnrollment(ctx.services, enrollment, ctx.now),
    };
  },
  async failed(ctx, email) {
    if (!email.senderRefused || !email.workflowEnrollmentId) return;
    await ctx.db
      .update(workflowEnrollments)
      .set({
        status: 'failed',
        stopReason: `email step ${email.workflowStep ?? '?'} not sent: ${email.reason}`.slice(0, 1000),
        lastError: email.reason,
        nextRunAt: null,
        stoppedAt: ctx.now,
        updatedAt: ctx.now,
      })
      .where(
        and(eq(workflowEnrollments.id, email.workflowEnrollmentId), eq(workflowEnrollments.status, 'active')),
      );
  },
};
