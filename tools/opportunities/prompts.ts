// The opportunities' MCP prompt: a weekly pipeline review of the active deals expected to close
// within a horizon (overdue ones included), grouped by stage, read through list_opportunities.
import { z } from 'zod';
import { definePrompt } from '../../core/prompts.ts';

const HORIZONS = ['7', '14', '30', '90'] as const;
const SCOPES = ['all', 'mine'] as const;

/** YYYY-MM-DD of `date` plus `days`, in UTC. */
function dayPlus(date: Date, days: number): string {
  return new Date(date.getTime() + days * 86_400_000).toISOString().slice(0, 10);
}

interface StageSummary {
  stage: string;
  deals: number;
  value_by_currency: Record<string, number>;
}

/** Deals by pipeline stage: how many, and their value per currency (values are never summed across currencies). */
function byStage(deals: readonly Record<string, unknown>[]): StageSummary[] {
  const stages = new Map<string, StageSummary>();
  for (const deal of deals) {
    const stage = typeof deal.pipeline_stage === 'string' ? deal.pipeline_stage : '(no stage)';
    const summary = stages.get(stage) ?? { stage, deals: 0, value_by_currency: {} };
    summary.deals += 1;
    const currency = typeof deal.currency === 'string' ? deal.currency : '?';
    const value = typeof deal.value === 'number' ? deal.value : 0;
    summary.value_by_currency[currency] =
      Math.round(((summary.value_by_currency[currency] ?? 0) + value) * 100) / 100;
    stages.set(stage, summary);
  }
  return [...stages.values()].sort((a, b) => b.deals - a.deals || a.stage.localeCompare(b.stage));
}

const weeklyPipelineReview = definePrompt({
  name: 'weekly_pipeline_review',
  title: 'Weekly pipeline review',
  description:
    'Reviews the active opportunities expected to close within the coming days (overdue ones included), by stage and ' +
    'close date, and asks for the deals at risk and the next step on each.',
  arguments: z.strictObject({
    horizon_days: z
      .enum(HORIZONS)
      .optional()
      .describe('How many days ahead to look: 7, 14, 30 (default) or 90'),
    scope: z
      .enum(SCOPES)
      .optional()
      .describe('all (default): every deal of the organization; mine: the deals you own'),
  }),
  reads: ['list_opportunities'],
  async build(args, ctx) {
    const horizon = Number(args.horizon_days ?? '30');
    const until = dayPlus(ctx.now, horizon);
    const answer = await ctx.read('list_opportunities', {
      status: 'active',
      expected_close_before: until,
      sort: 'expected_close_date',
      limit: 100,
      ...(args.scope === 'mine' ? { owner_id: ctx.userId } : {}),
    });
    const deals = Array.isArray(answer.opportunities)
      ? answer.opportunities.filter(
          (deal): deal is Record<string, unknown> => typeof deal === 'object' && deal !== null,
        )
      : [];
    const total = typeof answer.total === 'number' ? answer.total : deals.length;
    const today = ctx.now.toISOString().slice(0, 10);
    const whose = args.scope === 'mine' ? 'my' : "the organization's";
    return {
      description: `Pipeline review: ${whose} active deals expected to close by ${until}`,
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Review ${whose} pipeline with me. Today is ${today}. Below are the active opportunities expected to ` +
              `close by ${until} (${deals.length < total ? `the first ${deals.length} of ${total}` : `${total}`}, ` +
              'soonest first; a close date before today is overdue), grouped by stage, and each deal as the CRM ' +
              'holds it. Tell me: the total by stage, which deals are overdue or at risk (low confidence, no stage, ' +
              'close date passed), the three to focus on this week and the next step for each. Use only these records.',
          },
        },
        {
          role: 'user',
          content: { type: 'text', text: `By stage:\n${JSON.stringify(byStage(deals), null, 2)}` },
        },
        { role: 'user', content: { type: 'text', text: `Deals:\n${JSON.stringify(deals, null, 2)}` } },
      ],
    };
  },
});

export const opportunityPrompts = [weeklyPipelineReview];
