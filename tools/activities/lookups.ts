// What other areas ask of a lead's activities without reading the activities table themselves
// (docs/architecture.md "Boundaries").
import { and, eq, isNull, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
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

/** Filterable activity columns by catalogue field, for a query over the leads (a smart view). */
export const ACTIVITY_QUERY_COLUMNS = {
  occurred_at: activities.occurredAt,
  user_id: activities.userId,
  contact_id: activities.contactId,
} as const;

/** The jsonb values of a custom activity, for filters on its fields. */
export const ACTIVITY_VALUES_COLUMN = activities.fields;

/**
 * The live activities of the lead `leadId` of one type (a built-in type, or the id of a custom
 * type), as the body of an EXISTS: `select 1 from activities where …`, correlated on (org_id, type,
 * lead_id) so that index serves it; the caller adds ` and <predicate>` and wraps it.
 */
export function liveActivitiesOfLead(orgId: string, leadId: SQLWrapper, type: string, builtIn: boolean): SQL {
  const typeMatch = builtIn
    ? sql`${activities.type} = ${type}::text`
    : sql`${activities.type} = 'custom' and ${activities.customActivityTypeId} = ${type}::text`;
  return sql`select 1 from ${activities} where ${activities.orgId} = ${orgId}::text and ${typeMatch} and ${activities.leadId} = ${leadId} and ${activities.deletedAt} is null`;
}
