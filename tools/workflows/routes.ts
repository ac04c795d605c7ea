// Workflow routes: the collection, one workflow (PUT merges exactly like PATCH), its activate and
// pause moves, and its enrollments nested under it (/workflows/{id}/enrollments/{enrollmentId}).
import { type Route, route } from '../../core/route.ts';
import {
  activateWorkflow,
  createWorkflow,
  deleteWorkflowTool,
  enrollInWorkflow,
  getWorkflow,
  getWorkflowEnrollment,
  listWorkflowEnrollments,
  listWorkflows,
  pauseWorkflow,
  unenrollFromWorkflow,
  updateWorkflow,
} from './tools.ts';

export const workflowRoutes: Route[] = [
  route('GET', '/workflows', listWorkflows),
  route('POST', '/workflows', createWorkflow),
  route('GET', '/workflows/:id', getWorkflow),
  route('PATCH', '/workflows/:id', updateWorkflow),
  route('PUT', '/workflows/:id', updateWorkflow),
  route('DELETE', '/workflows/:id', deleteWorkflowTool),
  route('POST', '/workflows/:id/activate', activateWorkflow),
  route('POST', '/workflows/:id/pause', pauseWorkflow),
  route('GET', '/workflows/:id/enrollments', listWorkflowEnrollments),
  route('POST', '/workflows/:id/enrollments', enrollInWorkflow, { status: 201 }),
  route('GET', '/workflows/:id/enrollments/:enrollmentId', getWorkflowEnrollment),
  route('DELETE', '/workflows/:id/enrollments/:enrollmentId', unenrollFromWorkflow),
];
