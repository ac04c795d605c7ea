// Task routes: the collection, one task, completing and snoozing, and the caller's open tasks.
// PUT merges exactly like PATCH (only the fields sent change), as on every record resource.

import { type Route, route } from '../../core/route.ts';
import {
  completeTask,
  createTask,
  deleteTask,
  getTask,
  listMyTasks,
  listTasks,
  snoozeTask,
  unsnoozeTask,
  updateTask,
} from './tools.ts';

export const taskRoutes: Route[] = [
  route('GET', '/me/tasks', listMyTasks),
  route('GET', '/tasks', listTasks),
  route('POST', '/tasks', createTask),
  route('GET', '/tasks/:id', getTask),
  route('PATCH', '/tasks/:id', updateTask),
  route('PUT', '/tasks/:id', updateTask),
  route('DELETE', '/tasks/:id', deleteTask),
  route('POST', '/tasks/:id/complete', completeTask),
  route('POST', '/tasks/:id/snooze', snoozeTask),
  route('POST', '/tasks/:id/unsnooze', unsnoozeTask),
];
