// Proposal tools: list, get, create, update and delete drafts, send (a link to the public page),
// and suggest discovery questions. The data functions, the record shape and the status machine are
// in store.ts; the public page in page.ts and public.ts; the questions in questions.ts.
import { z } from 'zod';
import { confirmShape, sendResultShape } from '../../core/confirm.ts';
import { currencyField, lineItemsInput } from '../../core/line-items.ts';
import { queuedMailSchema } from '../../core/mail-outbox.ts';
import { prefixMatch } from '../../core/records.ts';
import { dateString, objectId, pagedOutput } from '../../core/schemas.ts';
import { describeMoves } from '../../core/state-machine.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import {
  documentIdShape,
  documentLeadField,
  documentSendPreview,
  documentTools,
} from '../documents/document-tools.ts';
import { deliverProposal } from './mail.ts';
import { loadContext, suggestionsSchema, suggestQuestions } from './questions.ts';
import {
  announceSent,
  deleteDraft,
  expireNow,
  insertProposal,
  markSent,
  PROPOSAL_STATUSES,
  type ProposalData,
  patchProposal,
  planSend,
  proposalRecords,
  proposalSchema,
  proposalStatusMachine,
  serializeProposal,
} from './store.ts';
import { proposals } from './tables.ts';

// ---------------------------------------------------------------------------------------------
// Input fields

const leadIdField = documentLeadField;
const opportunityIdField = objectId('opportunity')
  .nullable()
  .describe("Id of a live opportunity of the proposal's lead; null for none");
const titleField = z
  .string()
  .trim()
  .min(1)
  .max(300)
  .refine(NO_NUL, nulMessage)
  .describe('Title shown on the public page and in the mail subject, 1-300 characters');
const sectionInput = z.strictObject({
  heading: z
    .string()
    .trim()
    .min(1)
    .max(300)
    .refine(NO_NUL, nulMessage)
    .describe('Section heading, 1-300 characters'),
  body_markdown: z
    .string()
    .max(50_000)
    .refine(NO_NUL, nulMessage)
    .describe(
      'Section body in Markdown, at most 50000 characters; raw HTML is shown as text, links only http(s) and mailto, no images',
    ),
});
const sectionsField = z
  .array(sectionInput)
  .min(1)
  .max(50)
  .describe('The sections of the proposal, in order, 1-50');
const linesField = lineItemsInput
  .nullable()
  .describe('Priced lines (1-500; currency is then required); null or absent for an unpriced proposal');
const currencyInput = currencyField
  .nullable()
  .describe('ISO 4217 currency code of the lines; required when line_items are given');
const validUntilField = dateString('Last day it may be accepted')
  .nullable()
  .describe('Last day it may be accepted (YYYY-MM-DD); the daily job expires it afterwards; null clears it');

const proposalIdShape = documentIdShape('proposal');

const createProposalInput = z.strictObject({
  lead_id: leadIdField,
  opportunity_id: opportunityIdField.optional(),
  title: titleField,
  sections: sectionsField,
  line_items: linesField.optional(),
  currency: currencyInput.optional(),
  valid_until: validUntilField.optional(),
});

const updateProposalInput = z.strictObject({
  ...proposalIdShape,
  lead_id: leadIdField
    .optional()
    .describe('Addresses another live lead; its opportunity must then belong to it'),
  opportunity_id: opportunityIdField.optional(),
  title: titleField.optional(),
  sections: sectionsField.optional().describe('Replaces every section (1-50)'),
  line_items: linesField.optional().describe('Replaces every line (1-500); null removes the prices'),
  currency: currencyInput.optional(),
  valid_until: validUntilField.optional(),
});

// ---------------------------------------------------------------------------------------------
// Tools

type ProposalPermission = 'proposals.view' | 'proposals.create' | 'proposals.edit' | 'proposals.delete';
const access = (kind: 'read' | 'write', permission: ProposalPermission) =>
  ({ kind, resource: 'proposals', permission }) as const;

const MOVES = describeMoves(proposalStatusMachine);
const proposalTool = documentTools(
  'proposal',
  proposalRecords,
  (row: ProposalData) => serializeProposal(row),
  proposalSchema,
);

const listProposals = proposalTool.list({
  title: 'List proposals',
  description:
    'Lists the proposals of the organization, newest first by default. Filter by `status` (draft/sent/accepted/declined/' +
    'expired) and `lead_id`; `search` matches words at the start of words in the title. Paginated: returns `proposals` ' +
    'plus `total`, `page`, `limit`, `totalPages`; `limit` is 1-100 (default 25).',
  sortFields: ['created_at', 'updated_at', 'title', 'valid_until', 'total'],
  sortColumns: {
    created_at: proposals.createdAt,
    updated_at: proposals.updatedAt,
    title: proposals.title,
    valid_until: { column: proposals.validUntil, nullsLast: true },
    total: { column: proposals.totalMinor, nullsLast: true },
  },
  statuses: PROPOSAL_STATUSES,
  leadFilter: 'Only proposals to this lead',
  own: {},
  output: pagedOutput('proposals', proposalSchema),
  access: access('read', 'proposals.view'),
  columns: proposals,
  match: (text) => prefixMatch(proposals.search, text),
  page: (db, input, query) =>
    proposalRecords.list(db, 'proposals', (row) => serializeProposal(row), input, query),
});

const getProposal = proposalTool.get({
  title: 'Get a proposal',
  description:
    'Returns one proposal by id with its sections, priced lines and totals (when it has lines), status, and who accepted ' +
    'or declined it. The public link is not shown again after send (the token is stored hashed). Find ids with list_proposals.',
  access: access('read', 'proposals.view'),
});

