// Trash routes: list trashed records and restore one.
import { listTrashItems, restoreTrashItem } from '../../tools/trash.ts';
import { type Route, route } from '../route.ts';

export const trashRoutes: Route[] = [
  route('GET', '/trash', listTrashItems),
  route('POST', '/trash/:id/restore', restoreTrashItem),
];
