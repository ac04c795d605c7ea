// Custom activity types: organization-designed kinds of activity ("Demo", "Site visit") with their
// own fields. An activity of type `custom` names one of them and stores values validated against
// its fields (tools/custom-objects/fields.ts). Definitions are workspace settings behind the
// custom_activity_types plan feature. This file declares the tools; the data functions are store.ts.
import { z } from 'zod';
import type { CustomActivityTypeChangingHook } from '../../core/area.ts';
import { mergePatch, SETTINGS_SORT_FIELDS } from '../../core/records.ts';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { customFieldDefsSchema, toFieldDefs } from '../custom-objects/fields.ts';
import {
  customActivityTypeSchema,
  customActivityTypeTable,
  deleteCustomActivityTypeRow,
  insertCustomActivityType,
  serializeCustomActivityType,
  writeCustomActivityType,
} from './store.ts';

// ---------------------------------------------------------------------------------------------
// Input fields

const nameField = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine(NO_NUL, nulMessage)
  .describe(
    'Name of the activity type, 1-100 characters, unique in the organization ignoring case (e.g. "Demo")',
  );
const descriptionField = z
  .string()
  .max(1000)
  .refine(NO_NUL, nulMessage)
  .nullable()
  .describe('What the type is for, at most 1000 characters; null clears it');
const idShape = { id: objectId('custom activity type') };

// ---------------------------------------------------------------------------------------------
// Tools

const readAccess = {
  kind: 'read',
  resource: 'custom_objects',
  permission: 'activities.view',
  feature: 'custom_activity_types',
} as const;
const writeAccess = {
  kind: 'write',
  resource: 'custom_objects',
  permission: 'settings.custom_activity_types.manage',
  feature: 'custom_activity_types',
} as const;
const typeOutput = z.object({ custom_activity_type: customActivityTypeSchema });

export const listCustomActivityTypes = defineTool({
  name: 'list_custom_activity_types',
  title: 'List custom activity types',
  description:
    "Lists the organization's custom activity types with their fields. Use it to find the `custom_activity_type_id` and field keys before logging a custom activity with log_activity.",
  input: z.strictObject({ ...listParams(SETTINGS_SORT_FIELDS) }),
  output: pagedOutput('custom_activity_types', customActivityTypeSchema),
  access: readAccess,
  toolset: 'customization',
  async handler(input, { db, auth }) {
    return customActivityTypeTable.list(
      db,
      'custom_activity_types',
      serializeCustomActivityType,
      auth.orgId,
      input,
    );
  },
});

export const getCustomActivityTypeTool = defineTool({
  name: 'get_custom_activity_type',
  title: 'Get a custom activity type',
  description:
    'Returns one custom activity type by id with its field definitions (key, label, type, required, options). Use it to learn ' +
    'which `values` log_activity accepts for activities of this type. Unknown ids and ids of other organizations answer 404.',
  input: z.strictObject(idShape),
  output: typeOutput,
  access: readAccess,
  toolset: 'customization',
  async handler(input, { db, auth }) {
    return {
      custom_activity_type: serializeCustomActivityType(
        await customActivityTypeTable.get(db, auth.orgId, input.id),
      ),
    };
  },
});

export const createCustomActivityType = defineTool({
  name: 'create_custom_activity_type',
  title: 'Create a custom activity type',
  errors: [{ code: 'conflict', when: 'another custom activity type has this name (ignoring case)' }],
  description:
    'Defines a kind of activity (e.g. "Demo" with fields outcome: choice, attendees: number); the name is unique ignoring case (409). Log such activities with log_activity (type custom). Needs the custom_activity_types plan feature.',
  input: z.strictObject({
    name: nameField,
    description: descriptionField.optional(),
    fields: customFieldDefsSchema
      .default([])
      .describe('The field definitions, at most 100, keys unique (default none)'),
  }),
  output: typeOutput,
  access: writeAccess,
  toolset: 'customization',
  async handler(input, ctx) {
    const record = await insertCustomActivityType(ctx, {
      name: input.name,
      description: input.description ?? null,
      fields: toFieldDefs(input.fields),
    });
    return { custom_activity_type: record };
  },
});

