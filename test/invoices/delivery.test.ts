import { describe, expect } from 'vitest';
import { flagOverdue } from '../../tools/invoices/jobs.ts';
import {
  type Caller,
  createContact,
  createInvoice,
  createLead,
  eventsOf,
  finalizeInvoice,
  type Invoice,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { mailRowsOf, mailsTo, mailTest, workersIdle } from '../fixtures/mail-test.ts';
import { bearer, ERAS, serveMcp } from '../mcp-clients.ts';
import { hasPoppler, pdfText } from '../support/poppler.ts';

// The SMTP peer starts first and the file's context mails through it (test/fixtures/mail-test.ts).
const test = mailTest({
  env: { MAIL_FROM: 'Acme Billing <billing@acme.example>' },
  options: { withWorkers: true, withoutRateLimits: true },
});
test.override('org', { scope: 'file' }, async ({ t }) => t.createOrg({ name: 'Acme Widgets' }));

const LINES = [
  { description: 'Consulting', quantity: 2, unit_price: 1000, tax_percent: 10 },
  { description: 'Setup fee', quantity: 1, unit_price: 250.5 },
];

/** A draft for a lead with one contact e-mail. */
async function draftWithContact(
  t: TestContext,
  org: TestOrg,
  email = `ap-${Math.random().toString(36).slice(2)}@globex.example`,
) {
  const lead = await createLead(t, org, { name: 'Globex' });
  await createContact(t, org, { lead_id: lead._id, name: 'Hank Scorpio', emails: [{ email, type: 'work' }] });
  const invoice = await createInvoice(t, org, {
    lead_id: lead._id,
    currency: 'EUR',
    line_items: LINES,
    due_date: '2030-01-31',
    notes: 'Bank transfer please',
  });
  return { lead, invoice, email };
}

/** POST /invoices/{id}/send as `caller` (an organization or one of its tokens). */
const send = (t: TestContext, caller: Caller, id: string, body: Record<string, unknown> = {}) =>
  t.request('POST', `/api/v1/invoices/${id}/send`, { token: caller.token, body });

const mailRows = (t: TestContext, invoiceId: string) => mailRowsOf(t, 'invoice', invoiceId);

describe('POST /invoices/{id}/send', () => {
  test.skipIf(!hasPoppler)(
    'finalizes a draft, mails its PDF once to the contact, sets sent_at and emits invoice.sent',
    async ({ t, org, peer }) => {
      const { invoice, email } = await draftWithContact(t, org);
      const res = await send(t, org, invoice._id, { message: 'Thanks for your business!' });
      const body = await readOutput(res, TOOL.send_invoice);
      expect(body.sent).toBe(true);
      const sent = body.invoice as Invoice;
      expect(sent.status).toBe('open');
      expect(sent.number).toMatch(/^INV-\d{6}$/);
      expect(sent.sent_at).not.toBeNull();
      expect(sent.total).toBe(2450.5);
      expect(body.mail?.to).toBe(email);
      expect(body.mail?.subject).toBe(`Invoice ${sent.number} from Acme Widgets`);

      await workersIdle(t);
      const [mail, ...more] = mailsTo(peer, email);
      expect(more).toHaveLength(0);
      expect(mail?.subject).toBe(`Invoice ${sent.number} from Acme Widgets`);
      expect(mail?.text).toContain('Thanks for your business!');
      expect(mail?.text).toContain('EUR 2,450.50');
      const attachment = mail?.attachments[0];
      expect(attachment?.filename).toBe(`${sent.number}.pdf`);
      expect(attachment?.contentType).toBe('application/pdf');
      const text = await pdfText(attachment?.content ?? Buffer.alloc(0));
      expect(text).toContain(String(sent.number));
      expect(text).toContain('EUR 2,450.50');
      expect(text).toContain('Globex');
      expect(text).toContain('Acme Widgets');
      expect(text).not.toContain('DRAFT');

      const rows = await mailRows(t, invoice._id);
      expect(rows.map((r) => [r.key, r.status])).toEqual([[`invoice:${invoice._id}:send:1`, 'sent']]);
      const events = (await eventsOf(t, invoice._id, org.orgId)).filter((e) => e.event === 'invoice.sent');
      expect(events).toHaveLength(1);
      expect(events[0]?.data).toMatchObject({ number: sent.number, sent_to: email, mail_id: rows[0]?.id });
    },
  );

  test('sends to `to` when given, and a resend is a second mail', async ({ t, org, peer }) => {
    const { invoice, email } = await draftWithContact(t, org);
    const first = await readOutput(
      await send(t, org, invoice._id, { to: 'cfo@globex.example' }),
      TOOL.send_invoice,
    );
    expect(first.mail?.to).toBe('cfo@globex.example');
    const again = await readOutput(await send(t, org, invoice._id), TOOL.send_invoice);
    expect(again.invoice?.number).toBe(first.invoice?.number);
    await workersIdle(t);
    expect(mailsTo(peer, 'cfo@globex.example')).toHaveLength(1);
    expect(mailsTo(peer, email)).toHaveLength(1);
    const rows = await mailRows(t, invoice._id);
    expect(rows.map((r) => r.key)).toEqual([
      `invoice:${invoice._id}:send:1`,
      `invoice:${invoice._id}:send:2`,
    ]);
    expect(
      (await eventsOf(t, invoice._id, org.orgId)).filter((e) => e.event === 'invoice.sent'),
    ).toHaveLength(2);
  });

  test("prefers the invoice contact's e-mail over the lead's first contact", async ({ t, org }) => {
    const lead = await createLead(t, org);
    await createContact(t, org, {
      lead_id: lead._id,
      emails: [{ email: 'first@globex.example', type: 'work' }],
    });
    const billed = await createContact(t, org, {
      lead_id: lead._id,
      emails: [{ email: 'billing@globex.example', type: 'work' }],
    });
    const invoice = await createInvoice(t, org, { lead_id: lead._id, contact_id: billed._id });
    const body = await readOutput(await send(t, org, invoice._id), TOOL.send_invoice);
    expect(body.mail?.to).toBe('billing@globex.example');
  });

  test('answers 400 naming `to` when there is no address, and leaves the draft a draft', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org);
    await createContact(t, org, { lead_id: lead._id, name: 'No Mail' });
    const invoice = await createInvoice(t, org, { lead_id: lead._id });
    const error = await readError(await send(t, org, invoice._id), 400);
    expect(error.code).toBe('validation_failed');
    expect(error.details?.map((d) => d.field)).toEqual(['to']);
    const after = await readOutput(
      await t.request('GET', `/api/v1/invoices/${invoice._id}`, { token: org.token }),
      TOOL.get_invoice,
    );
    expect(after.invoice).toMatchObject({ status: 'draft', number: null, sent_at: null });
    expect(await mailRows(t, invoice._id)).toHaveLength(0);
    const bad = await readError(await send(t, org, invoice._id, { to: 'not an address' }), 400);
    expect(bad.details?.map((d) => d.field)).toEqual(['to']);
  });

  test('refuses void and paid invoices with invalid_transition and queues nothing', async ({ t, org }) => {
    const { invoice } = await draftWithContact(t, org);
    await finalizeInvoice(t, org, invoice._id);
    await t.request('POST', `/api/v1/invoices/${invoice._id}/void`, { token: org.token, body: {} });
    const voided = await readError(await send(t, org, invoice._id), 400);
    expect(voided.code).toBe('invalid_transition');
    expect(voided.details?.[0]?.field).toBe('status');

    const paid = (await draftWithContact(t, org)).invoice;
    await finalizeInvoice(t, org, paid._id);
    await t.request('POST', `/api/v1/invoices/${paid._id}/payments`, {
      token: org.token,
      body: { amount: 2450.5 },
    });
    expect((await readError(await send(t, org, paid._id), 400)).code).toBe('invalid_transition');
    expect(await mailRows(t, invoice._id)).toHaveLength(0);
    expect(await mailRows(t, paid._id)).toHaveLength(0);
  });

  test('sends an uncollectible invoice (it still takes payments)', async ({ t, org }) => {
    const { invoice } = await draftWithContact(t, org);
    await finalizeInvoice(t, org, invoice._id);
    await t.request('POST', `/api/v1/invoices/${invoice._id}/mark-uncollectible`, {
      token: org.token,
      body: {},
    });
    const body = await readOutput(await send(t, org, invoice._id), TOOL.send_invoice);
    expect(body.invoice?.status).toBe('uncollectible');
  });

  test('is 404 for another organization, and needs write:invoices', async ({ t, org, other }) => {
    const { invoice } = await draftWithContact(t, org);
    expect((await readError(await send(t, other, invoice._id), 404)).code).toBe('not_found');
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:invoices']);
    expect((await send(t, reader, invoice._id)).status).toBe(403);
    const writer = await t.createPat(org.orgId, org.ownerId, ['write:invoices']);
    expect((await send(t, writer, invoice._id)).status).toBe(200);
  });
});

