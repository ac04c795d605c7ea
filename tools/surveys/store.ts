// The surveys store: the record shape, create and edit (the questions frozen once the survey is
// active), the status machine draft -> active -> closed with its public form token (32 random
// bytes, base64url; the SHA-256 for the lookup, the token itself sealed by the secrets port so the
// link can be shown again), the responses (one per e-mail when the survey says so, race-safe by a
// unique index; linked to the lead whose live contact has the e-mail; `form.submitted` in the same
// transaction), the list of responses and the trash entry, on the record helper (core/records.ts).
import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import { AppError } from '../../core/errors.ts';
import type { Emit } from '../../core/events.ts';
import { newId } from '../../core/ids.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  type ListParams,
  newRecordStamp,
  type PagedList,
  type RecordContext,
  type SortColumn,
  sameValue,
} from '../../core/records.ts';
import { offsetOf, type Page } from '../../core/schemas.ts';
import type { SecretBox } from '../../core/secrets.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import type { TrashType } from '../../core/trash.ts';
import { liveContactWithAddress } from '../contacts/lookups.ts';
import { answersSchema, normalizeQuestions, type QuestionInput, questionSchema } from './questions.ts';
import {
  type StoredAnswer,
  type SurveyResponseRow,
  type SurveyRow,
  surveyResponses,
  surveys,
} from './tables.ts';

export const SURVEY_STATUSES = ['draft', 'active', 'closed'] as const;
export type SurveyStatus = (typeof SURVEY_STATUSES)[number];

/**
 * draft -> active (`POST /surveys/{id}/activate`: needs a question, freezes them, opens the public
 * form) -> closed (`POST /surveys/{id}/close`: the form refuses responses). No event of their own:
 * the specification's catalogue names none for surveys.
 */
export const surveyStatusMachine = defineStateMachine({
  resource: 'survey',
  field: 'status',
  states: SURVEY_STATUSES,
  initial: 'draft',
  moves: { draft: { active: null }, active: { closed: null } },
});

export const surveySchema = z
  .object({
    _id: z.string().describe('Survey id (24 hex characters)'),
    name: z.string().describe('Name of the survey'),
    description: z
      .string()
      .nullable()
      .describe('What the survey is about, shown above the form; null when none'),
    questions: z.array(questionSchema).describe('The questions in form order'),
    thank_you_message: z
      .string()
      .nullable()
      .describe('Shown to a respondent after a response; null for the default message'),
    one_response_per_email: z
      .boolean()
      .describe(
        'When true every response needs an e-mail, and a second one for the same e-mail is refused (409)',
      ),
    status: surveyStatusMachine.schema.describe('draft (editable), active (public form open) or closed'),
    public_url: z
      .string()
      .nullable()
      .describe('Link to the public form (PUBLIC_BASE_URL/s/{token}) once activated; null while draft'),
    activated_at: z.string().nullable().describe('When it was activated (ISO 8601), or null'),
    closed_at: z.string().nullable().describe('When it was closed (ISO 8601), or null'),
    ...auditFields('survey'),
  })
  .describe('A survey');
export type SurveyRecord = z.output<typeof surveySchema>;

/** How a survey's public link is read back: the base URL and the secrets port that sealed its token. */
export interface SurveyLinks {
  baseUrl: string;
  secrets: SecretBox;
}

const tokenContext = (id: string) => `surveys.public_token:${id}`;

/** The public form's link, or null while there is none (a draft) or when it cannot be shown here. */
function publicUrlOf(row: SurveyRow, links: SurveyLinks | null): string | null {
  if (links === null || row.publicTokenSealed === null) return null;
  return `${links.baseUrl}/s/${links.secrets.decryptSecret(row.publicTokenSealed, tokenContext(row.id))}`;
}

export function serializeSurvey(row: SurveyRow, links: SurveyLinks | null): SurveyRecord {
  return {
    _id: row.id,
    name: row.name,
    description: row.description,
    questions: row.questions,
    thank_you_message: row.thankYouMessage,
    one_response_per_email: row.onePerEmail,
    status: surveyStatusMachine.parse(row.status),
    public_url: publicUrlOf(row, links),
    activated_at: row.activatedAt?.toISOString() ?? null,
    closed_at: row.closedAt?.toISOString() ?? null,
    ...auditValues(row),
  };
}

