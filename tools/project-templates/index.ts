import { defineArea } from '../../core/area.ts';
import { projectTemplatesCatalogue } from './catalogue.ts';
import { projectTemplateRoutes } from './routes.ts';
import { applyDefaultOnboarding } from './store.ts';
import { projectTemplateTools } from './tools.ts';

/**
 * Project templates and client onboarding: templates of tasks, applying one to a lead, and the
 * default onboarding template applied (leadConverted hook) when a lead is converted to a client.
 */
export const projectTemplatesArea = defineArea({
  name: 'project-templates',
  uses: ['leads', 'projects', 'tasks'],
  tools: projectTemplateTools,
  routes: projectTemplateRoutes,
  tags: {
    'project-templates':
      "Project templates: task lists applied to a lead as a project; the default onboarding template and a lead's onboarding progress.",
  },
  brings: projectTemplatesCatalogue,
  permissions: ['projects.view', 'projects.create', 'settings.project_templates.manage'],
  // Applying creates tasks through the tasks area, which emits task.created.
  events: ['task.created'],
  toolsets: ['core', 'projects'],
  leadConverted: [applyDefaultOnboarding],
});
