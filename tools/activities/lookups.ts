// What other areas ask of a lead's activities without reading the activities table themselves
// (docs/architecture.md "Boundaries").
import { and, eq, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { activities } from './tables.ts';

const summaryRow = z.object({
  last_at: z.coerce.date().nullable(),
  inbound: z.coerce.number(),
  outbound: z.coerce.number(),
});

export interface LeadActivitySummary {
  /** The latest activity that already happened (scheduled ones are not contact yet), or null. */
  lastAt: Date | null;
  /** E-mail activities between `since` and `now`, by direction. */
  inbound: number;
  outbound: number;
}

/** The live activities of a lead in one row: its last contact and its e-mails in a window (tools/lead-health). */
export async function summarizeLeadActivities(
  db: Executor,
  orgId: string,
  leadId: string,
  since: Date,
  now: Date,
): Promise<LeadActivitySummary> {
  const inWindow = sql`${activities.type} = 'email' and ${activities.occurredAt} >= ${since} and ${activities.occurredAt} <= ${now}`;
  const [row] = await db
    .select({
      last_at: sql<unknown>`max(${activities.occurredAt}) filter (where ${activities.occurredAt} <= ${now})`,
      inbound: sql<unknown>`count(*) filter (where ${inWindow} and ${activities.fields}->>'direction' = 'inbound')`,
      outbound: sql<unknown>`count(*) filter (where ${inWindow} and ${activities.fields}->>'direction' = 'outbound')`,
    })
    .from(activities)
    .where(and(eq(activities.orgId, orgId), eq(activities.leadId, leadId), isNull(activities.deletedAt)));
  const parsed = summaryRow.parse(row ?? { last_at: null, inbound: 0, outbound: 0 });
  return { lastAt: parsed.last_at, inbound: parsed.inbound, outbound: parsed.outbound };
}
