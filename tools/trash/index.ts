import { defineArea } from '../../core/area.ts';
import type { TrashType } from '../../core/trash.ts';
import { trashCatalogue } from './catalogue.ts';
import { trashPurge } from './jobs.ts';
import { trashRoutes } from './routes.ts';
import { trashTools } from './tools.ts';

/** Soft-deleted records of every type the areas declare in `trashTypes`, and their purge once past retention. */
export function createTrashArea(types: readonly TrashType[]) {
  const tools = trashTools(types);
  const purge = trashPurge(types);
  return defineArea({
    name: 'trash',
    tools: [tools.listTrashItems, tools.restoreTrashItem],
    routes: trashRoutes(tools),
    tags: { trash: 'Soft-deleted records: list them and restore them.' },
    brings: trashCatalogue,
    permissions: ['trash.view', 'trash.restore'],
    events: [],
    toolsets: ['core'],
    jobs: [purge.job],
    schedules: [purge.schedule],
  });
}
