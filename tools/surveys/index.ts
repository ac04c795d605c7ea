import { defineArea } from '../../core/area.ts';
import { surveysCatalogue } from './catalogue.ts';
import { surveyPublicRoutes } from './public.ts';
import { surveyRoutes } from './routes.ts';
import { surveyStatusMachine, surveyTrashTypes } from './store.ts';
import { surveyTools } from './tools.ts';

/** Surveys: questions, a public form at /s/{token} without script, responses linked to leads, and their summary. */
export const surveysArea = defineArea({
  name: 'surveys',
  uses: ['contacts'],
  tools: surveyTools,
  routes: surveyRoutes,
  tags: {
    surveys:
      'Surveys (plan feature surveys): NPS, rating, choice and text questions; activation opens a public form at /s/{token} ' +
      '(plain HTML, or JSON answers); responses are linked to the lead whose contact gave the e-mail (form.submitted); a summary with the NPS.',
  },
  brings: surveysCatalogue,
  permissions: ['surveys.view', 'surveys.create', 'surveys.edit', 'surveys.delete'],
  events: ['form.submitted'],
  toolsets: ['surveys'],
  trashTypes: surveyTrashTypes,
  stateMachines: [surveyStatusMachine],
  publicRoutes: surveyPublicRoutes,
});