const createProposal = proposalTool.create({
  title: 'Create a proposal',
  description:
    'Creates a draft proposal for a live lead: `title` and `sections` ([{heading, body_markdown}], 1-50) are required; ' +
    'optional `line_items` ({description, quantity, unit_price, discount_percent?, tax_percent?}, then `currency` is ' +
    'required), `opportunity_id` (of the same lead) and `valid_until`. Returns it with totals when priced. Send it with ' +
    'send_proposal.',
  input: createProposalInput,
  access: access('write', 'proposals.create'),
  create: insertProposal,
});

const updateProposal = proposalTool.update({
  title: 'Update a draft proposal',
  description:
    'Changes only the fields sent of a draft proposal and returns it; a field sent as null is cleared, sections and ' +
    'line_items replace the whole list. A sent, accepted, declined or expired proposal is frozen: 400 invalid_transition.',
  input: updateProposalInput,
  access: access('write', 'proposals.edit'),
  update: patchProposal,
});

const deleteProposal = proposalTool.remove({
  label: 'Proposal',
  description:
    'Deletes a draft proposal for good (it was never sent). A sent or answered proposal is kept as the record of what ' +
    'the lead saw and signed: 400 invalid_transition.',
  access: access('write', 'proposals.delete'),
  deleteDraft,
});

export const sendProposal = defineTool({
  name: 'send_proposal',
  title: 'Send a proposal',
  description: `Mails the client a link to the public page of a draft or sent proposal (to \`to\`, else the first e-mail of the lead's contacts) and returns \`public_url\`; the proposal becomes sent. Each send issues a new link and the previous one stops working. The moves: ${MOVES}.`,
  input: z.strictObject({
    ...proposalIdShape,
    to: z
      .email()
      .max(320)
      .optional()
      .describe("Recipient e-mail; default the first e-mail of the lead's contacts"),
    ...confirmShape,
  }),
  output: z.object({
    ...sendResultShape,
    proposal: proposalSchema.optional().describe('The proposal after sending (absent in a preview)'),
    public_url: z
      .string()
      .optional()
      .describe('The public page link (shown only here: it is stored hashed); absent in a preview'),
    mail: queuedMailSchema.optional(),
  }),
  access: access('write', 'proposals.edit'),
  errors: [
    { code: 'invalid_transition', when: 'the proposal is accepted, declined or expired' },
    { code: 'validation_failed', when: 'no recipient is known, or valid_until is in the past' },
  ],
  annotations: { openWorldHint: true, idempotentHint: false },
  toolset: 'billing',
  sends: {
    async preview(input, ctx) {
      const plan = await planSend(ctx, input.id, input.to);
      const current = serializeProposal(plan.row);
      return documentSendPreview(ctx, {
        action: `E-mail a link to the public page of proposal "${plan.row.title}" to ${plan.to}; earlier links stop working`,
        to: plan.to,
        subject: plan.subject,
        amounts:
          current.total !== null && current.currency !== null
            ? [{ label: 'total', amount: current.total, currency: current.currency }]
            : [],
        attachments: [],
        details: current.valid_until ? [`Valid until ${current.valid_until}`] : [],
      });
    },
  },
  async handler(input, ctx) {
    const plan = await planSend(ctx, input.id, input.to);
    const sent = await markSent(ctx, plan, ctx.services.config.publicBaseUrl);
    const mail = await deliverProposal(ctx, plan, sent);
    await announceSent(ctx, sent, mail.id);
    return { sent: true, proposal: sent.record, public_url: sent.publicUrl, mail };
  },
});

export const expireProposal = proposalTool.move({
  name: 'expire_proposal',
  title: 'Withdraw a proposal',
  description:
    'Withdraws a draft or sent proposal now: it becomes expired and its public link stops accepting answers (the daily ' +
    'job does the same past valid_until). Expiring an expired proposal again changes nothing; an accepted or declined ' +
    'proposal cannot expire (400 invalid_transition).',
  access: access('write', 'proposals.edit'),
  errors: [{ code: 'invalid_transition', when: 'the proposal is accepted or declined' }],
  annotations: { destructiveHint: true, idempotentHint: true },
  move: expireNow,
});

export const suggestProposalQuestions = defineTool({
  name: 'suggest_proposal_questions',
  title: 'Suggest discovery questions for a proposal',
  description:
    'Suggests discovery questions for a proposal from its content, its lead, the lead’s contacts and the open ' +
    'commitments of the conversation memory. With a model configured the model writes them (source "model"), told to ' +
    'use those facts only; otherwise, or when the model fails, rules ask about what is missing: budget, decision ' +
    'maker, timeline, unpriced sections, the deal (source "rules"). Writes nothing.',
  input: z.strictObject(proposalIdShape),
  output: suggestionsSchema,
  access: access('read', 'proposals.view'),
  // A configured model is an outside service the proposal's facts are sent to.
  annotations: { openWorldHint: true },
  toolset: 'billing',
  // The model's answer may take seconds: asked outside the request's transaction.
  async outside(input, { read, auth, services }) {
    const context = await read((db) => loadContext(db, auth.orgId, input.id));
    return suggestQuestions(context, services.ai, services.logger);
  },
  async handler(_input, { outside }) {
    return outside;
  },
});

export const proposalTools = [
  listProposals,
  getProposal,
  createProposal,
  updateProposal,
  deleteProposal,
  sendProposal,
  expireProposal,
  suggestProposalQuestions,
];