/** The surveys table on the record helper: lookups, lists, trash and restore. */
export const surveyRecords = defineRecordTable<SurveyRow>({
  label: 'Survey',
  table: surveys,
  select: (db) => db.select().from(surveys).$dynamic(),
  update: (db, set, where) => db.update(surveys).set(set).where(where).returning(),
});

export interface SurveyInput {
  name: string;
  description?: string | null | undefined;
  questions?: QuestionInput[] | undefined;
  thank_you_message?: string | null | undefined;
  one_response_per_email?: boolean | undefined;
}

/** Creates a draft survey. */
export async function insertSurvey(ctx: RecordContext, input: SurveyInput): Promise<SurveyRow> {
  const [row] = await ctx.db
    .insert(surveys)
    .values({
      ...newRecordStamp(ctx),
      name: input.name,
      description: input.description ?? null,
      questions: normalizeQuestions(input.questions ?? []),
      thankYouMessage: input.thank_you_message ?? null,
      onePerEmail: input.one_response_per_email ?? false,
    })
    .returning();
  if (!row) throw new Error('insert returned no survey');
  return row;
}

/** What an active or closed survey no longer lets change: what its responses were given against. */
function frozen(field: string): AppError {
  const message = `${field} cannot change once the survey is activated (create a new survey instead)`;
  return new AppError('invalid_operation', {
    message,
    details: [{ field, message, code: 'frozen' }],
  });
}

/**
 * Changes the fields sent of a live survey (null clears description and thank_you_message). The
 * questions and one_response_per_email change only while it is a draft: sending them unchanged
 * is accepted later (a PUT of the whole record), changing them is the 400 `invalid_operation`.
 */
export async function writeSurvey(
  ctx: RecordContext,
  id: string,
  changes: Partial<SurveyInput>,
): Promise<SurveyRow> {
  const before = await surveyRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const draft = before.status === 'draft';
  const questions = changes.questions === undefined ? undefined : normalizeQuestions(changes.questions);
  if (questions !== undefined && !draft && !sameValue(questions, before.questions)) throw frozen('questions');
  const onePerEmail = changes.one_response_per_email;
  if (onePerEmail !== undefined && !draft && onePerEmail !== before.onePerEmail) {
    throw frozen('one_response_per_email');
  }
  return surveyRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    ...(changes.description !== undefined ? { description: changes.description } : {}),
    ...(changes.thank_you_message !== undefined ? { thankYouMessage: changes.thank_you_message } : {}),
    ...(questions !== undefined && draft ? { questions } : {}),
    ...(onePerEmail !== undefined && draft ? { onePerEmail } : {}),
    updatedAt: ctx.now,
  });
}

// ---------------------------------------------------------------------------------------------
// Status moves and the public token

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Activates a draft: it needs at least one question (400 naming `questions`); a new public token
 * (32 random bytes, base64url) is made, its hash stored for the lookup and the token sealed.
 * Activating an active survey changes nothing (a same-state move); a closed one is refused.
 */
export async function activateSurvey(ctx: RecordContext, secrets: SecretBox, id: string): Promise<SurveyRow> {
  const before = await surveyRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const from = surveyStatusMachine.parse(before.status);
  surveyStatusMachine.assertMove(from, 'active');
  if (from === 'active') return before;
  if (before.questions.length === 0) {
    throw new AppError('validation_failed', {
      message: 'A survey needs at least one question to be activated',
      details: [{ field: 'questions', message: 'must hold at least one question', code: 'too_small' }],
    });
  }
  const token = randomBytes(32).toString('base64url');
  return surveyRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    status: 'active',
    publicTokenHash: hashToken(token),
    publicTokenSealed: secrets.encryptSecret(token, tokenContext(before.id)),
    activatedAt: ctx.now,
    updatedAt: ctx.now,
  });
}

