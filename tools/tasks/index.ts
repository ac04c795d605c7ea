import { defineArea } from '../../core/area.ts';
import { leadChild } from '../leads/children.ts';
import { tasksCatalogue } from './catalogue.ts';
import { taskRoutes } from './routes.ts';
import { taskCompletionMachine, taskOwnership, taskTrashTypes } from './store.ts';
import { tasks } from './tables.ts';
import { taskTools } from './tools.ts';

/** To-dos on leads, assigned to users, with their completion machine. */
export const tasksArea = defineArea({
  name: 'tasks',
  uses: ['leads', 'projects'],
  tools: taskTools,
  routes: taskRoutes,
  tags: { tasks: 'To-dos on leads, assigned to users: complete, snooze and list your own.' },
  brings: tasksCatalogue,
  permissions: ['tasks.view', 'tasks.create', 'tasks.edit', 'tasks.delete'],
  events: ['task.created', 'task.completed'],
  toolsets: ['core', 'sales'],
  trashTypes: taskTrashTypes,
  ownedRecords: taskOwnership,
  leadChildren: [leadChild(tasks)],
  stateMachines: [taskCompletionMachine],
});