describe('MCP send_invoice and get_invoice_pdf', () => {
  test('previews without confirm (nothing queued), sends with confirm: true', async ({ t, org }) => {
    const { invoice, email } = await draftWithContact(t, org);
    const { url, stop } = await serveMcp(t);
    const era = ERAS[0];
    if (!era) throw new Error('no MCP client era');
    const client = await era.connect(url, { ...bearer(org.token), 'X-MCP-Toolsets': 'billing' });
    try {
      const preview = await client.callTool('send_invoice', { id: invoice._id });
      expect(preview.isError ?? false).toBe(false);
      const previewBody = TOOL.send_invoice.output.parse(preview.structuredContent);
      expect(previewBody).toEqual({
        sent: false,
        preview: {
          action: `E-mail invoice draft (finalized first, it gets its number) as a PDF to ${email}`,
          sender: expect.stringContaining(t.services.config.mailFrom),
          to: [email],
          cc: [],
          bcc: [],
          subject: 'Invoice (number on sending) from Acme Widgets',
          amounts: [{ label: 'total', amount: 2450.5, currency: 'EUR' }],
          send_at: null,
          attachments: ['the invoice PDF, named by its number'],
          details: [],
        },
      });
      expect(await mailRows(t, invoice._id)).toHaveLength(0);
      const still = await readOutput(
        await t.request('GET', `/api/v1/invoices/${invoice._id}`, { token: org.token }),
        TOOL.get_invoice,
      );
      expect(still.invoice.status).toBe('draft');

      const sent = TOOL.send_invoice.output.parse(
        (await client.callTool('send_invoice', { id: invoice._id, confirm: true })).structuredContent,
      );
      expect(sent.sent).toBe(true);
      expect(sent.invoice?.status).toBe('open');
      expect(await mailRows(t, invoice._id)).toHaveLength(1);

      const pdf = TOOL.get_invoice_pdf.output.parse(
        (await client.callTool('get_invoice_pdf', { id: invoice._id })).structuredContent,
      );
      expect(pdf).toMatchObject({
        filename: `${sent.invoice?.number}.pdf`,
        content_type: 'application/pdf',
        download_path: `/api/v1/invoices/${invoice._id}/pdf`,
      });
      expect(pdf.size_bytes).toBeGreaterThan(1000);
      expect(pdf.content_base64).toBeUndefined();
    } finally {
      await client.close();
      await stop();
    }
  });
});

