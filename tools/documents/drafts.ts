// What the documents share about drafts: only a draft may be edited or deleted (any other state
// would have to move back to its machine's initial state, which the machine refuses: the 400
// invalid_transition naming its field), and a draft is deleted for good, never trashed.
import type { Executor } from '../../core/db/client.ts';
import type { RecordContext, RecordRow, RecordTable } from '../../core/records.ts';
import type { StateMachine } from '../../core/state-machine.ts';

export interface DraftRules<Row> {
  /** Refuses a document that is no longer a draft. */
  assertDraft(row: Row): void;
  /** The live document, locked for the change (404 with the table's label), refused unless a draft. */
  getDraft(ctx: RecordContext, id: string): Promise<Row>;
  /** Deletes a draft for good; other states are refused. */
  deleteDraft(ctx: RecordContext, id: string): Promise<void>;
}

export function defineDraftRules<Row extends RecordRow & { status: string }, S extends string>(spec: {
  records: RecordTable<Row>;
  /** The document's machine; its initial state is the draft. */
  machine: StateMachine<S>;
  /** Deletes the row of `id` in `orgId` (the area's own typed delete). */
  remove(db: Executor, orgId: string, id: string): Promise<unknown>;
}): DraftRules<Row> {
  const assertDraft = (row: Row): void => {
    spec.machine.assertMove(spec.machine.parse(row.status), spec.machine.initial);
  };
  const getDraft = async (ctx: RecordContext, id: string): Promise<Row> => {
    const row = await spec.records.getLive(ctx.db, ctx.auth.orgId, id, true);
    assertDraft(row);
    return row;
  };
  return {
    assertDraft,
    getDraft,
    async deleteDraft(ctx, id) {
      const before = await getDraft(ctx, id);
      await spec.remove(ctx.db, ctx.auth.orgId, before.id);
    },
  };
}
