// Lead health: a 0-100 score of how well a lead is being worked, built from five factors. Each
// factor scores 0-1, carries a fixed weight (its share of 100) and an explanation an assistant
// can act on; the score is the sum of the factors' contributions. Four aggregate queries read
// everything, each on an (org_id, lead_id, ...) index, so the cost does not grow with the org.
// This file is the store: the shapes, the measures and the scoring; tools.ts declares the tool.
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { summarizeLeadActivities } from '../activities/lookups.ts';
import { countMissedCommitments, readMemory } from '../conversation-memory/store.ts';
import { getLiveLead } from '../leads/store.ts';
import { summarizeOpenOpportunities } from '../opportunities/lookups.ts';
import { countOverdueTasksOfLead } from '../tasks/lookups.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

const HEALTH_FACTOR_KEYS = [
  'activity_recency',
  'open_opportunities',
  'overdue_tasks',
  'missed_commitments',
  'email_engagement',
] as const;
type FactorKey = (typeof HEALTH_FACTOR_KEYS)[number];

/**
 * The factors' weights: their share of the 100 points. Recent activity matters most (a lead
 * nobody talks to goes cold whatever else is true), then a live deal and whether the lead answers
 * emails; overdue tasks and broken promises are the team's own slips, weighted a little lower.
 */
export const HEALTH_WEIGHTS: Readonly<Record<FactorKey, number>> = {
  activity_recency: 30,
  open_opportunities: 20,
  email_engagement: 20,
  overdue_tasks: 15,
  missed_commitments: 15,
};

const LABELS: Readonly<Record<FactorKey, string>> = {
  activity_recency: 'Recency of activity',
  open_opportunities: 'Open opportunities',
  overdue_tasks: 'Overdue tasks',
  missed_commitments: 'Missed commitments',
  email_engagement: 'Email engagement',
};

/** Days without activity at which recency reaches 0 (it falls linearly from 1 on the day of the activity). */
const RECENCY_ZERO_DAYS = 60;
/** Total open opportunity value at which that factor is full; one open opportunity alone scores 0.6. */
const OPPORTUNITY_VALUE_TARGET = 10_000;
/** Each overdue task or missed commitment takes this much off its factor's score. */
const OVERDUE_TASK_PENALTY = 0.25;
const MISSED_COMMITMENT_PENALTY = 0.3;
/** The window of email engagement. */
const EMAIL_WINDOW_DAYS = 30;

const GRADES = ['healthy', 'at_risk', 'critical'] as const;
type Grade = (typeof GRADES)[number];

// ---------------------------------------------------------------------------------------------
// Shapes

const factorSchema = z
  .object({
    key: z.enum(HEALTH_FACTOR_KEYS).describe('Stable factor identifier'),
    label: z.string().describe('Human-readable factor name'),
    weight: z.number().describe("The factor's share of the 100 points; the weights sum to 100"),
    score: z.number().describe('How well the lead does on this factor, 0 (bad) to 1 (good)'),
    contribution: z
      .number()
      .describe(
        'Points this factor adds to the score: weight x score, rounded to 1 decimal; they sum to the score',
      ),
    value: z
      .number()
      .nullable()
      .describe(
        'The main raw measure: days since the last activity (null when none), total value of open opportunities, overdue task count, missed commitment count, inbound emails in the window',
      ),
    measures: z
      .record(z.string(), z.number().nullable())
      .describe(
        'Every raw number behind the factor, by name (e.g. open_count, open_value, inbound, outbound)',
      ),
    explanation: z.string().describe('One sentence saying what the factor shows and what to do about it'),
  })
  .describe('One factor of the health score');

export const healthSchema = z
  .object({
    lead_id: z.string().describe('Id of the lead'),
    score: z.number().describe('Health score 0-100 (one decimal): the sum of the factor contributions'),
    grade: z.enum(GRADES).describe('healthy (score >= 70), at_risk (40 to below 70) or critical (below 40)'),
    factors: z.array(factorSchema).describe('The factors, in a fixed order'),
    recommendations: z
      .array(z.string())
      .describe('What to do first: the explanations of the weakest factors (lowest scores first, at most 3)'),
    computed_at: z.string().describe('When the score was computed (ISO 8601)'),
  })
  .describe("A lead's health score");
type Health = z.output<typeof healthSchema>;
type Factor = z.output<typeof factorSchema>;

// ---------------------------------------------------------------------------------------------
// Measures

interface HealthMeasures {
  lastActivityAt: Date | null;
  inboundEmails: number;
  outboundEmails: number;
  openOpportunities: number;
  openValue: number;
  overdueTasks: number;
  missedCommitments: number;
}

async function readMeasures(db: Executor, orgId: string, leadId: string, now: Date): Promise<HealthMeasures> {
  const since = new Date(now.getTime() - EMAIL_WINDOW_DAYS * DAY_MS);
  const act = await summarizeLeadActivities(db, orgId, leadId, since, now);
  const opp = await summarizeOpenOpportunities(db, orgId, leadId);
  const overdueTasks = await countOverdueTasksOfLead(db, orgId, leadId, now);
  const memory = await readMemory(db, orgId, leadId);
  return {
    lastActivityAt: act.lastAt,
    inboundEmails: act.inbound,
    outboundEmails: act.outbound,
    openOpportunities: opp.count,
    openValue: opp.value,
    overdueTasks,
    missedCommitments: countMissedCommitments(memory.commitments, now),
  };
}

// ---------------------------------------------------------------------------------------------
// Scoring (pure)

const round = (n: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};
const clamp01 = (n: number) => Math.min(1, Math.max(0, n));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