describe('GET /invoices/{id}/pdf', () => {
  /** GET /invoices/{id}/pdf as `caller` (an organization or one of its tokens). */
  const getPdf = (t: TestContext, caller: Caller, id: string) =>
    t.request('GET', `/api/v1/invoices/${id}/pdf`, { token: caller.token });

  test.skipIf(!hasPoppler)(
    'answers a draft as a PDF saying DRAFT, named draft-<id>.pdf',
    async ({ t, org }) => {
      const { invoice } = await draftWithContact(t, org);
      const res = await getPdf(t, org, invoice._id);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="draft-${invoice._id}.pdf"`);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const text = await pdfText(bytes);
      expect(text).toContain('DRAFT');
      expect(text).toContain('Consulting');
      expect(text).toContain('Setup fee');
      expect(text).toContain('2030-01-31');
      expect(text).toContain('Bank transfer please');
    },
  );

  test.skipIf(!hasPoppler)(
    'answers an open invoice with its number, totals, amount paid and due',
    async ({ t, org }) => {
      const { invoice } = await draftWithContact(t, org);
      const open = await finalizeInvoice(t, org, invoice._id);
      await t.request('POST', `/api/v1/invoices/${invoice._id}/payments`, {
        token: org.token,
        body: { amount: 450.5 },
      });
      const res = await getPdf(t, org, invoice._id);
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${open.number}.pdf"`);
      const text = await pdfText(Buffer.from(await res.arrayBuffer()));
      expect(text).toContain(String(open.number));
      expect(text).not.toContain('DRAFT');
      expect(text).toMatch(/Subtotal\s+EUR 2,250.50/);
      expect(text).toMatch(/Tax\s+EUR 200.00/);
      expect(text).toMatch(/Total\s+EUR 2,450.50/);
      expect(text).toMatch(/Paid\s+EUR 450.50/);
      expect(text).toMatch(/Amount due\s+EUR 2,000.00/);
      expect(text).toContain(String(open.issue_date));
    },
  );

  test('is 404 for another organization and for a malformed id 400, and needs read:invoices', async ({
    t,
    org,
    other,
  }) => {
    const { invoice } = await draftWithContact(t, org);
    expect((await getPdf(t, other, invoice._id)).status).toBe(404);
    expect((await readError(await getPdf(t, org, 'not-an-id'), 400)).details?.[0]?.field).toBe('id');
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:invoices']);
    expect((await getPdf(t, reader, invoice._id)).status).toBe(200);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await getPdf(t, leadsOnly, invoice._id)).status).toBe(403);
  });
});