/** Closes an active survey: its form then shows "closed" and refuses responses. Closing a closed one changes nothing. */
export async function closeSurvey(ctx: RecordContext, id: string): Promise<SurveyRow> {
  const before = await surveyRecords.getLive(ctx.db, ctx.auth.orgId, id, true);
  const from = surveyStatusMachine.parse(before.status);
  surveyStatusMachine.assertMove(from, 'closed');
  if (from === 'closed') return before;
  return surveyRecords.write(ctx.db, ctx.auth.orgId, before.id, {
    status: 'closed',
    closedAt: ctx.now,
    updatedAt: ctx.now,
  });
}

/**
 * The live survey a public token opens, read with system access (the token is the only
 * credential): null for a malformed or unknown token, or a survey in the trash.
 */
export async function findByToken(system: Executor, token: string): Promise<SurveyRow | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const [row] = await system
    .select()
    .from(surveys)
    .where(and(eq(surveys.publicTokenHash, hashToken(token)), isNull(surveys.deletedAt)))
    .limit(1);
  return row ?? null;
}

/**
 * The live survey a response is written to, share-locked for the rest of the transaction: a close
 * (which locks it for update) either waits for the response to commit or has committed before it,
 * and is then seen here. Null when it went to the trash meanwhile.
 */
export async function surveyForResponse(db: Executor, orgId: string, id: string): Promise<SurveyRow | null> {
  const [row] = await db
    .select()
    .from(surveys)
    .where(and(eq(surveys.orgId, orgId), eq(surveys.id, id), isNull(surveys.deletedAt)))
    .limit(1)
    .for('share');
  return row ?? null;
}

/** Counts one showing of the public form (the response rate's denominator). */
export async function countView(db: Executor, orgId: string, id: string): Promise<void> {
  await db
    .update(surveys)
    .set({ viewCount: sql`${surveys.viewCount} + 1` })
    .where(and(eq(surveys.orgId, orgId), eq(surveys.id, id)));
}

// ---------------------------------------------------------------------------------------------
// Responses

export const responseSchema = z
  .object({
    _id: z.string().describe('Response id (24 hex characters)'),
    survey_id: z.string().describe('The survey answered'),
    answers: answersSchema,
    email: z.string().nullable().describe('The e-mail the respondent gave, or null'),
    lead_id: z
      .string()
      .nullable()
      .describe('The lead whose live contact had that e-mail when the response arrived, or null'),
    contact_id: z.string().nullable().describe('That contact, or null'),
    created_at: z.string().describe('When the response was recorded (ISO 8601)'),
  })
  .describe('One response to a survey');
export type SurveyResponseRecord = z.output<typeof responseSchema>;

function serializeResponse(row: SurveyResponseRow): SurveyResponseRecord {
  return {
    _id: row.id,
    survey_id: row.surveyId,
    answers: row.answers,
    email: row.email,
    lead_id: row.leadId,
    contact_id: row.contactId,
    created_at: row.createdAt.toISOString(),
  };
}

/** What the public form's transaction offers: the survey's tenant transaction and its outbox. */
export interface PublicResponseContext {
  db: Executor;
  orgId: string;
  now: Date;
  emit: Emit;
}

/**
 * Records a response to an active survey (answers already checked against its questions) and emits
 * `form.submitted` in the same transaction. On a survey taking one response per e-mail, the
 * lower-cased e-mail goes to the unique index: a second response for it, even a concurrent one,
 * inserts nothing and is the 409. The lead is the one whose live contact has the e-mail.
 */
