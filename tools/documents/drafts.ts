// What the documents share about drafts: only a draft may be edited or deleted (any other state
// would have to move back to its machine's initial state, which the machine refuses: the 400
// invalid_transition naming its field), and a draft is deleted for good, never trashed. And the
// order every create and edit of a draft checks in: the lead is live (404) before the document's
// own checks (400), so a create refused takes no number and an edit writes nothing.
import { and, eq } from 'drizzle-orm';
import { newRecordStamp, type RecordContext, type RecordRow, type RecordTable } from '../../core/records.ts';
import type { StateMachine } from '../../core/state-machine.ts';
import { assertLiveLead } from './references.ts';

/** What the kit reads and writes of a document's row. */
interface DraftRow extends RecordRow {
  status: string;
  leadId: string;
  updatedAt: Date;
}

/** A document's editable state: at least the lead it is for. */
interface DraftState {
  leadId: string;
}

export interface DraftRules<Row, State, Totals, S extends string> {
  /** Refuses a document that is no longer a draft. */
  assertDraft(row: Row): void;
  /** The live document, locked for the change (404 with the table's label), refused unless a draft. */
  getDraft(ctx: RecordContext, id: string): Promise<Row>;
  /** Deletes a draft for good; other states are refused. */
  deleteDraft(ctx: RecordContext, id: string): Promise<void>;
  /** What a new draft inserts, once its lead and state passed the checks: stamped, priced, a draft. */
  newDraft(
    ctx: RecordContext,
    state: State,
  ): Promise<State & ReturnType<typeof newRecordStamp> & Totals & { status: S }>;
  /**
   * Edits a draft: `merge` gives the next state from the locked row; a lead that changes must be
   * live, then `leadChanged` may refuse it, then the state is checked, then written with its totals.
   */
  patchDraft(
    ctx: RecordContext,
    id: string,
    edit: {
      merge(before: Row): State | Promise<State>;
      leadChanged?(next: State, before: Row): Promise<void>;
    },
  ): Promise<Row>;
}

export function defineDraftRules<
  Row extends DraftRow,
  State extends DraftState & Partial<Row>,
  Totals extends Partial<Row>,
  S extends string,
>(spec: {
  records: RecordTable<Row>;
  /** The document's machine; its initial state is the draft. */
  machine: StateMachine<S>;
  /** The document's own checks of a state (400 details), after the lead's. */
  check(ctx: RecordContext, state: State): Promise<void>;
  /** The total columns the state's lines give. */
  totals(state: State): Totals;
}): DraftRules<Row, State, Totals, S> {
  const { records, machine } = spec;
  const assertDraft = (row: Row): void => {
    machine.assertMove(machine.parse(row.status), machine.initial);
  };
  const getDraft = async (ctx: RecordContext, id: string): Promise<Row> => {
    const row = await records.getLive(ctx.db, ctx.auth.orgId, id, true);
    assertDraft(row);
    return row;
  };
  return {
    assertDraft,
    getDraft,
    async deleteDraft(ctx, id) {
      const before = await getDraft(ctx, id);
      const { id: idColumn, orgId } = records.columns;
      await ctx.db.delete(records.table).where(and(eq(idColumn, before.id), eq(orgId, ctx.auth.orgId)));
    },
    async newDraft(ctx, state) {
      await assertLiveLead(ctx, state.leadId);
      await spec.check(ctx, state);
      return { ...newRecordStamp(ctx), ...state, ...spec.totals(state), status: machine.initial };
    },
    async patchDraft(ctx, id, edit) {
      const before = await getDraft(ctx, id);
      const next = await edit.merge(before);
      if (next.leadId !== before.leadId) {
        await assertLiveLead(ctx, next.leadId);
        await edit.leadChanged?.(next, before);
      }
      await spec.check(ctx, next);
      return records.write(ctx.db, ctx.auth.orgId, before.id, {
        ...next,
        ...spec.totals(next),
        updatedAt: ctx.now,
      });
    },
  };
}
