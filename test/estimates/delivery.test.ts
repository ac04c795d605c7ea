import { describe, expect } from 'vitest';
import {
  createContact,
  createEstimate,
  createLead,
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
  env: { MAIL_FROM: 'Acme Sales <sales@acme.example>' },
  options: { withWorkers: true, withoutRateLimits: true },
});
test.override('org', { scope: 'file' }, async ({ t }) => t.createOrg({ name: 'Acme Widgets', plan: 'pro' }));

const LINES = [
  { description: 'Consulting', quantity: 2, unit_price: 1000, tax_percent: 10 },
  { description: 'Setup fee', quantity: 1, unit_price: 250.5 },
];

/** A draft estimate for a lead with one contact e-mail. */
async function draftWithContact(
  t: TestContext,
  org: TestOrg,
  email = `buyer-${Math.random().toString(36).slice(2)}@globex.example`,
) {
  const lead = await createLead(t, org, { name: 'Globex' });
  await createContact(t, org, { lead_id: lead._id, name: 'Hank Scorpio', emails: [{ email, type: 'work' }] });
  const estimate = await createEstimate(t, org, {
    lead_id: lead._id,
    currency: 'EUR',
    line_items: LINES,
    issue_date: '2031-01-05',
    valid_until: '2031-02-05',
    notes: 'Prices hold for 30 days',
  });
  return { lead, estimate, email };
}

const send = (t: TestContext, org: TestOrg, id: string, body: Record<string, unknown> = {}) =>
  t.request('POST', `/api/v1/estimates/${id}/send`, { token: org.token, body });

const mailRows = (t: TestContext, estimateId: string) => mailRowsOf(t, 'estimate', estimateId);

describe('POST /estimates/{id}/send', () => {
  test.skipIf(!hasPoppler)(
    'moves a draft to sent and mails its PDF once to the contact',
    async ({ t, org, peer }) => {
      const { estimate, email } = await draftWithContact(t, org);
      const body = await readOutput(
        await send(t, org, estimate._id, { message: 'As discussed on the call.' }),
        TOOL.send_estimate,
      );
      expect(body.sent).toBe(true);
      expect(body.estimate).toMatchObject({ status: 'sent', number: estimate.number, total: 2450.5 });
      expect(body.estimate?.sent_at).not.toBeNull();
      expect(body.mail).toMatchObject({
        to: email,
        subject: `Estimate ${estimate.number} from Acme Widgets`,
      });

      await workersIdle(t);
      const [mail, ...more] = mailsTo(peer, email);
      expect(more).toHaveLength(0);
      expect(mail?.subject).toBe(`Estimate ${estimate.number} from Acme Widgets`);
      expect(mail?.text).toContain('As discussed on the call.');
      expect(mail?.text).toContain('EUR 2,450.50');
      expect(mail?.text).toContain('valid until 2031-02-05');
      const attachment = mail?.attachments[0];
      expect(attachment?.filename).toBe(`${estimate.number}.pdf`);
      expect(attachment?.contentType).toBe('application/pdf');
      const text = await pdfText(attachment?.content ?? Buffer.alloc(0));
      expect(text).toContain(estimate.number);
      expect(text).toContain('EUR 2,450.50');
      expect(text).toContain('Globex');
      expect(text).toContain('Acme Widgets');

      const rows = await mailRows(t, estimate._id);
      expect(rows.map((r) => [r.key, r.status])).toEqual([[`estimate:${estimate._id}:send:1`, 'sent']]);
    },
  );

  test('sends to `to` when given, and a resend is a second mail under the next key', async ({
    t,
    org,
    peer,
  }) => {
    const { estimate, email } = await draftWithContact(t, org);
    const first = await readOutput(
      await send(t, org, estimate._id, { to: 'cfo@globex.example' }),
      TOOL.send_estimate,
    );
    expect(first.mail?.to).toBe('cfo@globex.example');
    const again = await readOutput(await send(t, org, estimate._id), TOOL.send_estimate);
    expect(again.estimate?.status).toBe('sent');
    await workersIdle(t);
    expect(mailsTo(peer, 'cfo@globex.example')).toHaveLength(1);
    expect(mailsTo(peer, email)).toHaveLength(1);
    expect((await mailRows(t, estimate._id)).map((r) => r.key)).toEqual([
      `estimate:${estimate._id}:send:1`,
      `estimate:${estimate._id}:send:2`,
    ]);
  });

  test('queues nothing when refused: no address (the draft stays a draft) or an accepted estimate', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org);
    const estimate = await createEstimate(t, org, { lead_id: lead._id });
    const error = await readError(await send(t, org, estimate._id), 400);
    expect(error.details?.map((d) => d.field)).toEqual(['to']);
    const after = await readOutput(
      await t.request('GET', `/api/v1/estimates/${estimate._id}`, { token: org.token }),
      TOOL.get_estimate,
    );
    expect(after.estimate).toMatchObject({ status: 'draft', sent_at: null });
    expect(await mailRows(t, estimate._id)).toHaveLength(0);

    const { estimate: accepted } = await draftWithContact(t, org);
    await readOutput(await send(t, org, accepted._id), TOOL.send_estimate);
    await t.request('POST', `/api/v1/estimates/${accepted._id}/accept`, { token: org.token, body: {} });
    expect((await readError(await send(t, org, accepted._id), 400)).code).toBe('invalid_transition');
    expect(await mailRows(t, accepted._id)).toHaveLength(1);
  });
});

