// The tools every document (invoice, estimate, proposal) has, built once: list, get, create, update
// a draft, delete a draft, the PDF summary and the preview of a send. Each area declares only what
// is its own of a tool (title, description, input, errors, annotations, access) and the data
// function it calls; the wiring (the id input, the `{ <kind>: record }` answer, the list's status and
// lead filters, the `billing` toolset) is written here. docs/areas/documents.md.
import { eq, gte, lte, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import type { SendPreview } from '../../core/confirm.ts';
import type { Executor } from '../../core/db/client.ts';
import { currencyField, lineItemsInput } from '../../core/line-items.ts';
import type {
  ListQuery,
  RecordContext,
  RecordRow,
  RecordTable,
  SortColumn,
  TextMatch,
} from '../../core/records.ts';
import { fileOutput } from '../../core/route.ts';
import { dateString, listParams, messageOutput, objectId } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import {
  defineTool,
  type ToolAccess,
  type ToolAnnotations,
  type ToolContext,
  type ToolError,
  type ToolInputSchema,
} from '../../core/tool.ts';
import { documentSenderLabel } from './parties.ts';
import type { DocumentKind } from './send.ts';

/** The lead a document is for. */
export const documentLeadField = objectId('lead').describe('Id of a live lead');

/** What a tool declares of its own. */
interface ToolDeclaration {
  title: string;
  description: string;
  access: ToolAccess;
}

/** The answer of get, create and update: `{ <kind>: record }`. */
function documentAnswer<K extends DocumentKind, S extends z.ZodType>(kind: K, schema: S) {
  // A computed key widens to string; the object has exactly `kind` (as core/schemas.ts pagedOutput).
  const output = z.object({ [kind]: schema } as { [P in K]: S });
  const answer = (record: z.input<S>) => ({ [kind]: record }) as z.input<typeof output>;
  return { output, answer };
}

/** The id of one document, as every tool about one takes it. */
export function documentIdShape(kind: DocumentKind) {
  return { id: objectId(kind) };
}

/** A list tool's input: the list parameters, `status`, `lead_id`, then the area's own filters. */
function listInput<
  const F extends readonly [string, ...string[]],
  const St extends readonly [string, ...string[]],
  Own extends z.ZodRawShape,
>(kind: DocumentKind, decl: { sortFields: F; statuses: St; leadFilter?: string | undefined; own: Own }) {
  return z.strictObject({
    ...listParams(decl.sortFields),
    status: z.enum(decl.statuses).optional().describe(`Only ${kind}s in this status`),
    lead_id: objectId('lead')
      .optional()
      .describe(decl.leadFilter ?? `Only ${kind}s of this lead`),
    ...decl.own,
  });
}
type ListInput<
  F extends readonly [string, ...string[]],
  St extends readonly [string, ...string[]],
  Own extends z.ZodRawShape,
> = ReturnType<typeof listInput<F, St, Own>>;

/** The tools a document kind builds from its spec. */
export function documentTools<K extends DocumentKind, Row extends RecordRow, S extends z.ZodType>(
  kind: K,
  records: RecordTable<Row>,
  serialize: (row: Row) => z.input<S>,
  schema: S,
) {
  const spec = { records, serialize, ...documentAnswer(kind, schema) };
  type Rec = z.input<S>;
  const idInput = z.strictObject(documentIdShape(kind));
  return {
    /** The answer of get, create, update and the moves: `{ <kind>: record }`. */
    output: spec.output,

    /**
     * list_<kind>s: the organization's live documents. The input is the list parameters, then
     * `status` and `lead_id`, then the area's own filters (`own`, applied by `filters`).
     */
    list<
      const F extends readonly [string, ...string[]],
      const St extends readonly [string, ...string[]],
      Own extends z.ZodRawShape,
      LO extends z.ZodType,
    >(decl: {
      title: string;
      description: string;
      sortFields: F;
      sortColumns: Readonly<Record<F[number], SortColumn>>;
      statuses: St;
      /** How the lead filter reads: `Only proposals to this lead`; default `Only <kind>s of this lead`. */
      leadFilter?: string;
      own: Own;
      output: LO;
      access: ToolAccess;
      columns: { status: PgColumn; leadId: PgColumn };
      /** The area's own filters, after status and lead. */
      filters?(input: z.output<ListInput<F, St, Own>>): SQL[];
      match(text: string): TextMatch | null;
      /** One page; `orgId` is the caller's organization (for a total read without counting). */
      page(
        db: Executor,
        input: z.output<ListInput<F, St, Own>>,
        query: ListQuery<F[number]>,
        orgId: string,
      ): Promise<z.input<LO>>;
    }) {
      const input = listInput(kind, decl);
      return defineTool({
        name: `list_${kind}s` as const,
        title: decl.title,
        description: decl.description,
        input,
        output: decl.output,
        access: decl.access,
        toolset: 'billing',
        async handler(params, { db, auth }) {
          const conditions = spec.records.liveConditions(auth.orgId);
          const { status, lead_id }: { status?: unknown; lead_id?: unknown } = params;
          if (status) conditions.push(eq(decl.columns.status, status));
          if (lead_id) conditions.push(eq(decl.columns.leadId, lead_id));
          conditions.push(...(decl.filters?.(params) ?? []));
          return decl.page(
            db,
            params,
            { conditions, sortColumns: decl.sortColumns, match: decl.match },
            auth.orgId,
          );
        },
      });
    },

    /** get_<kind>: one live document by id. */
    get(decl: ToolDeclaration) {
      return defineTool({
        name: `get_${kind}` as const,
        ...decl,
        input: idInput,
        output: spec.output,
        toolset: 'billing',
        async handler(input, { db, auth }) {
          return spec.answer(spec.serialize(await spec.records.getLive(db, auth.orgId, input.id)));
        },
      });
    },

    /** create_<kind>: a new draft. */
    create<I extends ToolInputSchema>(
      decl: ToolDeclaration & {
        input: I;
        create(ctx: ToolContext, input: z.output<I>): Promise<Rec>;
      },
    ) {
      return defineTool({
        name: `create_${kind}` as const,
        title: decl.title,
        errors: [{ code: 'not_found', when: 'lead_id names no live lead of the organization' }],
        description: decl.description,
        input: decl.input,
        output: spec.output,
        access: decl.access,
        toolset: 'billing',
        async handler(input, ctx) {
          return spec.answer(await decl.create(ctx, input));
        },
      });
    },

    /** update_<kind>: the fields sent of a draft; any other state is the 400 invalid_transition. */
    update<I extends ToolInputSchema>(
      decl: ToolDeclaration & {
        input: I;
        update(ctx: ToolContext, id: string, changes: Omit<z.output<I>, 'id'>): Promise<Rec>;
      },
    ) {
      return defineTool({
        name: `update_${kind}` as const,
        title: decl.title,
        description: decl.description,
        input: decl.input,
        output: spec.output,
        access: decl.access,
        errors: [{ code: 'invalid_transition', when: `the ${kind} is no longer a draft` }],
        annotations: { idempotentHint: true },
        toolset: 'billing',
        async handler(input: z.output<I> & { id: string }, ctx) {
          const { id, ...changes } = input;
          return spec.answer(await decl.update(ctx, id, changes));
        },
      });
    },

    /** A move of one document by id (finalize, accept, void, expire...), answered with the document. */
    move<const N extends string>(
      decl: ToolDeclaration & {
        name: N;
        errors: readonly ToolError[];
        annotations?: Partial<ToolAnnotations>;
        move(ctx: ToolContext, id: string): Promise<Rec>;
      },
    ) {
      return defineTool({
        name: decl.name,
        title: decl.title,
        description: decl.description,
        input: idInput,
        output: spec.output,
        access: decl.access,
        errors: decl.errors,
        ...(decl.annotations ? { annotations: decl.annotations } : {}),
        toolset: 'billing',
        async handler(input, ctx) {
          return spec.answer(await decl.move(ctx, input.id));
        },
      });
    },

    /** delete_<kind>: a draft for good; any other state is the 400 invalid_transition. */
    remove(decl: {
      /** The resource as the answer names it: `Invoice` -> "Invoice deleted". */
      label: string;
      description: string;
      access: ToolAccess;
      deleteDraft(ctx: RecordContext, id: string): Promise<void>;
    }) {
      return defineTool({
        name: `delete_${kind}` as const,
        title: `Delete a draft ${kind}`,
        description: decl.description,
        input: idInput,
        output: messageOutput,
        access: decl.access,
        errors: [{ code: 'invalid_transition', when: `the ${kind} is no longer a draft` }],
        annotations: { destructiveHint: true },
        toolset: 'billing',
        async handler(input, ctx) {
          await decl.deleteDraft(ctx, input.id);
          return { message: `${decl.label} deleted` };
        },
      });
    },
  };
}

/** The input fields of a priced document (an invoice, an estimate), in its own words. */
function pricedInputFields(words: {
  noun: 'invoice' | 'estimate';
  /** What the contact is to it: `bill`, `address`. */
  contactRole: string;
  /** What the deal is to it: `invoiced`, `estimated`. */
  dealRole: string;
  /** What sets the issue date when empty: `finalize`, `sending`. */
  issuedBy: string;
}) {
  const { noun } = words;
  return {
    lead: documentLeadField,
    contact: objectId('contact')
      .nullable()
      .describe(`Id of a live contact of the ${noun}'s lead to ${words.contactRole}; null for none`),
    opportunity: objectId('opportunity')
      .nullable()
      .describe(`Id of a live opportunity of the ${noun}'s lead being ${words.dealRole}; null for none`),
    issueDate: dateString('Issue date')
      .nullable()
      .describe(`Issue date (YYYY-MM-DD); null clears it (${words.issuedBy} sets today when empty)`),
    notes: z
      .string()
      .max(10_000)
      .refine(NO_NUL, nulMessage)
      .nullable()
      .describe(`Free-text notes printed on the ${noun}, at most 10000 characters; null clears them`),
  };
}

/**
 * The create and update bodies of a priced document: the shared fields in their order, the
 * document's own references on create after opportunity_id (`createRefs`), its own date after
 * issue_date (`dated`, optional in both).
 */
function pricedInputs<R extends z.ZodRawShape, D extends z.ZodRawShape>(spec: {
  kind: 'invoice' | 'estimate';
  fields: ReturnType<typeof pricedInputFields>;
  /** What lead_id does on update: `Bills another live lead; …`. */
  leadChange: string;
  createRefs: R;
  dated: D;
}) {
  const { fields } = spec;
  return {
    create: z.strictObject({
      lead_id: fields.lead,
      contact_id: fields.contact.optional(),
      opportunity_id: fields.opportunity.optional(),
      ...spec.createRefs,
      currency: currencyField,
      issue_date: fields.issueDate.optional(),
      ...spec.dated,
      line_items: lineItemsInput,
      notes: fields.notes.optional(),
    }),
    update: z.strictObject({
      ...documentIdShape(spec.kind),
      lead_id: fields.lead.optional().describe(spec.leadChange),
      contact_id: fields.contact.optional(),
      opportunity_id: fields.opportunity.optional(),
      currency: currencyField.optional(),
      issue_date: fields.issueDate.optional(),
      ...spec.dated,
      line_items: lineItemsInput.optional().describe('Replaces every line (1-500 lines)'),
      notes: fields.notes.optional(),
    }),
  };
}

/**
 * The preview of a document's send (the `confirm` convention): who it leaves from, to one
 * recipient, no copies, at once.
 */
export async function documentSendPreview(
  ctx: ToolContext,
  preview: Pick<SendPreview, 'action' | 'subject' | 'amounts' | 'attachments' | 'details'> & { to: string },
): Promise<SendPreview> {
  return {
    action: preview.action,
    sender: await documentSenderLabel(ctx),
    to: [preview.to],
    cc: [],
    bcc: [],
    subject: preview.subject,
    amounts: preview.amounts,
    send_at: null,
    attachments: preview.attachments,
    details: preview.details,
  };
}

/** The first line of the sender's message, as a preview shows it. */
function messageDetails(message: string | undefined): string[] {
  return message ? [`Message: ${message.split('\n')[0] ?? ''}`] : [];
}

/**
 * What get_<kind>_pdf answers: the file as a summary (its bytes only over REST), the number and
 * status it prints, and the REST path answering the file itself.
 */
async function documentPdfAnswer<N, S>(
  ctx: Pick<ToolContext, 'surface'>,
  doc: { kind: DocumentKind; id: string; number: N; status: S; filename: string; render(): Promise<Buffer> },
) {
  const pdf = await doc.render();
  return {
    ...fileOutput(pdf, { filename: doc.filename, contentType: 'application/pdf' }, ctx.surface),
    number: doc.number,
    status: doc.status,
    download_path: `/api/v1/${doc.kind}s/${doc.id}/pdf`,
  };
}

/** The issue date range filter of a priced document's list (both ends inclusive). */
function issueDateRange(plural: 'invoices' | 'estimates') {
  return {
    issue_date_from: dateString(`Only ${plural} issued on or after this date`).optional(),
    issue_date_to: dateString(`Only ${plural} issued on or before this date`).optional(),
  };
}

/** The conditions of issueDateRange. */
function issueDateFilters(
  column: PgColumn,
  input: { issue_date_from?: string | undefined; issue_date_to?: string | undefined },
): SQL[] {
  const conditions: SQL[] = [];
  if (input.issue_date_from) conditions.push(gte(column, input.issue_date_from));
  if (input.issue_date_to) conditions.push(lte(column, input.issue_date_to));
  return conditions;
}

/** The sort columns a priced document's list shares: its times, its issue date (nulls last), its total. */
function pricedSortColumns(t: {
  createdAt: PgColumn;
  updatedAt: PgColumn;
  issueDate: PgColumn;
  totalMinor: PgColumn;
}) {
  return {
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    issue_date: { column: t.issueDate, nullsLast: true },
    total: t.totalMinor,
  } as const;
}

/**
 * What an invoice's and an estimate's tools take of the kit beside documentTools, as one face: the
 * input fields and bodies, the list's sort columns and issue-date range, the send preview and the
 * PDF summary.
 */
export const pricedTools = {
  inputFields: pricedInputFields,
  inputs: pricedInputs,
  sortColumns: pricedSortColumns,
  issueDateRange,
  issueDateFilters,
  sendPreview: documentSendPreview,
  messageDetails,
  pdfAnswer: documentPdfAnswer,
};
