// The steps of a workflow: what a client sends (input, with every bound) and what the API shows
// (output). A step is an email, a task or an sms, each after a delay counted from the step before it
// (from the enrollment for the first). Bounds: a delay is 0..365 of its unit, whatever the unit
// (0 = at once; up to 365 minutes, 365 hours or 365 days), so the longest wait between two steps is
// a year (docs/email.md "Workflows").
import { z } from 'zod';
import { NO_NUL, nulMessage, ONE_LINE, oneLineMessage } from '../../core/text-rules.ts';
import type { StoredWorkflowStep } from './tables.ts';

const STEP_TYPES = ['email', 'task', 'sms'] as const;
const DELAY_UNITS = ['minutes', 'hours', 'days'] as const;
const MAX_DELAY_AMOUNT = 365;
const MAX_STEPS = 50;

const text = (min: number, max: number, what: string) =>
  z.string().min(min).max(max).refine(NO_NUL, nulMessage).describe(what);

const delayShape = (what: string) =>
  z
    .strictObject({
      amount: z.number().int().min(0).max(MAX_DELAY_AMOUNT).describe('0 = at once'),
      unit: z.enum(DELAY_UNITS).describe('minutes, hours or days'),
    })
    .describe(what);

const delayField = delayShape('Wait after the previous step (or enrollment)');

const emailStepInput = z
  .strictObject({
    type: z.literal('email').describe('Send an e-mail to the enrolled contact'),
    delay: delayField,
    subject: text(1, 500, 'Subject, 1-500 characters on one line').refine(ONE_LINE, oneLineMessage),
    body_html: text(1, 100_000, 'HTML body, 1-100000 characters'),
    body_text: text(0, 100_000, 'Plain-text body, at most 100000 characters').optional(),
  })
  .describe('An e-mail through the enrolling user’s connected account to the enrolled contact');

const taskStepInput = z
  .strictObject({
    type: z.literal('task').describe('Create a task for the enrolling user on the lead'),
    delay: delayField,
    text: text(1, 500, 'Task text, 1-500 characters'),
    due_in: delayShape('The task is due this long after the step runs; no due date when absent').optional(),
  })
  .describe('A task for the enrolling user on the lead (task.created)');

const smsStepInput = z
  .strictObject({
    type: z.literal('sms').describe('Send a text message to the enrolled contact'),
    delay: delayField,
    body: text(1, 1600, 'Message, 1-1600 characters'),
  })
  .describe("An SMS from the organization's first SMS number; skipped while telephony is off");

export const stepInput = z
  .discriminatedUnion('type', [emailStepInput, taskStepInput, smsStepInput])
  .describe('One step: type email, task or sms, its delay, and the fields of its type');
export type StepInput = z.output<typeof stepInput>;

export const stepsInput = z
  .array(stepInput)
  .min(1)
  .max(MAX_STEPS)
  .describe(`The steps, in order, 1-${MAX_STEPS}`);

const delayOutput = z
  .object({
    amount: z.number().int().describe('How many units'),
    unit: z.enum(DELAY_UNITS).describe('minutes, hours or days'),
  })
  .describe('A delay');

export const stepSchema = z
  .object({
    type: z.enum(STEP_TYPES).describe('email, task or sms'),
    delay: delayOutput,
    subject: z.string().optional().describe('email: the subject'),
    body_html: z.string().optional().describe('email: the HTML body'),
    body_text: z.string().optional().describe('email: the plain-text body'),
    text: z.string().optional().describe('task: the task text'),
    due_in: delayOutput.optional().describe('task: when the task is due after the step runs'),
    body: z.string().optional().describe('sms: the message'),
  })
  .describe('One step of the workflow');
export type StepRecord = z.output<typeof stepSchema>;

/** The stored form of a step is its input as sent (optional fields left out). */
export function storeSteps(steps: readonly StepInput[]): StoredWorkflowStep[] {
  return steps.map((step) => ({ ...step }));
}

function delayOf(value: unknown): StepRecord['delay'] {
  const parsed = delayOutput.safeParse(value);
  return parsed.success ? parsed.data : { amount: 0, unit: 'minutes' };
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** A stored step as the API shows it: only its type's fields. */
export function serializeStep(step: StoredWorkflowStep): StepRecord {
  const out: StepRecord = { type: step.type, delay: delayOf(step.delay) };
  const put = (key: 'subject' | 'body_html' | 'body_text' | 'text' | 'body') => {
    const value = str(step[key]);
    if (value !== undefined) out[key] = value;
  };
  if (step.type === 'email') {
    put('subject');
    put('body_html');
    put('body_text');
  } else if (step.type === 'task') {
    put('text');
    if (step.due_in !== undefined) out.due_in = delayOf(step.due_in);
  } else {
    put('body');
  }
  return out;
}

/** True when the workflow sends e-mail, so an enrollment needs a connected account and a contact address. */
export function hasEmailStep(steps: readonly StoredWorkflowStep[]): boolean {
  return steps.some((step) => step.type === 'email');
}