describe('MCP send_estimate and get_estimate_pdf', () => {
  test('previews without confirm (nothing queued), sends with confirm: true, and summarizes the PDF', async ({
    t,
    org,
  }) => {
    const { estimate, email } = await draftWithContact(t, org);
    const { url, stop } = await serveMcp(t);
    const era = ERAS[0];
    if (!era) throw new Error('no MCP client era');
    const client = await era.connect(url, { ...bearer(org.token), 'X-MCP-Toolsets': 'billing' });
    try {
      const preview = await client.callTool('send_estimate', { id: estimate._id });
      expect(preview.isError ?? false).toBe(false);
      const previewBody = TOOL.send_estimate.output.parse(preview.structuredContent);
      expect(previewBody).toMatchObject({
        sent: false,
        preview: {
          to: [email],
          subject: `Estimate ${estimate.number} from Acme Widgets`,
          amounts: [{ label: 'total', amount: 2450.5, currency: 'EUR' }],
          attachments: [`${estimate.number}.pdf`],
        },
      });
      expect(previewBody.mail).toBeUndefined();
      expect(previewBody.estimate).toBeUndefined();
      expect(await mailRows(t, estimate._id)).toHaveLength(0);

      const sent = TOOL.send_estimate.output.parse(
        (await client.callTool('send_estimate', { id: estimate._id, confirm: true })).structuredContent,
      );
      expect(sent).toMatchObject({ sent: true, estimate: { status: 'sent' } });
      expect(await mailRows(t, estimate._id)).toHaveLength(1);

      const pdf = TOOL.get_estimate_pdf.output.parse(
        (await client.callTool('get_estimate_pdf', { id: estimate._id })).structuredContent,
      );
      expect(pdf).toMatchObject({
        filename: `${estimate.number}.pdf`,
        content_type: 'application/pdf',
        number: estimate.number,
        status: 'sent',
        download_path: `/api/v1/estimates/${estimate._id}/pdf`,
      });
      expect(pdf.size_bytes).toBeGreaterThan(1000);
      expect(pdf.content_base64).toBeUndefined();
    } finally {
      await client.close();
      await stop();
    }
  });
});

describe('GET /estimates/{id}/pdf', () => {
  test.skipIf(!hasPoppler)(
    'answers the PDF with the number, dates, lines, totals and notes',
    async ({ t, org }) => {
      const { estimate } = await draftWithContact(t, org);
      const res = await t.request('GET', `/api/v1/estimates/${estimate._id}/pdf`, { token: org.token });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${estimate.number}.pdf"`);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const text = await pdfText(bytes);
      expect(text).toContain('Estimate');
      expect(text).toContain(estimate.number);
      expect(text).toContain('2031-01-05');
      expect(text).toContain('2031-02-05');
      expect(text).toContain('Consulting');
      expect(text).toContain('Setup fee');
      expect(text).toContain('EUR 2,450.50');
      expect(text).toContain('Prices hold for 30 days');
    },
  );

  test('is 402 on the free plan, 404 for another organization, and needs read:invoices', async ({
    t,
    org,
  }) => {
    const { estimate } = await draftWithContact(t, org);
    const free = await t.createOrg({ name: 'Free', plan: 'free' });
    const path = `/api/v1/estimates/${estimate._id}/pdf`;
    expect((await readError(await t.request('GET', path, { token: free.token }), 402)).error).toBe(
      'plan_upgrade_required',
    );
    const other = await t.createOrg({ name: 'Other', plan: 'pro' });
    expect((await t.request('GET', path, { token: other.token })).status).toBe(404);
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    expect((await t.request('GET', path, { token: leadsOnly.token })).status).toBe(403);
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:invoices']);
    expect((await t.request('GET', path, { token: reader.token })).status).toBe(200);
  });
});
