// The events the tasks area emits, with the payload each carries: the task as `get_task` returns it, plus what
// the event adds. The schemas document the webhooks section of the OpenAPI document, and the
// declaration merging below makes `emit` check every payload at compile time.
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';
import { taskSchema } from './store.ts';

export const tasksEvents = {
  'task.created': taskSchema,
  'task.completed': taskSchema,
} satisfies EventSchemas;

type TasksEvents = PayloadsOf<typeof tasksEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends TasksEvents {}
}