interface FactorDraft {
  score: number;
  value: number | null;
  measures: Record<string, number | null>;
  explanation: string;
}

function scoreRecency(m: HealthMeasures, now: Date): FactorDraft {
  if (m.lastActivityAt === null) {
    return {
      score: 0,
      value: null,
      measures: { days_since_last_activity: null },
      explanation: 'No activity logged yet: log a call, email or meeting to start working this lead.',
    };
  }
  const days = Math.max(0, Math.floor((now.getTime() - m.lastActivityAt.getTime()) / DAY_MS));
  const score = clamp01(1 - days / RECENCY_ZERO_DAYS);
  const explanation =
    days >= 14
      ? `No activity for ${plural(days, 'day')}: log a call or send an email.`
      : `Last activity ${days === 0 ? 'today' : `${plural(days, 'day')} ago`}: contact is recent, keep the cadence.`;
  return { score, value: days, measures: { days_since_last_activity: days }, explanation };
}

function scoreOpportunities(m: HealthMeasures): FactorDraft {
  const measures = { open_count: m.openOpportunities, open_value: m.openValue };
  if (m.openOpportunities === 0) {
    return {
      score: 0,
      value: 0,
      measures,
      explanation: 'No open opportunity: create one if there is a deal to pursue, or qualify the lead out.',
    };
  }
  const score = 0.6 + 0.4 * clamp01(m.openValue / OPPORTUNITY_VALUE_TARGET);
  return {
    score,
    value: m.openValue,
    measures,
    explanation: `${m.openOpportunities} open ${m.openOpportunities === 1 ? 'opportunity' : 'opportunities'} worth ${m.openValue} in total: move them to the next stage or update their confidence.`,
  };
}

function scoreOverdueTasks(m: HealthMeasures): FactorDraft {
  const n = m.overdueTasks;
  return {
    score: clamp01(1 - n * OVERDUE_TASK_PENALTY),
    value: n,
    measures: { overdue_count: n },
    explanation:
      n === 0
        ? 'No overdue tasks: follow-ups are on schedule.'
        : `${plural(n, 'overdue task')}: complete them or move their due dates.`,
  };
}

function scoreCommitments(m: HealthMeasures): FactorDraft {
  const n = m.missedCommitments;
  return {
    score: clamp01(1 - n * MISSED_COMMITMENT_PENALTY),
    value: n,
    measures: { missed_count: n },
    explanation:
      n === 0
        ? 'No missed commitments: promises made to this lead are being kept.'
        : `${plural(n, 'commitment')} missed or past due: follow up with the lead and mark each kept or missed.`,
  };
}

function scoreEmail(m: HealthMeasures): FactorDraft {
  const inbound = m.inboundEmails;
  const outbound = m.outboundEmails;
  const measures = { inbound, outbound };
  if (inbound === 0 && outbound === 0) {
    return {
      score: 0.5,
      value: 0,
      measures,
      explanation: `No emails in the last ${EMAIL_WINDOW_DAYS} days: send one to check in.`,
    };
  }
  if (inbound === 0) {
    return {
      score: 0.2,
      value: 0,
      measures,
      explanation: `${plural(outbound, 'email')} sent and no reply in the last ${EMAIL_WINDOW_DAYS} days: try a call or another contact.`,
    };
  }
  // Replies make it high: a single reply gives 0.6, a reply to every email sent gives 1.
  const score = 0.6 + 0.4 * clamp01(inbound / Math.max(outbound, 1));
  return {
    score,
    value: inbound,
    measures,
    explanation: `${plural(inbound, 'email')} received and ${outbound} sent in the last ${EMAIL_WINDOW_DAYS} days: the lead is engaged, keep replying promptly.`,
  };
}

function gradeOf(score: number): Grade {
  if (score >= 70) return 'healthy';
  if (score >= 40) return 'at_risk';
  return 'critical';
}

/** The health of a lead from its measures: pure, so the rules can be read and tested without a database. */
function computeHealth(leadId: string, m: HealthMeasures, now: Date): Health {
  const drafts: Record<FactorKey, FactorDraft> = {
    activity_recency: scoreRecency(m, now),
    open_opportunities: scoreOpportunities(m),
    overdue_tasks: scoreOverdueTasks(m),
    missed_commitments: scoreCommitments(m),
    email_engagement: scoreEmail(m),
  };
  const factors: Factor[] = HEALTH_FACTOR_KEYS.map((key) => {
    const draft = drafts[key];
    const score = round(draft.score, 3);
    const weight = HEALTH_WEIGHTS[key];
    return {
      key,
      label: LABELS[key],
      weight,
      score,
      contribution: round(weight * score, 1),
      value: draft.value,
      measures: draft.measures,
      explanation: draft.explanation,
    };
  });
  // Summed from the rounded contributions, so the parts add up to the whole exactly as shown.
  const score = round(
    factors.reduce((sum, f) => sum + f.contribution, 0),
    1,
  );
  const recommendations = factors
    .filter((f) => f.score < 1)
    .sort((a, b) => a.score - b.score || b.weight - a.weight)
    .slice(0, 3)
    .map((f) => f.explanation);
  return {
    lead_id: leadId,
    score,
    grade: gradeOf(score),
    factors,
    recommendations,
    computed_at: now.toISOString(),
  };
}

/** The health of a live lead of the organization (404 otherwise), computed now. */
export async function leadHealth(db: Executor, orgId: string, leadId: string, now: Date): Promise<Health> {
  await getLiveLead(db, orgId, leadId);
  const measures = await readMeasures(db, orgId, leadId, now);
  return computeHealth(leadId, measures, now);
}
