// Lead health: the tool that scores how well a lead is being worked, 0-100, from five weighted
// factors with an explanation each. This file declares the tool; the measures and the scoring are
// store.ts.
import { z } from 'zod';
import { objectId } from '../../core/schemas.ts';
import { defineTool } from '../../core/tool.ts';
import { healthSchema, leadHealth } from './store.ts';

// ---------------------------------------------------------------------------------------------
// Tool

export const getLeadHealth = defineTool({
  name: 'get_lead_health',
  title: "Get a lead's health score",
  description:
    'Scores how well a lead is being worked, 0-100, with a grade (healthy >= 70, at_risk 40-69, critical < 40) and the five ' +
    'factors behind it: recency of activity, open opportunities and their value, overdue tasks, missed commitments and email ' +
    'engagement over 30 days. Each factor gives its weight, score (0-1), contribution (points) and an explanation; ' +
    '`recommendations` lists what to do first. Use it to decide which lead needs attention and why.',
  input: z.strictObject({ id: objectId('lead') }),
  output: z.object({ health: healthSchema }),
  access: { kind: 'read', resource: 'leads', permission: 'leads.view' },
  async handler(input, { db, auth, now }) {
    return { health: await leadHealth(db, auth.orgId, input.id, now) };
  },
});

export const leadHealthTools = [getLeadHealth];
