import { and, eq } from 'drizzle-orm';
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outgoingMails } from '../../core/db/schema.ts';
import { InProcessQueue } from '../../core/queue-in-process.ts';
import {
  createContact,
  createEstimate,
  createLead,
  createTestContext,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';
import { bearer, ERAS, serveMcp } from '../mcp-clients.ts';
import { hasPoppler, pdfText } from '../support/poppler.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

let peer: SmtpPeer;
let t: TestContext;
let org: TestOrg;

beforeAll(async () => {
  peer = await startSmtpPeer();
  t = await createTestContext(
    { SMTP_URL: peer.url, MAIL_FROM: 'Acme Sales <sales@acme.example>' },
    { withWorkers: true, withoutRateLimits: true },
  );
  org = await t.createOrg({ name: 'Acme Widgets', plan: 'pro' });
});

afterAll(async () => {
  await t?.close();
  await peer?.close();
});

async function workersIdle(): Promise<void> {
  const jobs = t.services.jobs;
  if (!(jobs instanceof InProcessQueue)) throw new Error('these tests drive the in-process queue');
  await jobs.idle();
}

const LINES = [
  { description: 'Consulting', quantity: 2, unit_price: 1000, tax_percent: 10 },
  { description: 'Setup fee', quantity: 1, unit_price: 250.5 },
];

/** A draft estimate for a lead with one contact e-mail. */
async function draftWithContact(email = `buyer-${Math.random().toString(36).slice(2)}@globex.example`) {
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

const send = (id: string, body: Record<string, unknown> = {}) =>
  t.request('POST', `/api/v1/estimates/${id}/send`, { token: org.token, body });

async function mailRows(estimateId: string) {
  return t.services.db.system
    .select()
    .from(outgoingMails)
    .where(and(eq(outgoingMails.subjectType, 'estimate'), eq(outgoingMails.subjectId, estimateId)))
    .orderBy(outgoingMails.createdAt);
}

function mailsTo(address: string): ParsedMail[] {
  return peer.received.filter((mail) => {
    const to = Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : [];
    return to.some((a) => a.value.some((v) => v.address === address));
  });
}

describe('POST /estimates/{id}/send', () => {
  it.skipIf(!hasPoppler)('moves a draft to sent and mails its PDF once to the contact', async () => {
    const { estimate, email } = await draftWithContact();
    const body = await readOutput(
      await send(estimate._id, { message: 'As discussed on the call.' }),
      TOOL.send_estimate,
    );
    expect(body.sent).toBe(true);
    expect(body.estimate).toMatchObject({ status: 'sent', number: estimate.number, total: 2450.5 });
    expect(body.estimate?.sent_at).not.toBeNull();
    expect(body.mail).toMatchObject({ to: email, subject: `Estimate ${estimate.number} from Acme Widgets` });

    await workersIdle();
    const [mail, ...more] = mailsTo(email);
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

    const rows = await mailRows(estimate._id);
    expect(rows.map((r) => [r.key, r.status])).toEqual([[`estimate:${estimate._id}:send:1`, 'sent']]);
  });

  it('sends to `to` when given, and a resend is a second mail under the next key', async () => {
    const { estimate, email } = await draftWithContact();
    const first = await readOutput(
      await send(estimate._id, { to: 'cfo@globex.example' }),
      TOOL.send_estimate,
    );
    expect(first.mail?.to).toBe('cfo@globex.example');
    const again = await readOutput(await send(estimate._id), TOOL.send_estimate);
    expect(again.estimate?.status).toBe('sent');
    await workersIdle();
    expect(mailsTo('cfo@globex.example')).toHaveLength(1);
    expect(mailsTo(email)).toHaveLength(1);
    expect((await mailRows(estimate._id)).map((r) => r.key)).toEqual([
      `estimate:${estimate._id}:send:1`,
      `estimate:${estimate._id}:send:2`,
    ]);
  });

  it('queues nothing when refused: no address (the draft stays a draft) or an accepted estimate', async () => {
    const lead = await createLead(t, org);
    const estimate = await createEstimate(t, org, { lead_id: lead._id });
    const error = await readError(await send(estimate._id), 400);
    expect(error.details?.map((d) => d.field)).toEqual(['to']);
    const after = await readOutput(
      await t.request('GET', `/api/v1/estimates/${estimate._id}`, { token: org.token }),
      TOOL.get_estimate,
    );
    expect(after.estimate).toMatchObject({ status: 'draft', sent_at: null });
    expect(await mailRows(estimate._id)).toHaveLength(0);

    const { estimate: accepted } = await draftWithContact();
    await readOutput(await send(accepted._id), TOOL.send_estimate);
    await t.request('POST', `/api/v1/estimates/${accepted._id}/accept`, { token: org.token, body: {} });
    expect((await readError(await send(accepted._id), 400)).code).toBe('invalid_transition');
    expect(await mailRows(accepted._id)).toHaveLength(1);
  });
});

describe('MCP send_estimate and get_estimate_pdf', () => {
  it('previews without confirm (nothing queued), sends with confirm: true, and summarizes the PDF', async () => {
    const { estimate, email } = await draftWithContact();
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
      expect(await mailRows(estimate._id)).toHaveLength(0);

      const sent = TOOL.send_estimate.output.parse(
        (await client.callTool('send_estimate', { id: estimate._id, confirm: true })).structuredContent,
      );
      expect(sent).toMatchObject({ sent: true, estimate: { status: 'sent' } });
      expect(await mailRows(estimate._id)).toHaveLength(1);

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
  it.skipIf(!hasPoppler)('answers the PDF with the number, dates, lines, totals and notes', async () => {
    const { estimate } = await draftWithContact();
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
  });

  it('is 402 on the free plan, 404 for another organization, and needs read:invoices', async () => {
    const { estimate } = await draftWithContact();
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
