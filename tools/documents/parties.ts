// The document kit: who a document (an invoice, an estimate) is from and to, as its PDF prints them: the organization
// as seller (with the system mail address), the lead as buyer with the contact it is addressed to
// (contacts' mailableContact: its own contact with an e-mail, else the lead's oldest with one).
// And how a document a user sends goes out (documentSender): from the user's own verified
// connected account when there is one, else as system mail answered to the user.
import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../core/db/client.ts';
import { users } from '../../core/db/schema.ts';
import { type MailDelivery, parseSenderAddress } from '../../core/mail.ts';
import { organizationName } from '../../core/organizations.ts';
import type { PdfParty } from '../../core/pdf.ts';
import { defaultAccountOf } from '../connected-accounts/store.ts';
import { mailableContact } from '../contacts/store.ts';
import { leadNameOf } from '../leads/store.ts';

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
  const leadName = await leadNameOf(db, doc.orgId, doc.leadId);
  const contact = await mailableContact(db, doc.orgId, doc.leadId, doc.contactId);
  const sender = parseSenderAddress(mailFrom)?.address;
  return {
    seller: { name: orgName ?? 'Seller', lines: sender ? [sender] : [] },
    buyer: { name: leadName ?? 'Customer', lines: contact ? [contact.name, contact.email] : [] },
  };
}

/**
 * How a document mail goes out: `accountId` set, through that connected account (From its address,
 * on its SMTP server); else the system mailer with `replyTo` the sending user's address, so the
 * client's answer reaches the salesperson, not the system mailbox.
 */
export interface DocumentSender {
  accountId: string | null;
  replyTo: string | undefined;
  /** The connected account's address, when it goes out through one. */
  accountEmail: string | undefined;
}

/**
 * The sender of a document `userId` sends (an invoice, an estimate, a proposal's link): their most
 * recently verified connected account, as a salesperson expects their mail to leave; otherwise
 * system mail with their address as Reply-To. An unverified or failing account is never used: only
 * a verified one has proved it can log in (docs/billing.md "Who a document comes from").
 */
export async function documentSender(db: Executor, orgId: string, userId: string): Promise<DocumentSender> {
  // The user's most recently verified account comes first; an unverified one is never used.
  const account = await defaultAccountOf(db, orgId, userId);
  if (account?.status === 'verified')
    return { accountId: account.id, replyTo: undefined, accountEmail: account.email };
  const [user] = await db
    .select({ email: users.email })
    .from(users)
    .where(and(eq(users.id, userId), eq(users.orgId, orgId), isNull(users.deletedAt)))
    .limit(1);
  return { accountId: null, replyTo: user?.email, accountEmail: undefined };
}

/**
 * The sender a preview names (the `confirm` convention): the connected account's address the
 * document would leave from, or the system sender with the address replies go to.
 */
export async function documentSenderLabel(ctx: {
  db: Executor;
  auth: { orgId: string; userId: string };
  services: { config: { mailFrom: string } };
}): Promise<string> {
  const sender = await documentSender(ctx.db, ctx.auth.orgId, ctx.auth.userId);
  if (sender.accountEmail) return `${sender.accountEmail} (your connected account)`;
  const from = ctx.services.config.mailFrom;
  return sender.replyTo ? `${from} (system mail; replies go to ${sender.replyTo})` : from;
}

/**
 * How a document mail is delivered, as a send answers it: through a connected account it always
 * reaches an SMTP server; as system mail it is `file` while SMTP_URL is unset (written under
 * DATA_DIR/mail only).
 */
export function documentDelivery(sender: DocumentSender, systemDelivery: MailDelivery): MailDelivery {
  return sender.accountId ? 'smtp' : systemDelivery;
}
