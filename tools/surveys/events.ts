// The event the surveys area emits, with its payload: `form.submitted` when a response to a
// survey's public form is recorded (in the same transaction), naming the survey, the response, its
// answers, the e-mail given and the lead whose live contact has that e-mail. The schema documents
// the webhooks section of the OpenAPI document, and the declaration merging below makes `emit`
// check the payload at compile time.
import { z } from 'zod';
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';
import { answersSchema } from './questions.ts';

export const surveysEvents = {
  'form.submitted': z
    .object({
      survey_id: z.string().describe('The survey answered'),
      survey_name: z.string().describe('Its name when the response arrived'),
      response_id: z.string().describe('The response recorded (see list_survey_responses)'),
      answers: answersSchema,
      email: z.string().nullable().describe('The e-mail the respondent gave, or null'),
      lead_id: z
        .string()
        .nullable()
        .describe('The lead whose live contact has that e-mail (case-insensitive), or null when none'),
      contact_id: z.string().nullable().describe('That contact, or null when none'),
      submitted_at: z.string().describe('When the response was recorded (ISO 8601)'),
    })
    .describe('A response submitted on the public form of a survey'),
} satisfies EventSchemas;

type SurveysEvents = PayloadsOf<typeof surveysEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends SurveysEvents {}
}
