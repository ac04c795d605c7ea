// Discovery questions for a proposal (POST /proposal-ai/{id}/suggest-questions). With a model
// configured (core/ai.ts) it is asked with the proposal, its lead, the lead's contacts and the open
// commitments of the conversation memory, told to use those facts only, and its JSON answer is
// validated; without a model, or when the model fails or answers outside the shape, a rule set
// derives questions from what is missing (budget, decision maker, timeline, unpriced sections, the
// deal). Reads only: nothing is written and no event is emitted.
import { z } from 'zod';
import { type ChatMessage, type ChatModel, jsonObjectIn } from '../../core/ai.ts';
import type { Executor } from '../../core/db/client.ts';
import type { Logger } from '../../core/logger.ts';
import { namesOfLiveContactsOfLead } from '../contacts/lookups.ts';
import { readMemory } from '../conversation-memory/store.ts';
import { leadRecords } from '../leads/store.ts';
import { saleFactsOfOpportunity } from '../opportunities/lookups.ts';
import { type ProposalRecord, proposalRecords, serializeProposal } from './store.ts';

const MAX_QUESTIONS = 10;

const questionSchema = z
  .object({
    question: z.string().describe('The question to ask the lead'),
    reason: z.string().describe('Why it is worth asking: the gap or fact it comes from'),
  })
  .describe('One suggested discovery question');

export const suggestionsSchema = z.object({
  questions: z.array(questionSchema).describe(`The suggested questions, at most ${MAX_QUESTIONS}`),
  source: z
    .enum(['model', 'rules'])
    .describe('model: written by the configured model; rules: derived from what the proposal is missing'),
});
export type Suggestions = z.output<typeof suggestionsSchema>;

/** What the model must answer; anything else falls back to the rules. */
const modelAnswerSchema = z.object({
  questions: z
    .array(
      z.object({
        question: z.string().trim().min(1).max(500),
        reason: z.string().trim().min(1).max(1000),
      }),
    )
    .min(1),
});

export interface QuestionContext {
  proposal: ProposalRecord;
  lead: { name: string; status: string; description: string | null };
  contacts: { name: string; title: string | null }[];
  opportunity: {
    note: string | null;
    value: number;
    currency: string;
    status: string;
    expected_close_date: string | null;
  } | null;
  open_commitments: { text: string; due_at: string | null }[];
}

/** Words of a job title that usually mean someone who can sign or approve a purchase. */
const DECISION_TITLES =
  /\b(ceo|cfo|coo|cto|cio|owner|founder|co-founder|president|chief|director|head|vp|vice president|partner|principal|managing|gm|general manager|procurement|purchasing)\b/i;

export async function loadContext(db: Executor, orgId: string, id: string): Promise<QuestionContext> {
  const row = await proposalRecords.getLive(db, orgId, id);
  const lead = await leadRecords.getLive(db, orgId, row.leadId);
  const people = await namesOfLiveContactsOfLead(db, orgId, row.leadId, 50);
  let opportunity: QuestionContext['opportunity'] = null;
  if (row.opportunityId !== null) {
    const deal = await saleFactsOfOpportunity(db, orgId, row.opportunityId);
    if (deal) {
      opportunity = {
        note: deal.note,
        value: deal.value,
        currency: deal.currency,
        status: deal.status,
        expected_close_date: deal.expectedCloseDate,
      };
    }
  }
  const memory = await readMemory(db, orgId, row.leadId);
  return {
    proposal: serializeProposal(row),
    lead: { name: lead.name, status: lead.status, description: lead.description },
    contacts: people,
    opportunity,
    open_commitments: memory.commitments
      .filter((c) => c.status === 'open')
      .map((c) => ({ text: c.text, due_at: c.due_at })),
  };
}

/** The words of a text, lowercased, 4+ letters (to tell whether a section heading is priced). */
function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []);
}

