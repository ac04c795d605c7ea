// A survey's questions and the answers to them, as pure rules: the question shape a caller sends
// (bounds, options only for the choice types, min/max only for rating, ids unique within the
// survey, missing ids assigned), the answers a respondent sends checked against the questions (each
// refusal a detail naming `answers.<question id>`), and the answers of an HTML form turned into the
// same object. No database here: the store and the public form build on it.
import { z } from 'zod';
import type { ErrorDetail } from '../../core/errors.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { QUESTION_TYPES, type StoredAnswer, type StoredQuestion } from './tables.ts';

const MAX_QUESTIONS = 50;
export const MAX_TEXT_ANSWER = 5000;
/**
 * A question id: a letter or digit, then letters, digits, `_` and `-`, 1-40 characters (no `.`: form
 * fields are `answers.<id>`; no leading `_`: `__proto__` is no key to store answers under).
 */
const QUESTION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const RATING_BOUNDS = { lowest: 0, highest: 10, defaultMin: 1, defaultMax: 5 } as const;
const NPS_SCORES = { lowest: 0, highest: 10 } as const;

const CHOICE_TYPES: ReadonlySet<string> = new Set(['single_choice', 'multiple_choice']);

const text = (max: number) => z.string().trim().min(1).max(max).refine(NO_NUL, nulMessage);

export const questionInputSchema = z
  .strictObject({
    id: z
      .string()
      .regex(QUESTION_ID, 'must be 1-40 letters, digits, _ or -, starting with a letter or digit')
      .optional()
      .describe(
        'Short id of the question, unique within the survey (letters, digits, _ or -, 1-40); assigned (q1, q2, ...) when left out. Answers are keyed by it.',
      ),
    type: z
      .enum(QUESTION_TYPES)
      .describe(
        'nps (a 0-10 score), rating (an integer from min to max), single_choice (one option), multiple_choice (some options) or text (free text up to 5000 characters)',
      ),
    text: text(500).describe('The question as the respondent reads it, 1-500 characters'),
    required: z.boolean().default(false).describe('Whether a response must answer it (default false)'),
    options: z
      .array(text(200).describe('One option, 1-200 characters'))
      .min(2)
      .max(20)
      .optional()
      .describe(
        'The options of a single_choice or multiple_choice question: 2-20 distinct strings; forbidden for other types',
      ),
    min: z
      .number()
      .int()
      .min(RATING_BOUNDS.lowest)
      .max(RATING_BOUNDS.highest - 1)
      .optional()
      .describe('Lowest score of a rating question (0-9, default 1); forbidden for other types'),
    max: z
      .number()
      .int()
      .min(RATING_BOUNDS.lowest + 1)
      .max(RATING_BOUNDS.highest)
      .optional()
      .describe('Highest score of a rating question (1-10, default 5, above min); forbidden for other types'),
  })
  .superRefine((q, ctx) => {
    const choice = CHOICE_TYPES.has(q.type);
    if (choice && q.options === undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: `is required for a ${q.type} question` });
    }
    if (!choice && q.options !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['options'],
        message: `is only for choice questions, not ${q.type}`,
      });
    }
    if (q.options !== undefined && new Set(q.options).size !== q.options.length) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'must be distinct' });
    }
    if (q.type !== 'rating') {
      for (const key of ['min', 'max'] as const) {
        if (q[key] !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `is only for rating questions, not ${q.type}`,
          });
        }
      }
    } else if ((q.min ?? RATING_BOUNDS.defaultMin) >= (q.max ?? RATING_BOUNDS.defaultMax)) {
      ctx.addIssue({ code: 'custom', path: ['max'], message: 'must be greater than min' });
    }
  })
  .describe('One question of the survey');

export const questionsInputSchema = z
  .array(questionInputSchema)
  .max(MAX_QUESTIONS)
  .superRefine((questions, ctx) => {
    const seen = new Set<string>();
    questions.forEach((q, i) => {
      if (q.id === undefined) return;
      if (seen.has(q.id)) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'id'],
          message: `"${q.id}" is used by an earlier question`,
        });
      }
      seen.add(q.id);
    });
  })
  .describe(
    `The questions, in the order the form shows them (at most ${MAX_QUESTIONS}); frozen once the survey is activated`,
  );

export type QuestionInput = z.output<typeof questionInputSchema>;

export const questionSchema = z
  .object({
    id: z.string().describe('Id of the question, unique within the survey; answers are keyed by it'),
    type: z.enum(QUESTION_TYPES).describe('nps, rating, single_choice, multiple_choice or text'),
    text: z.string().describe('The question as the respondent reads it'),
    required: z.boolean().describe('Whether a response must answer it'),
    options: z.array(z.string()).optional().describe('The options (choice questions only)'),
    min: z.number().int().optional().describe('Lowest score (rating questions only)'),
    max: z.number().int().optional().describe('Highest score (rating questions only)'),
  })
  .describe('One question of the survey');

export const answersSchema = z
  .record(
    z.string(),
    z
      .union([z.number(), z.string(), z.array(z.string())])
      .describe(
        'A score (nps, rating), the option chosen (single_choice), the options ticked (multiple_choice) or the text',
      ),
  )
  .describe('The answers by question id; questions left unanswered are absent');

/** The questions as stored: ids assigned where missing (q1, q2, ... skipping the ones taken), rating bounds filled in. */
export function normalizeQuestions(input: readonly QuestionInput[]): StoredQuestion[] {
  const taken = new Set(input.flatMap((q) => (q.id === undefined ? [] : [q.id])));
  let next = 1;
  const freshId = (): string => {
    while (taken.has(`q${next}`)) next++;
    const id = `q${next}`;
    taken.add(id);
    return id;
  };
  return input.map((q) => {
    const base = { id: q.id ?? freshId(), type: q.type, text: q.text, required: q.required };
    if (q.type === 'rating') {
      return { ...base, min: q.min ?? RATING_BOUNDS.defaultMin, max: q.max ?? RATING_BOUNDS.defaultMax };
    }
    return q.options === undefined ? base : { ...base, options: [...q.options] };
  });
}

