// Locks in that an invoice made from project time and the project's invoicing report never disagree: the draft's lines, currency and client cannot be edited (400 naming the field; other fields can), the project's lead cannot change while an invoice that is not void names the project, and through finalize, void and a new invoice the report's billed amount is what the finalized invoices bill.
import { describe, expect } from 'vitest';
import {
  type Caller,
  createLead,
  createProject,
  detailFields,
  fileTest,
  finalizeInvoice,
  invoiceProject,
  logTime,
  projectReport,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

const req = (t: TestContext, org: TestOrg, method: string, path: string, body?: unknown, as: Caller = org) =>
  t.request(method, `/api/v1${path}`, { token: as.token, ...(body === undefined ? {} : { body }) });

const invoiceTime = (t: TestContext, org: TestOrg, projectId: string) => invoiceProject(t, org, projectId);
const report = (t: TestContext, org: TestOrg, projectId: string) => projectReport(t, org, projectId);

describe('an invoice of project time', () => {
  test('keeps the lines, currency and client the time produced, and the report follows finalize and void', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org, { name: 'Globex' });
    const otherLead = await createLead(t, org, { name: 'Initech' });
    const project = await createProject(t, org, { lead_id: lead._id, currency: 'USD', hourly_rate: 90 });
    await logTime(t, org, project._id, { minutes: 60, description: 'Design review' });
    const draft = await invoiceTime(t, org, project._id);
    expect(draft.project_id).toBe(project._id);
    expect(draft.total).toBe(90);

    // The lines, the currency and the client are the time's: each edit is a 400 naming its field.
    const lines = await readError(
      await req(t, org, 'PATCH', `/invoices/${draft._id}`, {
        line_items: [{ description: 'Discounted', quantity: 1, unit_price: 1 }],
      }),
      400,
    );
    expect(detailFields(lines)).toEqual(['line_items']);
    expect(lines.details?.[0]?.code).toBe('time_invoice_locked');
    const currency = await readError(
      await req(t, org, 'PATCH', `/invoices/${draft._id}`, { currency: 'JPY' }),
      400,
    );
    expect(detailFields(currency)).toEqual(['currency']);
    const client = await readError(
      await req(t, org, 'PATCH', `/invoices/${draft._id}`, { lead_id: otherLead._id }),
      400,
    );
    expect(detailFields(client)).toEqual(['lead_id']);
    // The same lines sent back (a PUT of the whole draft) and the other fields are fine.
    const kept = await readOutput(
      await req(t, org, 'PUT', `/invoices/${draft._id}`, {
        line_items: draft.line_items.map(({ description, quantity, unit_price }) => ({
          description,
          quantity,
          unit_price,
        })),
        currency: 'USD',
        notes: 'Thank you',
        due_date: '2030-01-31',
      }),
      TOOL.update_invoice,
    );
    expect(kept.invoice.notes).toBe('Thank you');
    expect(kept.invoice.total).toBe(90);

    // The project keeps its client while an invoice that is not void names it.
    const lead2 = await readError(
      await req(t, org, 'PATCH', `/projects/${project._id}`, { lead_id: otherLead._id }),
      400,
    );
    expect(detailFields(lead2)).toEqual(['lead_id']);
    expect(lead2.details?.[0]?.code).toBe('lead_locked');

    // Finalized: the report bills exactly what the invoice bills.
    const open = await finalizeInvoice(t, org, draft._id);
    let figures = await report(t, org, project._id);
    expect(figures.currency).toBe(open.currency);
    expect(figures.billed_amount).toBe(open.total);
    expect(figures.billed_minutes).toBe(60);
    expect(figures.unbilled_amount).toBe(0);

    // Void: nothing billed any more, the time is unbilled again, and the client may change.
    await readOutput(await req(t, org, 'POST', `/invoices/${draft._id}/void`), TOOL.void_invoice);
    figures = await report(t, org, project._id);
    expect(figures.billed_amount).toBe(0);
    expect(figures.billed_minutes).toBe(0);
    expect(figures.unbilled_amount).toBe(90);
    const moved = await readOutput(
      await req(t, org, 'PATCH', `/projects/${project._id}`, { lead_id: otherLead._id }),
      TOOL.update_project,
    );
    expect(moved.project.lead_id).toBe(otherLead._id);

    // Invoiced again, for the new client, finalized: the report again equals the invoice.
    const again = await invoiceTime(t, org, project._id);
    expect(again.lead_id).toBe(otherLead._id);
    const reopened = await finalizeInvoice(t, org, again._id);
    figures = await report(t, org, project._id);
    expect(figures.billed_amount).toBe(reopened.total);
    expect(figures.unbilled_amount).toBe(0);
  });

  test('leaves invoices made by hand for a project editable', async ({ t, org }) => {
    const lead = await createLead(t, org, { name: 'Hooli' });
    const project = await createProject(t, org, { lead_id: lead._id, currency: 'EUR' });
    const res = await req(t, org, 'POST', '/invoices', {
      lead_id: lead._id,
      project_id: project._id,
      currency: 'EUR',
      line_items: [{ description: 'Licence', quantity: 1, unit_price: 100 }],
    });
    const invoice = (await readOutput(res, TOOL.create_invoice, 201)).invoice;
    const edited = await readOutput(
      await req(t, org, 'PATCH', `/invoices/${invoice._id}`, {
        currency: 'USD',
        line_items: [{ description: 'Licence', quantity: 2, unit_price: 100 }],
      }),
      TOOL.update_invoice,
    );
    expect(edited.invoice.total).toBe(200);
    expect(edited.invoice.currency).toBe('USD');
  });
});
