// Locks in who a document comes from and how its names print: an invoice, an estimate and a proposal's link sent by a user with a verified connected account leave through that account's own SMTP server (From its address, logged in as it, nothing through the system mailer); without one (or with an account that is not verified) they are system mail with the sender's address as Reply-To; and the PDFs attached name Ελληνική ΑΕ, Łódź Trading and 株式会社 exactly (read back with pdftotext).
import type { ParsedMail } from 'mailparser';
import { describe, expect } from 'vitest';
import { InProcessQueue } from '../../core/queue-in-process.ts';
import {
  type Caller,
  createContact,
  createEstimate,
  createInvoice,
  createLead,
  createProposal,
  createTestContext,
  fileTest,
  insertConnectedAccount,
  readOutput,
  sendProposal,
  type TestContext,
  TOOL,
} from '../fixtures/index.ts';
import { hasPoppler, pdfText } from '../support/poppler.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

const LOGIN = { username: 'dee-login', password: 'smtp-secret-1' };
const SELLER_ADDRESS = 'dee@sales.example';
const NAMES = ['Ελληνική ΑΕ', 'Łódź Trading', '株式会社'];

const CONTACT_EMAIL = 'yamada@lodz.example';

/** A file fixture: an SMTP peer (the options of startSmtpPeer), closed after the file's last test. */
function smtpPeer(options?: Parameters<typeof startSmtpPeer>[0]) {
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the peer has none.
  return async ({}, { onCleanup }: { onCleanup: (cleanup: () => Promise<void>) => void }) => {
    const peer = await startSmtpPeer(options);
    onCleanup(() => peer.close());
    return peer;
  };
}

// The system mailer's server (SMTP_URL, so `t` is overridden to read it) and the seller's own server
// (their connected account); the members who send, and the lead and contact the documents are for.
const test = fileTest()
  .extend('system', { scope: 'file' }, smtpPeer())
  .extend('own', { scope: 'file' }, smtpPeer({ auth: LOGIN }))
  .extend('senders', { scope: 'file' }, async ({ t, org, own }) => {
    /** A member with a verified connected account. */
    const seller = await t.createUser(org.orgId, 'member');
    await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: seller.userId },
      { host: own.host, port: own.port, ...LOGIN },
      { email: SELLER_ADDRESS, displayName: 'Dee Sales' },
    );
    /** A member without any account. */
    const plain = await t.createUser(org.orgId, 'member');
    /** A member whose only account failed its verification. */
    const lapsed = await t.createUser(org.orgId, 'member');
    await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: lapsed.userId },
      { host: own.host, port: own.port, ...LOGIN },
      { email: 'lapsed@sales.example', status: 'error' },
    );
    return { seller, plain, lapsed };
  })
  .extend('deal', { scope: 'file' }, async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Łódź Trading' });
    const contact = await createContact(t, org, {
      lead_id: lead._id,
      name: '株式会社 山田',
      emails: [{ email: CONTACT_EMAIL, type: 'work' }],
    });
    return { leadId: lead._id, contactId: contact._id };
  });
test.override('t', { scope: 'file' }, async ({ system }, { onCleanup }) => {
  const t = await createTestContext(
    { SMTP_URL: system.url, MAIL_FROM: 'CRM Billing <billing@crm.example>' },
    { withWorkers: true, withoutRateLimits: true },
  );
  onCleanup(() => t.close());
  return t;
});
test.override('org', { scope: 'file' }, async ({ t }) => t.createOrg({ name: 'Ελληνική ΑΕ', plan: 'pro' }));

async function workersIdle(t: TestContext): Promise<void> {
  const jobs = t.services.jobs;
  if (!(jobs instanceof InProcessQueue)) throw new Error('these tests drive the in-process queue');
  await jobs.idle();
}

function withSubject(peer: SmtpPeer, subject: string): ParsedMail[] {
  return peer.received.filter((mail) => mail.subject === subject);
}

const address = (field: ParsedMail['from'] | ParsedMail['replyTo']) => field?.value[0]?.address;

async function attachedText(mail: ParsedMail | undefined): Promise<string> {
  const pdf = mail?.attachments[0];
  expect(pdf?.contentType).toBe('application/pdf');
  return pdfText(pdf?.content ?? Buffer.alloc(0));
}

