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
    'Scores how well a lead is being worked (0-100: healthy, at_risk or critical), with the factors and recommendations. Use it to pick leads needing attention.',
  input: z.strictObject({ id: objectId('lead') }),
  output: z.object({ health: healthSchema }),
  access: { kind: 'read', resource: 'leads', permission: 'leads.view' },
  async handler(input, { db, auth, now }) {
    return { health: await leadHealth(db, auth.orgId, input.id, now) };
  },
});

export const leadHealthTools = [getLeadHealth];
