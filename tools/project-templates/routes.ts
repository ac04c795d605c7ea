// Project template routes: the collection, one template (PUT merges exactly like PATCH), applying
// one to a lead (201 when it creates the project, 200 when it already existed) and a lead's
// onboarding progress (the path id is the lead's).
import { type Route, route } from '../../core/route.ts';
import {
  applyProjectTemplate,
  createProjectTemplate,
  deleteProjectTemplate,
  getLeadOnboarding,
  getProjectTemplate,
  listProjectTemplates,
  updateProjectTemplate,
} from './tools.ts';

/** apply answers `created`: 201 when this call made the project, 200 when it returns the existing one. */
const createdOr200 = (output: unknown): 200 | 201 =>
  typeof output === 'object' && output !== null && 'created' in output && output.created === false
    ? 200
    : 201;

export const projectTemplateRoutes: Route[] = [
  route('GET', '/project-templates', listProjectTemplates),
  route('POST', '/project-templates', createProjectTemplate),
  route('GET', '/project-templates/leads/:id/onboarding', getLeadOnboarding),
  route('GET', '/project-templates/:id', getProjectTemplate),
  route('PATCH', '/project-templates/:id', updateProjectTemplate),
  route('PUT', '/project-templates/:id', updateProjectTemplate),
  route('DELETE', '/project-templates/:id', deleteProjectTemplate),
  route('POST', '/project-templates/:id/apply', applyProjectTemplate, {
    status: 201,
    statusOf: createdOr200,
  }),
];