describe('who a document comes from', () => {
  test.skipIf(!hasPoppler)(
    "an invoice sent by a user with a verified account leaves through the account's server, its PDF naming every party as written",
    async ({ t, system, own, senders: { seller }, deal: { leadId, contactId } }) => {
      const invoice = await createInvoice(t, seller, {
        lead_id: leadId,
        contact_id: contactId,
        currency: 'EUR',
        line_items: [{ description: 'Projekt 設計', quantity: 1, unit_price: 48000 }],
      });
      const sent = await readOutput(
        await t.request('POST', `/api/v1/invoices/${invoice._id}/send`, { token: seller.token, body: {} }),
        TOOL.send_invoice,
      );
      const subject = sent.mail?.subject ?? '';
      await workersIdle(t);

      const [mail, ...more] = withSubject(own, subject);
      expect(more).toHaveLength(0);
      expect(withSubject(system, subject)).toHaveLength(0);
      expect(address(mail?.from)).toBe(SELLER_ADDRESS);
      expect(mail?.from?.text).toContain('Dee Sales');
      expect(mail?.replyTo).toBeUndefined();
      expect(mail?.messageId).toMatch(/@sales\.example>$/);
      expect(own.logins).toContain(LOGIN.username);
      expect(own.envelopes.at(-1)?.to).toEqual([CONTACT_EMAIL]);

      const text = await attachedText(mail);
      for (const name of [...NAMES, 'Projekt 設計', 'EUR 48,000.00']) expect(text).toContain(name);
    },
  );

  test.skipIf(!hasPoppler)(
    'an estimate sent without a verified account is system mail answered to the sender, its PDF naming every party as written',
    async ({ t, system, own, senders: { plain, lapsed }, deal: { leadId, contactId } }) => {
      for (const sender of [plain, lapsed]) {
        const estimate = await createEstimate(t, sender, {
          lead_id: leadId,
          contact_id: contactId,
          currency: 'JPY',
          line_items: [{ description: 'コンサルティング', quantity: 2, unit_price: 150000 }],
        });
        const sent = await readOutput(
          await t.request('POST', `/api/v1/estimates/${estimate._id}/send`, {
            token: sender.token,
            body: {},
          }),
          TOOL.send_estimate,
        );
        const subject = sent.mail?.subject ?? '';
        await workersIdle(t);

        const [mail, ...more] = withSubject(system, subject);
        expect(more).toHaveLength(0);
        expect(withSubject(own, subject)).toHaveLength(0);
        expect(address(mail?.from)).toBe('billing@crm.example');
        expect(address(mail?.replyTo)).toBe(sender.email);

        const text = await attachedText(mail);
        for (const name of [...NAMES, 'コンサルティング', 'JPY 300,000']) expect(text).toContain(name);
      }
    },
  );

  test('a preview (confirm: false) names the sender the mail would leave from', async ({
    t,
    senders: { seller, plain },
    deal: { leadId, contactId },
  }) => {
    const invoice = await createInvoice(t, seller, {
      lead_id: leadId,
      contact_id: contactId,
      currency: 'EUR',
    });
    const previewOf = async (caller: Caller) =>
      readOutput(
        await t.request('POST', `/api/v1/invoices/${invoice._id}/send`, {
          token: caller.token,
          body: { confirm: false },
        }),
        TOOL.send_invoice,
      );
    const bySeller = await previewOf(seller);
    expect(bySeller.sent).toBe(false);
    expect(bySeller.preview?.sender).toContain(SELLER_ADDRESS);
    const byPlain = await previewOf(plain);
    expect(byPlain.preview?.sender).toContain('billing@crm.example');
    expect(byPlain.preview?.sender).toContain(plain.email);
  });

  test("a proposal's link leaves through the sender's verified account, and as system mail answered to a sender without one", async ({
    t,
    system,
    own,
    senders: { seller, plain },
    deal: { leadId },
  }) => {
    const bySeller = await createProposal(t, seller, { lead_id: leadId, title: 'Proposal for Łódź' });
    await sendProposal(t, seller, bySeller._id);
    const byPlain = await createProposal(t, plain, { lead_id: leadId, title: 'Another proposal for Łódź' });
    await sendProposal(t, plain, byPlain._id);
    await workersIdle(t);

    const [fromAccount] = withSubject(own, 'Proposal: Proposal for Łódź');
    expect(address(fromAccount?.from)).toBe(SELLER_ADDRESS);
    expect(withSubject(system, 'Proposal: Proposal for Łódź')).toHaveLength(0);
    const [fromSystem] = withSubject(system, 'Proposal: Another proposal for Łódź');
    expect(address(fromSystem?.from)).toBe('billing@crm.example');
    expect(address(fromSystem?.replyTo)).toBe(plain.email);
    expect(withSubject(own, 'Proposal: Another proposal for Łódź')).toHaveLength(0);
  });
});
