// Trash routes: list trashed records and restore one.
import { type Route, route } from '../../core/route.ts';
import type { trashTools } from './tools.ts';

export function trashRoutes(tools: ReturnType<typeof trashTools>): Route[] {
  return [
    route('GET', '/trash', tools.listTrashItems),
    route('POST', '/trash/:id/restore', tools.restoreTrashItem),
  ];
}
