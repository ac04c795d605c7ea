import { defineArea } from '../../core/area.ts';
import { customObjectRoutes } from './routes.ts';
import { customObjectRecordOwnership, customObjectRecordTrashTypes, customObjectTools } from './tools.ts';

/** Record types an organization designs (definitions with typed fields) and their records. */
export const customObjectsArea = defineArea({
  name: 'custom-objects',
  tools: customObjectTools,
  routes: customObjectRoutes,
  tags: { 'custom-objects': 'Record types of your own (definitions with typed fields) and their records.' },
  permissions: [
    'custom_objects.view',
    'custom_objects.create',
    'custom_objects.edit',
    'custom_objects.delete',
    'settings.custom_objects.manage',
  ],
  events: [],
  toolsets: ['customization'],
  trashTypes: customObjectRecordTrashTypes,
  ownedRecords: customObjectRecordOwnership,
});