/** The scores a question takes (nps 0-10, rating min..max), ascending; empty for other types. */
export function scoresOf(q: StoredQuestion): number[] {
  const [low, high] =
    q.type === 'nps'
      ? [NPS_SCORES.lowest, NPS_SCORES.highest]
      : q.type === 'rating'
        ? [q.min ?? RATING_BOUNDS.defaultMin, q.max ?? RATING_BOUNDS.defaultMax]
        : [0, -1];
  return Array.from({ length: high - low + 1 }, (_, i) => low + i);
}

/** Why one answer is refused, or null when it is accepted (`value` is present: not undefined). */
function refusalOf(q: StoredQuestion, value: unknown): string | null {
  switch (q.type) {
    case 'nps':
    case 'rating': {
      const scores = scoresOf(q);
      const [low, high] = [scores[0], scores[scores.length - 1]];
      return typeof value === 'number' && Number.isInteger(value) && scores.includes(value)
        ? null
        : `must be an integer from ${low} to ${high}`;
    }
    case 'single_choice':
      return typeof value === 'string' && (q.options ?? []).includes(value)
        ? null
        : 'must be one of the options';
    case 'multiple_choice': {
      if (!Array.isArray(value)) return 'must be a list of options';
      const options = q.options ?? [];
      if (!value.every((v) => typeof v === 'string' && options.includes(v)))
        return 'must hold only the options';
      if (new Set(value).size !== value.length) return 'must not repeat an option';
      return q.required && value.length === 0 ? 'is required: tick at least one option' : null;
    }
    case 'text': {
      if (typeof value !== 'string') return 'must be text';
      const trimmed = value.trim();
      if (trimmed.length === 0) return q.required ? 'is required' : null;
      if (trimmed.length > MAX_TEXT_ANSWER) return `must be at most ${MAX_TEXT_ANSWER} characters`;
      return NO_NUL(trimmed) ? null : nulMessage;
    }
  }
}

/**
 * The answers checked against the questions: every refusal is a detail naming `answers.<id>` (an
 * unknown id, a missing required answer, a value the type refuses). Unanswered optional questions
 * (absent, null, an empty text or an empty list of options) are left out of what is stored.
 */
export function checkAnswers(
  questions: readonly StoredQuestion[],
  answers: Readonly<Record<string, unknown>>,
): { answers: Record<string, StoredAnswer>; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const out: Record<string, StoredAnswer> = {};
  const known = new Set(questions.map((q) => q.id));
  for (const id of Object.keys(answers)) {
    if (!known.has(id)) {
      details.push({
        field: `answers.${id}`,
        message: 'is not a question of this survey',
        code: 'unknown_question',
      });
    }
  }
  for (const q of questions) {
    const field = `answers.${q.id}`;
    // Own keys only: an id such as `constructor` must not find Object.prototype's.
    const value = Object.hasOwn(answers, q.id) ? answers[q.id] : undefined;
    if (value === undefined || value === null) {
      if (q.required) details.push({ field, message: 'is required', code: 'required' });
      continue;
    }
    const refusal = refusalOf(q, value);
    if (refusal !== null) {
      details.push({
        field,
        message: refusal,
        code: refusal.startsWith('is required') ? 'required' : 'invalid_answer',
      });
      continue;
    }
    if (typeof value === 'string' && q.type === 'text') {
      if (value.trim() !== '') out[q.id] = value.trim();
    } else if (Array.isArray(value)) {
      // In the order of the options, whatever order they were sent in.
      if (value.length > 0) out[q.id] = (q.options ?? []).filter((o) => value.includes(o));
    } else if (typeof value === 'number' || typeof value === 'string') {
      out[q.id] = value;
    }
  }
  return { answers: out, details };
}

/**
 * The answers of the HTML form (tools/surveys/page.ts names its fields): `answers.<id>` for one
 * value, `answers.<id>.<n>` for the n-th option ticked of a multiple-choice question (a form body
 * keeps one value per name). Scores arrive as text and become numbers; an empty field is no
 * answer. Fields under `answers.` naming no question are kept, so checkAnswers refuses them.
 */
export function answersOfForm(
  questions: readonly StoredQuestion[],
  form: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const byId = new Map(questions.map((q) => [q.id, q]));
  // A Map, made an object at the end with own keys only (a field `answers.__proto__` stays a key).
  const out = new Map<string, unknown>();
  const ticked = new Map<string, string[]>();
  for (const q of questions) if (q.type === 'multiple_choice') ticked.set(q.id, []);
  for (const [name, raw] of Object.entries(form)) {
    const match = /^answers\.([^.]+)(?:\.(\d+))?$/.exec(name);
    if (!match || typeof raw !== 'string') continue;
    const [, id = '', n] = match;
    const q = byId.get(id);
    const list = ticked.get(id);
    if (list !== undefined) {
      if (n !== undefined) list.push(raw);
      continue;
    }
    const value = raw.trim();
    if (value === '') continue;
    const score = (q?.type === 'nps' || q?.type === 'rating') && /^-?\d{1,3}$/.test(value);
    out.set(id, score ? Number(value) : raw);
  }
  // A multiple-choice question with nothing ticked sends no field at all: an empty list then.
  for (const [id, list] of ticked) out.set(id, list);
  return Object.fromEntries(out);
}
