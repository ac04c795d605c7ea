// Who a document (an invoice, an estimate) is from and to, as its PDF prints them: the organization
// as seller (with the system mail address), the lead as buyer with the contact it is addressed to
// (contacts' mailableContact: its own contact with an e-mail, else the lead's oldest with one).
import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { parseSenderAddress } from '../../core/mail.ts';
import { organizationName } from '../../core/organizations.ts';
import type { PdfParty } from '../../core/pdf.ts';
import { mailableContact } from '../contacts/store.ts';
import { leads } from '../leads/tables.ts';

export interface DocumentRef {
  orgId: string;
  leadId: string;
  contactId: string | null;
}

export async function documentParties(
  db: Executor,
  doc: DocumentRef,
  mailFrom: string,
): Promise<{ seller: PdfParty; buyer: PdfParty }> {
  const orgName = await organizationName(db, doc.orgId);
  const [lead] = await db
    .select({ name: leads.name })
    .from(leads)
    .where(and(eq(leads.id, doc.leadId), eq(leads.orgId, doc.orgId)));
  const contact = await mailableContact(db, doc.orgId, doc.leadId, doc.contactId);
  const sender = parseSenderAddress(mailFrom)?.address;
  return {
    seller: { name: orgName ?? 'Seller', lines: sender ? [sender] : [] },
    buyer: { name: lead?.name ?? 'Customer', lines: contact ? [contact.name, contact.email] : [] },
  };
}