/** update_custom_activity_type, built with the hooks of the areas holding records of a type. */
function updateCustomActivityTypeTool(hooks: readonly CustomActivityTypeChangingHook[]) {
  return defineTool({
    name: 'update_custom_activity_type',
    title: 'Update a custom activity type',
    errors: [
      {
        code: 'conflict',
        when: 'another type has this name, or a field whose values activities hold changes type',
      },
    ],
    description:
      "Changes the name, description or fields of a custom activity type; only what is sent changes, and `fields` replaces the whole list. Removing a field erases its values. Changing a field's `type` is 409 while activities of the type exist; a taken name is 409.",
    input: z.strictObject({
      ...idShape,
      name: nameField.optional(),
      description: descriptionField.optional(),
      fields: customFieldDefsSchema
        .optional()
        .describe(
          'The complete new list of field definitions (replaces the old list), at most 100, keys unique',
        ),
    }),
    output: typeOutput,
    access: writeAccess,
    annotations: { idempotentHint: true },
    toolset: 'customization',
    async handler(input, ctx) {
      const before = await customActivityTypeTable.get(ctx.db, ctx.auth.orgId, input.id, 'update');
      const record = await writeCustomActivityType(
        ctx,
        before,
        mergePatch(
          { name: before.name, description: before.description, fields: before.fields },
          {
            name: input.name,
            description: input.description,
            fields: input.fields && toFieldDefs(input.fields),
          },
        ),
        hooks,
      );
      return { custom_activity_type: record };
    },
  });
}

/** replace_custom_activity_type, built with the hooks of the areas holding records of a type. */
function replaceCustomActivityTypeTool(hooks: readonly CustomActivityTypeChangingHook[]) {
  return defineTool({
    name: 'replace_custom_activity_type',
    title: 'Replace a custom activity type',
    errors: [
      {
        code: 'conflict',
        when: 'another type has this name, or a field whose values activities hold changes type',
      },
    ],
    description:
      'Replaces a custom activity type as a whole (PUT semantics): `name` is required, a description left out becomes null and fields ' +
      'left out become an empty list (erasing every value from its activities). Same rules as update_custom_activity_type, which is ' +
      'usually the better choice because it changes only what is sent.',
    input: z.strictObject({
      ...idShape,
      name: nameField,
      description: descriptionField.optional(),
      fields: customFieldDefsSchema
        .default([])
        .describe('The complete list of field definitions, at most 100 (default none)'),
    }),
    output: typeOutput,
    access: writeAccess,
    annotations: { idempotentHint: true },
    toolset: 'customization',
    async handler(input, ctx) {
      const before = await customActivityTypeTable.get(ctx.db, ctx.auth.orgId, input.id, 'update');
      const record = await writeCustomActivityType(
        ctx,
        before,
        {
          name: input.name,
          description: input.description ?? null,
          fields: toFieldDefs(input.fields),
        },
        hooks,
      );
      return { custom_activity_type: record };
    },
  });
}

/** delete_custom_activity_type, built with the hooks of the areas holding records of a type. */
function deleteCustomActivityTypeTool(hooks: readonly CustomActivityTypeChangingHook[]) {
  return defineTool({
    name: 'delete_custom_activity_type',
    title: 'Delete a custom activity type',
    errors: [{ code: 'conflict', when: 'activities of this type still exist' }],
    description:
      'Deletes a custom activity type permanently. Refused with 409 while live activities use it (delete those first). Activities of ' +
      'the type that are already in the trash are purged with it, since they could not be shown without their type.',
    input: z.strictObject(idShape),
    output: messageOutput,
    access: writeAccess,
    annotations: { destructiveHint: true, idempotentHint: true },
    toolset: 'customization',
    async handler(input, ctx) {
      await deleteCustomActivityTypeRow(ctx, input.id, hooks);
      return { message: 'Custom activity type deleted' };
    },
  });
}

/** The tools that change or delete a type, built with the hooks of the areas holding its records. */
export type TypeChangeTools = ReturnType<typeof typeChangeTools>;

export function typeChangeTools(hooks: readonly CustomActivityTypeChangingHook[]) {
  return {
    update: updateCustomActivityTypeTool(hooks),
    replace: replaceCustomActivityTypeTool(hooks),
    remove: deleteCustomActivityTypeTool(hooks),
  };
}

export function customActivityTypeTools(changes: TypeChangeTools) {
  return [
    listCustomActivityTypes,
    getCustomActivityTypeTool,
    createCustomActivityType,
    changes.update,
    changes.replace,
    changes.remove,
  ];
}
