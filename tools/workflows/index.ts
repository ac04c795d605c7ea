import { defineArea } from '../../core/area.ts';
import { workflowsCatalogue } from './catalogue.ts';
import { enrollOnEmailSent, workflowEnrollTarget } from './email-hooks.ts';
import { stopEnrollmentsOnReply } from './replies.ts';
import { workflowRoutes } from './routes.ts';
import { enrollmentSweep, workflowStepJob } from './steps-runner.ts';
import { workflowStatusMachine } from './store.ts';
import { workflowTools } from './tools.ts';

/** Workflows (sequences): email, task and sms steps with delays, activation and pausing, enrollments that stop on a reply. */
export const workflowsArea = defineArea({
  name: 'workflows',
  uses: ['connected-accounts', 'contacts', 'email', 'leads', 'messages', 'tasks'],
  tools: workflowTools,
  routes: workflowRoutes,
  tags: {
    workflows:
      'Workflows (sequences): steps (email through the enrolling user’s connected account, task, sms) with delays, activation and pausing, and the enrollments of leads, which stop on a reply or when unenrolled.',
  },
  brings: workflowsCatalogue,
  permissions: [
    'workflows.view',
    'workflows.create',
    'workflows.edit',
    'workflows.delete',
    'workflows.enroll',
    'workflows.manage_any',
    // A task step runs only while the enrolling user's role still creates tasks (steps-runner.ts).
    'tasks.create',
    // An sms step sends only while the enrolling user's role still sends messages.
    'messages.send',
  ],
  events: ['workflow.triggered'],
  toolsets: ['email'],
  stateMachines: [workflowStatusMachine],
  emailReceived: [stopEnrollmentsOnReply],
  emailSent: [enrollOnEmailSent],
  enrollTargets: [workflowEnrollTarget],
  jobs: [workflowStepJob],
  sweeps: [enrollmentSweep],
});
