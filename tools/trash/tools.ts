// The trash: lists records moved there by their delete tools and restores them. Which record types
// are trashable comes from the areas' `trashTypes` (tools/index.ts collects them).
import { z } from 'zod';
import { assertTokenAllows, tokenAllows } from '../../core/access.ts';
import { notFound } from '../../core/errors.ts';
import { listParams, objectId, paged, pagedOutput } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import { findTrashType, listTrash, type TrashType } from '../../core/trash.ts';

/** The trash tools over the given record types. */
export function trashTools(types: readonly TrashType[]) {
  const { page, limit } = listParams(['deleted_at']);
  const typeNames = types.map((t) => t.type);
  const typeField = z.enum(typeNames).describe(`Record type: ${typeNames.join(', ')}`);

  const trashItemSchema = z.object({
    type: z.string().describe(`Record type: ${typeNames.join(', ')}`),
    _id: z.string().describe('Id of the trashed record; pass it to restore_trash_item'),
    name: z.string().describe("The record's name"),
    deleted_at: z.string().describe('When it was moved to the trash (ISO 8601)'),
    deleted_by: z.string().nullable().describe('Id of the user who deleted it'),
  });

  const listTrashItems = defineTool({
    name: 'list_trash',
    title: 'List the trash',
    description:
      'Lists deleted records that can still be restored, most recently deleted first; filter by `type`. Restore one with restore_trash_item.',
    input: z.strictObject({ page, limit, type: typeField.optional() }),
    output: pagedOutput('items', trashItemSchema),
    // No family of its own: one trash holds several record types, each checked by its own family.
    access: { kind: 'read', resource: null, permission: 'trash.view' },
    async handler(input, { db, auth, surface }) {
      // A token sees only the trashed records of resources its scopes let it read.
      const visible = types.filter(
        (t) =>
          (input.type === undefined || t.type === input.type) &&
          tokenAllows(auth.scopes, surface, 'read', t.resource),
      );
      const { items, total } = await listTrash(db, auth.orgId, visible, input);
      return paged(
        'items',
        items.map((i) => ({ ...i, deleted_at: i.deleted_at.toISOString() })),
        total,
        input,
      );
    },
  });

  const restoreTrashItem = defineTool({
    name: 'restore_trash_item',
    title: 'Restore from the trash',
    errors: [
      {
        code: 'conflict',
        when: 'the record belongs to a lead that is itself in the trash: restore the lead first',
      },
    ],
    description:
      'Restores a deleted record from the trash (an `_id` from list_trash) and returns it under its type name, e.g. `lead`.',
    input: z.strictObject({ id: objectId('trashed record') }),
    output: z.object({
      type: z.string().describe(`Record type: ${typeNames.join(', ')}`),
      ...Object.fromEntries(
        types.map((t) => [
          t.recordKey,
          t.schema.optional().describe(`The restored record, when type is ${t.type}`),
        ]),
      ),
    }),
    access: { kind: 'write', resource: null, permission: 'trash.restore' },
    annotations: { idempotentHint: true },
    async handler(input, ctx) {
      const entry = await findTrashType(ctx.db, ctx.auth.orgId, types, input.id);
      if (!entry) throw notFound('Trash item');
      // Restoring needs the write scope of the record's own family (write:custom_objects for a record).
      assertTokenAllows(ctx.auth.scopes, ctx.surface, 'write', entry.resource);
      const record = await entry.restore(ctx, input.id);
      return { type: entry.type, [entry.recordKey]: record };
    },
  });

  return { listTrashItems, restoreTrashItem };
}
