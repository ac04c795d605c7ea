// The surveys area's tables: one row per survey (its questions as jsonb, frozen once active; the
// SHA-256 of its public form token for the lookup and the token itself encrypted at rest, so the
// link can be shown again; a counter of form views), and one row per response (its answers as
// jsonb, the respondent's e-mail, the lead it was linked to). A response belongs to its survey: it
// goes when the survey is purged from the trash.
import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, ts, updatedAt } from '../../core/db/schema.ts';

export const QUESTION_TYPES = ['nps', 'rating', 'single_choice', 'multiple_choice', 'text'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

/** One question as stored: options only for the choice types, min/max only for rating. */
export interface StoredQuestion {
  id: string;
  type: QuestionType;
  text: string;
  required: boolean;
  options?: string[];
  min?: number;
  max?: number;
}

/** An answer as stored: a score (nps, rating), one option or a text, or the options ticked. */
export type StoredAnswer = number | string | string[];

export const surveys = pgTable(
  'surveys',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    description: text('description'),
    questions: jsonb('questions').$type<StoredQuestion[]>().notNull().default([]),
    thankYouMessage: text('thank_you_message'),
    onePerEmail: boolean('one_response_per_email').notNull().default(false),
    status: text('status').notNull().default('draft'),
    /** SHA-256 (hex) of the public form token; null until the survey is activated. */
    publicTokenHash: text('public_token_hash'),
    /** The token itself, encrypted with the secrets port (core/secrets.ts), to show the link again. */
    publicTokenSealed: text('public_token_sealed'),
    /** How many times the public form was shown while the survey was active (the response rate's denominator). */
    viewCount: integer('view_count').notNull().default(0),
    activatedAt: ts('activated_at'),
    closedAt: ts('closed_at'),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('surveys_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.deletedAt} is null`),
    index('surveys_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql`${t.deletedAt} is not null`),
    uniqueIndex('surveys_public_token_idx').on(t.publicTokenHash),
  ],
);

export type SurveyRow = typeof surveys.$inferSelect;

export const surveyResponses = pgTable(
  'survey_responses',
  {
    id: id(),
    orgId: orgId(),
    surveyId: text('survey_id')
      .notNull()
      .references(() => surveys.id, { onDelete: 'cascade' }),
    answers: jsonb('answers').$type<Record<string, StoredAnswer>>().notNull(),
    /** The e-mail as given; null when none was. */
    email: text('email'),
    /**
     * The e-mail lower-cased, set only on a survey taking one response per e-mail: the unique index
     * below then refuses a second response for it, whichever of two concurrent ones commits first.
     */
    emailKey: text('email_key'),
    /** The lead whose live contact had the e-mail when the response arrived; null when none. */
    leadId: text('lead_id'),
    contactId: text('contact_id'),
    createdAt: createdAt(),
  },
  (t) => [
    index('survey_responses_survey_created_idx').on(t.orgId, t.surveyId, t.createdAt.desc(), t.id.desc()),
    uniqueIndex('survey_responses_one_per_email_idx')
      .on(t.surveyId, t.emailKey)
      .where(sql`${t.emailKey} is not null`),
  ],
);

export type SurveyResponseRow = typeof surveyResponses.$inferSelect;
