import { defineArea } from '../../core/area.ts';
import { customObjectsCatalogue } from './catalogue.ts';
import { definitionTools } from './definitions.ts';
import { customObjectRecordOwnership, customObjectRecordTrashTypes, recordTools } from './records.ts';
import { customObjectRoutes } from './routes.ts';

/** Record types an organization designs (definitions with typed fields) and their records. */
export const customObjectsArea = defineArea({
  name: 'custom-objects',
  uses: ['leads'],
  tools: [...definitionTools, ...recordTools],
  routes: customObjectRoutes,
  tags: { 'custom-objects': 'Record types of your own (definitions with typed fields) and their records.' },
  brings: customObjectsCatalogue,
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
