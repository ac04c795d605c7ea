// A survey's summary from its questions and the answers of its responses, as a pure computation
// (docs/areas/surveys.md "Summary"): the response rate (responses / views of the public form, in
// percent, one decimal, null before any view), and per question how many answered it, the count of
// each option or score, the average score (two decimals) and for NPS questions the Net Promoter
// Score: % promoters (9-10) minus % detractors (0-6) of those who answered, one decimal.
import { z } from 'zod';
import { scoresOf } from './questions.ts';
import { QUESTION_TYPES, type StoredAnswer, type StoredQuestion } from './tables.ts';

/** How many of the latest text answers a summary shows. */
const LATEST_TEXT_ANSWERS = 5;

const countSchema = z
  .object({
    value: z.string().describe('The option, or the score as text'),
    count: z.number().int().describe('How many responses chose it'),
  })
  .describe('One option or score and how many chose it');

const questionSummarySchema = z
  .object({
    id: z.string().describe('The question id'),
    type: z.enum(QUESTION_TYPES).describe('The question type'),
    text: z.string().describe('The question'),
    answered: z.number().int().describe('Responses that answered it'),
    skipped: z.number().int().describe('Responses that left it unanswered'),
    counts: z
      .array(countSchema)
      .optional()
      .describe('Per option (choice questions, in option order) or per score (nps, rating, ascending)'),
    average: z
      .number()
      .nullable()
      .optional()
      .describe('Mean score of nps and rating questions, two decimals; null when none answered'),
    nps: z
      .object({
        score: z
          .number()
          .nullable()
          .describe('% promoters - % detractors, -100 to 100, one decimal; null when none answered'),
        promoters: z.number().int().describe('Answers of 9 or 10'),
        passives: z.number().int().describe('Answers of 7 or 8'),
        detractors: z.number().int().describe('Answers of 0 to 6'),
      })
      .optional()
      .describe('The Net Promoter Score of an nps question'),
    latest: z
      .array(z.string())
      .optional()
      .describe(`The latest text answers, newest first (at most ${LATEST_TEXT_ANSWERS})`),
  })
  .describe('The answers to one question, counted');

export const summarySchema = z
  .object({
    survey_id: z.string().describe('The survey'),
    status: z.string().describe('Its status'),
    views: z.number().int().describe('How many times its public form was shown while active'),
    responses: z.number().int().describe('How many responses it has'),
    response_rate: z
      .number()
      .nullable()
      .describe(
        'responses / views in percent, one decimal (may pass 100 when answers arrive as JSON without a view); null before any view',
      ),
    questions: z.array(questionSummarySchema).describe('One entry per question, in form order'),
  })
  .describe("A survey's responses, counted");
export type SurveySummary = z.output<typeof summarySchema>;
type QuestionSummary = z.output<typeof questionSummarySchema>;

/** Rounded half away from zero to `digits` decimals. */
function roundTo(value: number, digits: number): number {
  const factor = 10 ** digits;
  return (Math.sign(value) * Math.round(Math.abs(value) * factor)) / factor;
}

function scoreSummary(
  q: StoredQuestion,
  values: number[],
): Pick<QuestionSummary, 'counts' | 'average' | 'nps'> {
  const counts = scoresOf(q).map((score) => ({
    value: String(score),
    count: values.filter((v) => v === score).length,
  }));
  const average = values.length === 0 ? null : roundTo(values.reduce((a, b) => a + b, 0) / values.length, 2);
  if (q.type !== 'nps') return { counts, average };
  const promoters = values.filter((v) => v >= 9).length;
  const detractors = values.filter((v) => v <= 6).length;
  const passives = values.length - promoters - detractors;
  const score = values.length === 0 ? null : roundTo(((promoters - detractors) / values.length) * 100, 1);
  return { counts, average, nps: { score, promoters, passives, detractors } };
}

function questionSummary(q: StoredQuestion, all: readonly Record<string, StoredAnswer>[]): QuestionSummary {
  const given = all.flatMap((answers) => (Object.hasOwn(answers, q.id) ? [answers[q.id]] : []));
  const base = {
    id: q.id,
    type: q.type,
    text: q.text,
    answered: given.length,
    skipped: all.length - given.length,
  };
  switch (q.type) {
    case 'nps':
    case 'rating':
      return {
        ...base,
        ...scoreSummary(
          q,
          given.filter((v): v is number => typeof v === 'number'),
        ),
      };
    case 'single_choice':
    case 'multiple_choice': {
      const chosen = given.flatMap((v) => (Array.isArray(v) ? v : typeof v === 'string' ? [v] : []));
      const counts = (q.options ?? []).map((option) => ({
        value: option,
        count: chosen.filter((c) => c === option).length,
      }));
      return { ...base, counts };
    }
    case 'text':
      return {
        ...base,
        latest: given.filter((v): v is string => typeof v === 'string').slice(0, LATEST_TEXT_ANSWERS),
      };
  }
}

/** The summary of a survey; `answers` are its responses' answers, newest first. */
export function summarize(
  survey: { id: string; status: string; questions: readonly StoredQuestion[]; views: number },
  answers: readonly Record<string, StoredAnswer>[],
): SurveySummary {
  return {
    survey_id: survey.id,
    status: survey.status,
    views: survey.views,
    responses: answers.length,
    response_rate: survey.views === 0 ? null : roundTo((answers.length / survey.views) * 100, 1),
    questions: survey.questions.map((q) => questionSummary(q, answers)),
  };
}