/** Questions for what the proposal and its lead do not yet say. Never states a fact it was not given. */
function ruleQuestions(ctx: QuestionContext): Suggestions['questions'] {
  const { proposal } = ctx;
  const questions: Suggestions['questions'] = [];
  if (proposal.line_items.length === 0) {
    questions.push({
      question: 'What budget has been set aside for this, and who controls it?',
      reason: 'The proposal has no priced lines, so no budget or total has been discussed in it.',
    });
  } else {
    const priced = words(proposal.line_items.map((l) => l.description).join(' '));
    const unpriced = proposal.sections.filter((s) => {
      const own = words(s.heading);
      return own.size > 0 && ![...own].some((w) => priced.has(w));
    });
    for (const section of unpriced.slice(0, 3)) {
      questions.push({
        question: `How would you expect "${section.heading}" to be priced or scoped?`,
        reason: `The section "${section.heading}" matches no priced line of the proposal.`,
      });
    }
  }
  const deciders = ctx.contacts.filter((c) => c.title !== null && DECISION_TITLES.test(c.title));
  if (deciders.length === 0) {
    questions.push({
      question: 'Who else is involved in the decision, and who gives the final approval?',
      reason:
        ctx.contacts.length === 0
          ? `No contact of ${ctx.lead.name} is recorded.`
          : `None of the recorded contacts of ${ctx.lead.name} has a title that suggests a decision maker.`,
    });
  }
  if (proposal.valid_until === null) {
    questions.push({
      question: 'By when do you need to have this decided, and when should the work start?',
      reason: 'The proposal has no valid-until date, so no timeline is set.',
    });
  }
  if (proposal.opportunity_id === null) {
    questions.push({
      question: 'What would make this a priority for you this quarter?',
      reason: 'The proposal is not linked to an opportunity, so no expected value or close date is known.',
    });
  } else if (ctx.opportunity && ctx.opportunity.expected_close_date === null) {
    questions.push({
      question: 'When do you expect to make the final decision?',
      reason: 'The linked opportunity has no expected close date.',
    });
  }
  if (questions.length === 0) {
    questions.push({
      question: 'Is there anything missing from this proposal that you need before deciding?',
      reason:
        'The proposal states prices, a decision maker, a timeline and a deal; this checks for the rest.',
    });
  }
  return questions.slice(0, MAX_QUESTIONS);
}

const SYSTEM_PROMPT = [
  'You help a salesperson prepare discovery questions before a proposal is sent.',
  'Use only the facts in the JSON you are given; never invent names, numbers, dates or needs.',
  'Ask about what is missing or unclear: budget, decision makers, timeline, unpriced scope, open commitments.',
  `Answer with one JSON object only: {"questions": [{"question": "...", "reason": "..."}]}, 3 to ${MAX_QUESTIONS} questions,`,
  'each reason naming the fact or gap of the given data it comes from.',
].join(' ');

/** The messages sent to the model: the instructions, then the facts as JSON. */
function modelMessages(ctx: QuestionContext): ChatMessage[] {
  const facts = {
    proposal: {
      title: ctx.proposal.title,
      status: ctx.proposal.status,
      valid_until: ctx.proposal.valid_until,
      currency: ctx.proposal.currency,
      total: ctx.proposal.total,
      sections: ctx.proposal.sections.map((s) => ({
        heading: s.heading,
        // Long bodies are cut: the model needs the gist, and the request stays bounded.
        body_markdown: s.body_markdown.slice(0, 2000),
      })),
      line_items: ctx.proposal.line_items.map((l) => ({
        description: l.description,
        quantity: l.quantity,
        unit_price: l.unit_price,
        amount: l.amount,
      })),
    },
    lead: ctx.lead,
    contacts: ctx.contacts,
    opportunity: ctx.opportunity,
    open_commitments: ctx.open_commitments,
  };
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: JSON.stringify(facts) },
  ];
}

/** The model's questions, or null when it failed or answered outside the shape (logged). */
async function askModel(
  model: ChatModel,
  ctx: QuestionContext,
  logger: Logger,
): Promise<Suggestions['questions'] | null> {
  try {
    const text = await model.complete(modelMessages(ctx), { json: true });
    const parsed = modelAnswerSchema.safeParse(jsonObjectIn(text));
    if (!parsed.success) {
      logger.warn({ model: model.model }, 'model answer is not the questions object; using the rules');
      return null;
    }
    return parsed.data.questions.slice(0, MAX_QUESTIONS);
  } catch (err) {
    logger.warn(
      { model: model.model, err: err instanceof Error ? err.message : String(err) },
      'model call failed; using the rules',
    );
    return null;
  }
}

export async function suggestQuestions(
  ctx: QuestionContext,
  model: ChatModel | null,
  logger: Logger,
): Promise<Suggestions> {
  if (model !== null) {
    const questions = await askModel(model, ctx, logger);
    if (questions !== null) return { questions, source: 'model' };
  }
  return { questions: ruleQuestions(ctx), source: 'rules' };
}