describe('the overdue job', () => {
  test('flags each open invoice past its due date once, across runs, and paying or voiding clears the flag', async ({
    t,
  }) => {
    const overdueOrg = await t.createOrg();
    const lead = await createLead(t, overdueOrg);
    const make = (due: string) =>
      createInvoice(t, overdueOrg, { lead_id: lead._id, due_date: due, issue_date: '2026-01-01' });
    const late = await make('2026-02-27');
    const lateToo = await make('2026-02-01');
    const dueToday = await make('2026-02-28');
    const draftLate = await make('2026-02-01');
    for (const inv of [late, lateToo, dueToday]) await finalizeInvoice(t, overdueOrg, inv._id);

    const now = new Date('2026-02-28T08:00:00Z');
    expect(await flagOverdue(t.services, now, overdueOrg.orgId)).toBe(2);
    expect(await flagOverdue(t.services, now, overdueOrg.orgId)).toBe(0);
    expect(await flagOverdue(t.services, new Date('2026-02-28T23:59:59Z'), overdueOrg.orgId)).toBe(0);
    for (const inv of [late, lateToo]) {
      const events = (await eventsOf(t, inv._id, overdueOrg.orgId)).filter(
        (e) => e.event === 'invoice.overdue',
      );
      expect(events).toHaveLength(1);
      expect(events[0]?.data).toMatchObject({ is_overdue: true, status: 'open', today: '2026-02-28' });
    }
    for (const inv of [dueToday, draftLate]) {
      expect((await eventsOf(t, inv._id, overdueOrg.orgId)).some((e) => e.event === 'invoice.overdue')).toBe(
        false,
      );
    }

    const listed = await readOutput(
      await t.request('GET', '/api/v1/invoices?is_overdue=true', { token: overdueOrg.token }),
      TOOL.list_invoices,
    );
    expect(listed.invoices.map((i) => i._id).sort()).toEqual([late._id, lateToo._id].sort());

    // The next day the invoice due "today" is late too: one event, the others none again.
    expect(await flagOverdue(t.services, new Date('2026-03-01T00:10:00Z'), overdueOrg.orgId)).toBe(1);

    const paid = await readOutput(
      await t.request('POST', `/api/v1/invoices/${late._id}/payments`, {
        token: overdueOrg.token,
        body: { amount: 100 },
      }),
      TOOL.record_invoice_payment,
      201,
    );
    expect(paid.invoice).toMatchObject({ status: 'paid', is_overdue: false });
    const voided = await readOutput(
      await t.request('POST', `/api/v1/invoices/${lateToo._id}/void`, { token: overdueOrg.token, body: {} }),
      TOOL.void_invoice,
    );
    expect(voided.invoice).toMatchObject({ status: 'void', is_overdue: false });
    expect(await flagOverdue(t.services, new Date('2026-03-02T00:10:00Z'), overdueOrg.orgId)).toBe(0);
  });
});
