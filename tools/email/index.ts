import { defineArea } from '../../core/area.ts';
import { cancelEmailsOfAccount, repliedScheduledEmail } from './account-hooks.ts';
import { emailCatalogue } from './catalogue.ts';
import { cancelFollowUpsOnReply, followUpSweep } from './follow-ups.ts';
import type { EmailHooks } from './hooks.ts';
import { emailRoutes } from './routes.ts';
import { emailSweep, sendEmailJob } from './sender.ts';
import { scheduledEmailMachine } from './store.ts';
import { emailTools, scheduleEmailTool } from './tools.ts';

/**
 * Scheduled email: mail to a lead sent later through the sender's own connected account
 * (sender.ts), logged as an outgoing email activity, with an optional follow-up task
 * when no reply comes (follow-ups.ts; a reply cancels it through the emailReceived hook) and an
 * optional workflow enrollment after sending. Built with the emailSent and enrollTargets hooks of
 * the areas that react to a sent email (tools/workflows), so it never names them.
 */
export function createEmailArea(hooks: EmailHooks) {
  const scheduleEmail = scheduleEmailTool(hooks);
  return defineArea({
    name: 'email',
    uses: ['activities', 'connected-accounts', 'contacts', 'files', 'leads', 'tasks'],
    tools: emailTools(scheduleEmail),
    routes: emailRoutes(scheduleEmail),
    tags: {
      email:
        'Scheduled email: schedule a mail to a lead through your own connected SMTP account, list, read and cancel it; once sent it is logged on the lead, with an optional follow-up task when no reply comes.',
    },
    brings: emailCatalogue,
    permissions: ['email.view', 'email.send'],
    events: ['email.sent', 'task.created', 'workflow.triggered'],
    toolsets: ['email'],
    stateMachines: [scheduledEmailMachine],
    emailReceived: [cancelFollowUpsOnReply],
    replyTargets: [repliedScheduledEmail],
    accountRemoved: [cancelEmailsOfAccount],
    jobs: [sendEmailJob(hooks)],
    sweeps: [emailSweep(hooks), followUpSweep],
  });
}