export async function insertResponse(
  ctx: PublicResponseContext,
  survey: SurveyRow,
  answers: Record<string, StoredAnswer>,
  email: string | null,
): Promise<SurveyResponseRow> {
  const link = email === null ? null : await liveContactWithAddress(ctx.db, ctx.orgId, email);
  const [row] = await ctx.db
    .insert(surveyResponses)
    .values({
      id: newId(ctx.now),
      orgId: ctx.orgId,
      surveyId: survey.id,
      answers,
      email,
      emailKey: survey.onePerEmail && email !== null ? email.toLowerCase() : null,
      leadId: link?.leadId ?? null,
      contactId: link?.contactId ?? null,
      createdAt: ctx.now,
    })
    .onConflictDoNothing()
    .returning();
  if (!row) {
    const message = 'A response was already recorded for this e-mail';
    throw new AppError('conflict', {
      error: 'Already responded',
      message,
      details: [{ field: 'email', message, code: 'duplicate' }],
    });
  }
  await ctx.emit('form.submitted', {
    survey_id: survey.id,
    survey_name: survey.name,
    response_id: row.id,
    answers: row.answers,
    email: row.email,
    lead_id: row.leadId,
    contact_id: row.contactId,
    submitted_at: row.createdAt.toISOString(),
  });
  return row;
}

/** The responses of a live survey (404 otherwise), newest first. */
export async function listResponsesPage(
  db: Executor,
  orgId: string,
  surveyId: string,
  page: Page,
): Promise<PagedList<'responses', SurveyResponseRecord>> {
  const survey = await surveyRecords.getLive(db, orgId, surveyId);
  const where = and(eq(surveyResponses.orgId, orgId), eq(surveyResponses.surveyId, survey.id));
  const [counted] = await db.select({ n: sql<number>`count(*)::int` }).from(surveyResponses).where(where);
  const total = Number(counted?.n ?? 0);
  const rows = await db
    .select()
    .from(surveyResponses)
    .where(where)
    .orderBy(desc(surveyResponses.createdAt), desc(surveyResponses.id))
    .limit(page.limit)
    .offset(offsetOf(page));
  return {
    responses: rows.map(serializeResponse),
    total,
    page: page.page,
    limit: page.limit,
    totalPages: Math.ceil(total / page.limit),
  };
}

/** Every answer object of a survey's responses, newest first (the summary reads them). */
export async function answersOfSurvey(
  db: Executor,
  orgId: string,
  surveyId: string,
): Promise<Record<string, StoredAnswer>[]> {
  const rows = await db
    .select({ answers: surveyResponses.answers })
    .from(surveyResponses)
    .where(and(eq(surveyResponses.orgId, orgId), eq(surveyResponses.surveyId, surveyId)))
    .orderBy(desc(surveyResponses.createdAt), desc(surveyResponses.id));
  return rows.map((r) => r.answers);
}

// ---------------------------------------------------------------------------------------------
// The list and the trash

const SORT_COLUMNS: Record<'name' | 'created_at' | 'updated_at', SortColumn> = {
  name: surveys.name,
  created_at: surveys.createdAt,
  updated_at: surveys.updatedAt,
};

/** The organization's live surveys, newest first; `status` filters, `search` matches words in the name. */
export function listSurveysPage(
  db: Executor,
  orgId: string,
  params: ListParams & { status?: SurveyStatus | undefined },
  links: SurveyLinks,
): Promise<PagedList<'surveys', SurveyRecord>> {
  const conditions = surveyRecords.liveConditions(orgId);
  if (params.status !== undefined) conditions.push(eq(surveys.status, params.status));
  return surveyRecords.list(db, 'surveys', (row) => serializeSurvey(row, links), params, {
    conditions,
    sortColumns: SORT_COLUMNS,
    match: (search) => ({ where: sql`${surveys.name} ilike ${`%${escapeLike(search)}%`}` }),
  });
}

/** The restore answer carries no public_url (null): get_survey shows it. */
async function restoreSurvey(ctx: RecordContext, id: string): Promise<SurveyRecord> {
  const { row } = await surveyRecords.restore(ctx, id);
  return serializeSurvey(row, null);
}

/** The survey entry of the trash registry; its name is its name there. Its responses stay with it. */
export const surveyTrashTypes: readonly TrashType[] = [
  surveyRecords.trashType({
    type: 'survey',
    recordKey: 'survey',
    resource: 'content',
    schema: surveySchema,
    name: surveys.name,
    restore: restoreSurvey,
  }),
];
