// What an invoice, an estimate and a proposal check of the records they name: the lead is live
// (404 "Lead not found", as for every child record), the contact is a live contact of that lead, the
// opportunity a live deal of that lead. Through the owning areas' exported store functions, never
// their tables (docs/architecture.md "What an area is").
import type { ErrorDetail } from '../../core/errors.ts';
import type { RecordContext } from '../../core/records.ts';
import { isContactOfLead } from '../contacts/store.ts';
import { leadRecords } from '../leads/store.ts';
import { isOpportunityOfLead } from '../opportunities/store.ts';

export interface DocumentReferences {
  leadId: string;
  contactId?: string | null;
  opportunityId: string | null;
}

/** Throws the 404 "Lead not found" unless the lead is live in the caller's organization. */
export async function assertLiveLead(ctx: RecordContext, leadId: string): Promise<void> {
  await leadRecords.getLive(ctx.db, ctx.auth.orgId, leadId);
}

/** What is wrong with the references (400 details), if anything. `noun` names the document. */
export async function referenceProblems(
  ctx: RecordContext,
  refs: DocumentReferences,
  noun: string,
): Promise<ErrorDetail[]> {
  const details: ErrorDetail[] = [];
  const { contactId } = refs;
  if (
    contactId !== null &&
    contactId !== undefined &&
    !(await isContactOfLead(ctx.db, ctx.auth.orgId, contactId, refs.leadId))
  ) {
    details.push({
      field: 'contact_id',
      message: `must be the id of a live contact of the ${noun}'s lead`,
      code: 'invalid_contact',
    });
  }
  if (refs.opportunityId !== null && !(await isLiveDealOf(ctx, refs.opportunityId, refs.leadId))) {
    details.push({
      field: 'opportunity_id',
      message: `must be the id of a live opportunity of the ${noun}'s lead`,
      code: 'invalid_opportunity',
    });
  }
  return details;
}

/** The references that still hold (a contact or deal trashed since is dropped): for a conversion. */
export async function keptReferences(
  ctx: RecordContext,
  refs: Required<DocumentReferences>,
): Promise<{ contactId: string | null; opportunityId: string | null }> {
  const { contactId, opportunityId, leadId } = refs;
  return {
    contactId:
      contactId !== null && (await isContactOfLead(ctx.db, ctx.auth.orgId, contactId, leadId))
        ? contactId
        : null,
    opportunityId:
      opportunityId !== null && (await isLiveDealOf(ctx, opportunityId, leadId)) ? opportunityId : null,
  };
}

function isLiveDealOf(ctx: RecordContext, opportunityId: string, leadId: string): Promise<boolean> {
  return isOpportunityOfLead(ctx.db, ctx.auth.orgId, opportunityId, leadId);
}
