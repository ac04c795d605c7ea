// Locks in projects and time over REST: project CRUD and its status machine, time entries and their
// bounds, invoicing unbilled time into an exact draft invoice, billed/unbilled following the
// invoice (finalize, void, deleted draft), the invoicing report, tasks of a project, plan gating,
// scopes, roles and tenancy.
import { describe, expect } from 'vitest';
import { projectRoutes } from '../../tools/projects/routes.ts';
import {
  type Caller,
  createLead,
  createProject,
  createTask,
  detailFields,
  fileTest,
  invoiceProject,
  logTime,
  projectReport,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' }).extend(
  'starter',
  { scope: 'file' },
  async ({ t }) => t.createOrg({ name: 'Starter Org', plan: 'starter' }),
);

const req = (t: TestContext, org: TestOrg, method: string, path: string, body?: unknown, as: Caller = org) =>
  t.request(method, `/api/v1${path}`, { token: as.token, ...(body === undefined ? {} : { body }) });

async function getProject(t: TestContext, org: TestOrg, id: string) {
  return (await readOutput(await req(t, org, 'GET', `/projects/${id}`), TOOL.get_project)).project;
}
async function entries(t: TestContext, org: TestOrg, projectId: string, query = '') {
  return (
    await readOutput(
      await req(t, org, 'GET', `/projects/${projectId}/time-entries${query}`),
      TOOL.list_time_entries,
    )
  ).time_entries;
}
const invoiceOf = (t: TestContext, org: TestOrg, projectId: string) => invoiceProject(t, org, projectId);
const report = (t: TestContext, org: TestOrg, projectId: string) => projectReport(t, org, projectId);

describe('projects', () => {
  test('creates with defaults, reads, merges PATCH and PUT, and lists with filters and search', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org);
    const p = await createProject(t, org, {
      name: 'Brand refresh',
      lead_id: lead._id,
      hourly_rate: 90.5,
      budget_hours: 12.5,
      starts_on: '2026-11-01',
      due_on: '2026-12-01',
    });
    expect(p).toMatchObject({
      name: 'Brand refresh',
      lead_id: lead._id,
      status: 'active',
      currency: 'USD',
      hourly_rate: 90.5,
      budget_hours: 12.5,
      description: null,
      billable_minutes: 0,
      billed_minutes: 0,
      unbilled_minutes: 0,
      non_billable_minutes: 0,
    });
    expect(await getProject(t, org, p._id)).toEqual(p);
    const patched = await readOutput(
      await req(t, org, 'PATCH', `/projects/${p._id}`, { description: 'Logo and site', status: 'on_hold' }),
      TOOL.update_project,
    );
    expect(patched.project).toMatchObject({
      description: 'Logo and site',
      status: 'on_hold',
      hourly_rate: 90.5,
    });
    const put = await readOutput(
      await req(t, org, 'PUT', `/projects/${p._id}`, { hourly_rate: null }),
      TOOL.update_project,
    );
    expect(put.project).toMatchObject({
      description: 'Logo and site',
      hourly_rate: null,
      name: 'Brand refresh',
    });

    await createProject(t, org, { name: 'Unrelated thing' });
    const byLead = await readOutput(
      await req(t, org, 'GET', `/projects?lead_id=${lead._id}`),
      TOOL.list_projects,
    );
    expect(byLead.projects.map((x) => x._id)).toEqual([p._id]);
    const byStatus = await readOutput(
      await req(t, org, 'GET', '/projects?status=on_hold'),
      TOOL.list_projects,
    );
    expect(byStatus.projects.map((x) => x._id)).toContain(p._id);
    expect(byStatus.projects.every((x) => x.status === 'on_hold')).toBe(true);
    const found = await readOutput(await req(t, org, 'GET', '/projects?search=bran'), TOOL.list_projects);
    expect(found.projects.map((x) => x._id)).toEqual([p._id]);
  });

  test('refuses bad fields with 400s naming them', async ({ t, org, other }) => {
    const res = await req(t, org, 'POST', '/projects', {
      name: 'x'.repeat(201),
      currency: 'USD',
      starts_on: '2026-11-02',
      due_on: '2026-11-01',
    });
    expect(detailFields(await readError(res, 400))).toContain('name');
    const dates = await req(t, org, 'POST', '/projects', {
      name: 'Dates',
      currency: 'USD',
      starts_on: '2026-11-02',
      due_on: '2026-11-01',
    });
    expect(detailFields(await readError(dates, 400))).toEqual(['due_on']);
    const cents = await req(t, org, 'POST', '/projects', {
      name: 'Rate',
      currency: 'USD',
      hourly_rate: 10.005,
    });
    expect(detailFields(await readError(cents, 400))).toEqual(['hourly_rate']);
    const yen = await req(t, org, 'POST', '/projects', { name: 'Rate', currency: 'JPY', hourly_rate: 10.5 });
    expect(detailFields(await readError(yen, 400))).toEqual(['hourly_rate']);
    const currency = await req(t, org, 'POST', '/projects', { name: 'Rate', currency: 'usd' });
    expect(detailFields(await readError(currency, 400))).toEqual(['currency']);
    const foreignLead = await createLead(t, other);
    expect(
      (await req(t, org, 'POST', '/projects', { name: 'x', currency: 'USD', lead_id: foreignLead._id }))
        .status,
    ).toBe(404);
  });

  test('moves status through its machine: archived only back to active', async ({ t, org }) => {
    const p = await createProject(t, org);
    for (const status of ['completed', 'active', 'archived'] as const) {
      const res = await req(t, org, 'PATCH', `/projects/${p._id}`, { status });
      expect((await readOutput(res, TOOL.update_project)).project.status).toBe(status);
    }
    const refused = await readError(
      await req(t, org, 'PATCH', `/projects/${p._id}`, { status: 'completed' }),
      400,
    );
    expect(refused.code).toBe('invalid_transition');
    expect(refused.message).toBe('archived -> completed is not allowed; allowed: active');
    expect(detailFields(refused)).toEqual(['status']);
    // Time is not logged on an archived project.
    const log = await req(t, org, 'POST', `/projects/${p._id}/time-entries`, {
      date: '2026-11-03',
      minutes: 5,
      description: 'x',
    });
    expect((await readError(log, 400)).code).toBe('invalid_operation');
  });

  test('deletes for good, refused while its time is on a live invoice', async ({ t, org }) => {
    const lead = await createLead(t, org);
    const p = await createProject(t, org, { lead_id: lead._id, hourly_rate: 60 });
    await logTime(t, org, p._id);
    const invoice = await invoiceOf(t, org, p._id);
    const refused = await readError(await req(t, org, 'DELETE', `/projects/${p._id}`), 400);
    expect(detailFields(refused)).toEqual(['time_entries']);
    expect((await req(t, org, 'DELETE', `/invoices/${invoice._id}`)).status).toBe(200);
    expect((await req(t, org, 'DELETE', `/projects/${p._id}`)).status).toBe(200);
    expect((await req(t, org, 'GET', `/projects/${p._id}`)).status).toBe(404);
  });

  test('changes currency only while no time is logged', async ({ t, org }) => {
    const p = await createProject(t, org, { hourly_rate: 100 });
    const eur = await readOutput(
      await req(t, org, 'PATCH', `/projects/${p._id}`, { currency: 'EUR' }),
      TOOL.update_project,
    );
    expect(eur.project).toMatchObject({ currency: 'EUR', hourly_rate: 100 });
    await logTime(t, org, p._id);
    const refused = await req(t, org, 'PATCH', `/projects/${p._id}`, { currency: 'USD' });
    expect(detailFields(await readError(refused, 400))).toEqual(['currency']);
  });
});

describe('time entries', () => {
  test('logs time for the caller by default, refuses out-of-range minutes and foreign users', async ({
    t,
    org,
    other,
  }) => {
    const p = await createProject(t, org, { hourly_rate: 120 });
    const entry = await logTime(t, org, p._id, { minutes: 90, description: 'Kickoff' });
    expect(entry).toMatchObject({
      project_id: p._id,
      user_id: org.ownerId,
      minutes: 90,
      billable: true,
      hourly_rate: null,
      effective_hourly_rate: 120,
      amount: 180,
      invoice_id: null,
      billed: false,
    });
    for (const minutes of [0, 1441, 1.5]) {
      const res = await req(t, org, 'POST', `/projects/${p._id}/time-entries`, {
        date: '2026-11-03',
        minutes,
        description: 'x',
      });
      expect(detailFields(await readError(res, 400)), `minutes ${minutes}`).toEqual(['minutes']);
    }
    const stranger = await req(t, org, 'POST', `/projects/${p._id}/time-entries`, {
      date: '2026-11-03',
      minutes: 10,
      description: 'x',
      user_id: other.ownerId,
    });
    expect(detailFields(await readError(stranger, 400))).toEqual(['user_id']);
    const badDate = await req(t, org, 'POST', `/projects/${p._id}/time-entries`, {
      date: '2026-02-30',
      minutes: 10,
      description: 'x',
    });
    expect(detailFields(await readError(badDate, 400))).toEqual(['date']);
    const noText = await req(t, org, 'POST', `/projects/${p._id}/time-entries`, {
      date: '2026-11-03',
      minutes: 10,
      description: '',
    });
    expect(detailFields(await readError(noText, 400))).toEqual(['description']);
  });

  test('logs for another active user, lists with filters, merges updates and deletes', async ({ t, org }) => {
    const p = await createProject(t, org, { hourly_rate: 60 });
    const member = await t.createUser(org.orgId, 'member');
    const a = await logTime(t, org, p._id, { date: '2026-10-30', minutes: 30, user_id: member.userId });
    const b = await logTime(t, org, p._id, { date: '2026-11-02', minutes: 15, billable: false });
    const c = await logTime(t, org, p._id, { date: '2026-11-05', minutes: 45, hourly_rate: 80 });
    expect((await entries(t, org, p._id)).map((e) => e._id)).toEqual([c._id, b._id, a._id]);
    expect((await entries(t, org, p._id, '?billable=false')).map((e) => e._id)).toEqual([b._id]);
    expect((await entries(t, org, p._id, `?user_id=${member.userId}`)).map((e) => e._id)).toEqual([a._id]);
    expect(
      (await entries(t, org, p._id, '?date_from=2026-11-01&date_to=2026-11-04')).map((e) => e._id),
    ).toEqual([b._id]);
    expect((await entries(t, org, p._id, '?billed=true')).length).toBe(0);
    expect((await entries(t, org, p._id, '?sort=minutes')).map((e) => e._id)).toEqual([b._id, a._id, c._id]);

    const patched = await readOutput(
      await req(t, org, 'PATCH', `/projects/${p._id}/time-entries/${c._id}`, {
        hourly_rate: null,
        minutes: 50,
      }),
      TOOL.update_time_entry,
    );
    expect(patched.time_entry).toMatchObject({
      minutes: 50,
      hourly_rate: null,
      effective_hourly_rate: 60,
      amount: 50,
    });
    const put = await readOutput(
      await req(t, org, 'PUT', `/projects/${p._id}/time-entries/${c._id}`, { description: 'Review' }),
      TOOL.update_time_entry,
    );
    expect(put.time_entry).toMatchObject({ minutes: 50, description: 'Review' });
    const bounds = await req(t, org, 'PATCH', `/projects/${p._id}/time-entries/${c._id}`, { minutes: 1441 });
    expect(detailFields(await readError(bounds, 400))).toEqual(['minutes']);

    expect(await getProject(t, org, p._id)).toMatchObject({
      billable_minutes: 80,
      billed_minutes: 0,
      unbilled_minutes: 80,
      non_billable_minutes: 15,
    });
    expect((await req(t, org, 'DELETE', `/projects/${p._id}/time-entries/${b._id}`)).status).toBe(200);
    expect((await req(t, org, 'GET', `/projects/${p._id}/time-entries/${b._id}`)).status).toBe(404);
    // An entry is addressed under its own project only.
    const q = await createProject(t, org);
    expect((await req(t, org, 'GET', `/projects/${q._id}/time-entries/${a._id}`)).status).toBe(404);
  });
});

describe('invoicing a project', () => {
  test('needs a lead, a rate on every entry and something to invoice', async ({ t, org }) => {
    const noLead = await createProject(t, org, { hourly_rate: 50 });
    await logTime(t, org, noLead._id);
    expect(
      detailFields(await readError(await req(t, org, 'POST', `/projects/${noLead._id}/invoice`), 400)),
    ).toEqual(['lead_id']);
    const lead = await createLead(t, org);
    const noRate = await createProject(t, org, { lead_id: lead._id });
    const nothing = await readError(await req(t, org, 'POST', `/projects/${noRate._id}/invoice`), 400);
    expect(detailFields(nothing)).toEqual(['time_entries']);
    await logTime(t, org, noRate._id, { billable: false });
    expect(
      detailFields(await readError(await req(t, org, 'POST', `/projects/${noRate._id}/invoice`), 400)),
    ).toEqual(['time_entries']);
    const unrated = await logTime(t, org, noRate._id);
    const missing = await readError(await req(t, org, 'POST', `/projects/${noRate._id}/invoice`), 400);
    expect(detailFields(missing)).toEqual(['hourly_rate']);
    expect(missing.details?.[0]?.message).toContain(unrated._id);
  });

  test('makes an exact draft, one line per entry; billing follows finalize, void and a deleted draft', async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org);
    const member = await t.createUser(org.orgId, 'member');
    const p = await createProject(t, org, { lead_id: lead._id, hourly_rate: 90 });
    // 45 min at 90/h = 67.50 (0.75 h); 20 min at 90/h = 30.00 (not 4-decimal hours: one line of 30.00);
    // 7 min at 100.01/h = 11.6678... -> 11.67; a non-billable entry stays out.
    const e1 = await logTime(t, org, p._id, {
      date: '2026-11-03',
      minutes: 45,
      description: 'Design review',
    });
    const e2 = await logTime(t, org, p._id, {
      date: '2026-11-04',
      minutes: 20,
      description: 'Call',
      user_id: member.userId,
    });
    const e3 = await logTime(t, org, p._id, {
      date: '2026-12-01',
      minutes: 7,
      description: 'Fix',
      hourly_rate: 100.01,
    });
    await logTime(t, org, p._id, { date: '2026-11-05', minutes: 30, billable: false });

    const invoice = await invoiceOf(t, org, p._id);
    expect(invoice).toMatchObject({
      status: 'draft',
      lead_id: lead._id,
      project_id: p._id,
      currency: 'USD',
      subtotal: 109.17,
      tax_total: 0,
      total: 109.17,
    });
    const owner = (await readOutput(await req(t, org, 'GET', `/users/${org.ownerId}`), TOOL.get_user)).user
      .name;
    expect(invoice.line_items.map((l) => [l.description, l.quantity, l.unit_price, l.amount])).toEqual([
      [`2026-11-03 · ${owner} · Design review (45 min at 90.00 USD/h)`, 0.75, 90, 67.5],
      [expect.stringMatching(/^2026-11-04 · .+ · Call \(20 min at 90\.00 USD\/h\)$/), 1, 30, 30],
      [`2026-12-01 · ${owner} · Fix (7 min at 100.01 USD/h)`, 1, 11.67, 11.67],
    ]);
    const onDraft = await entries(t, org, p._id, '?billable=true');
    expect(onDraft.every((e) => e.invoice_id === invoice._id && !e.billed)).toBe(true);
    expect(await getProject(t, org, p._id)).toMatchObject({ billed_minutes: 0, unbilled_minutes: 72 });
    // Taken by a live draft: nothing left to invoice, and the entries are frozen.
    expect(
      detailFields(await readError(await req(t, org, 'POST', `/projects/${p._id}/invoice`), 400)),
    ).toEqual(['time_entries']);
    const frozen = await readError(
      await req(t, org, 'PATCH', `/projects/${p._id}/time-entries/${e1._id}`, { minutes: 5 }),
      400,
    );
    expect(frozen.code).toBe('invalid_operation');
    expect(detailFields(frozen)).toEqual(['invoice_id']);

    // Finalized: billed, and neither editable nor deletable.
    expect((await req(t, org, 'POST', `/invoices/${invoice._id}/finalize`)).status).toBe(200);
    expect(await getProject(t, org, p._id)).toMatchObject({
      billable_minutes: 72,
      billed_minutes: 72,
      unbilled_minutes: 0,
    });
    expect((await entries(t, org, p._id, '?billed=true')).map((e) => e._id).sort()).toEqual(
      [e1._id, e2._id, e3._id].sort(),
    );
    expect(
      detailFields(
        await readError(await req(t, org, 'DELETE', `/projects/${p._id}/time-entries/${e2._id}`), 400),
      ),
    ).toEqual(['invoice_id']);
    const billed = await report(t, org, p._id);
    expect(billed).toMatchObject({
      billed_minutes: 72,
      billed_amount: 109.17,
      unbilled_minutes: 0,
      unbilled_amount: 0,
    });

    // Void: unbilled again, and invoiced again into a new draft; the void invoice keeps its lines.
    expect((await req(t, org, 'POST', `/invoices/${invoice._id}/void`)).status).toBe(200);
    expect(await report(t, org, p._id)).toMatchObject({
      billed_minutes: 0,
      unbilled_minutes: 72,
      unbilled_amount: 109.17,
    });
    const again = await invoiceOf(t, org, p._id);
    expect(again._id).not.toBe(invoice._id);
    expect(again.total).toBe(109.17);
    const voided = (await readOutput(await req(t, org, 'GET', `/invoices/${invoice._id}`), TOOL.get_invoice))
      .invoice;
    expect(voided).toMatchObject({ status: 'void', total: 109.17 });
    expect(voided.line_items.length).toBe(3);

    // A deleted draft releases its entries.
    expect((await req(t, org, 'DELETE', `/invoices/${again._id}`)).status).toBe(200);
    const released = await entries(t, org, p._id, '?billable=true');
    expect(released.every((e) => e.invoice_id === null && !e.billed)).toBe(true);
    const editable = await req(t, org, 'PATCH', `/projects/${p._id}/time-entries/${e1._id}`, { minutes: 60 });
    expect((await readOutput(editable, TOOL.update_time_entry)).time_entry.amount).toBe(90);
  });

  test('reports by user and by month against a hand-computed table', async ({ t, org }) => {
    const lead = await createLead(t, org);
    const alice = await t.createUser(org.orgId, 'member');
    const p = await createProject(t, org, { lead_id: lead._id, hourly_rate: 100, currency: 'EUR' });
    // owner: 2026-10-10 60 min (billed, 100.00), 2026-11-01 30 min (unbilled, 50.00), 2026-11-02 15 min non-billable
    // alice: 2026-10-20 10 min at 99.99 (billed, 16.665 -> 16.67), 2026-11-03 1 min (unbilled, 1.666... -> 1.67)
    await logTime(t, org, p._id, { date: '2026-10-10', minutes: 60 });
    await logTime(t, org, p._id, {
      date: '2026-10-20',
      minutes: 10,
      user_id: alice.userId,
      hourly_rate: 99.99,
    });
    const first = await invoiceOf(t, org, p._id);
    expect(first.total).toBe(116.67);
    expect((await req(t, org, 'POST', `/invoices/${first._id}/finalize`)).status).toBe(200);
    await logTime(t, org, p._id, { date: '2026-11-01', minutes: 30 });
    await logTime(t, org, p._id, { date: '2026-11-02', minutes: 15, billable: false });
    await logTime(t, org, p._id, { date: '2026-11-03', minutes: 1, user_id: alice.userId });

    const r = await report(t, org, p._id);
    expect(r).toMatchObject({
      project_id: p._id,
      currency: 'EUR',
      billable_minutes: 101,
      billed_minutes: 70,
      unbilled_minutes: 31,
      non_billable_minutes: 15,
      billed_amount: 116.67,
      unbilled_amount: 51.67,
    });
    const byUser = Object.fromEntries(r.by_user.map(({ user_id, name: _name, ...rest }) => [user_id, rest]));
    expect(byUser).toEqual({
      [org.ownerId]: {
        billable_minutes: 90,
        billed_minutes: 60,
        unbilled_minutes: 30,
        non_billable_minutes: 15,
        billed_amount: 100,
        unbilled_amount: 50,
      },
      [alice.userId]: {
        billable_minutes: 11,
        billed_minutes: 10,
        unbilled_minutes: 1,
        non_billable_minutes: 0,
        billed_amount: 16.67,
        unbilled_amount: 1.67,
      },
    });
    expect(r.by_month).toEqual([
      {
        month: '2026-10',
        billable_minutes: 70,
        billed_minutes: 70,
        unbilled_minutes: 0,
        non_billable_minutes: 0,
        billed_amount: 116.67,
        unbilled_amount: 0,
      },
      {
        month: '2026-11',
        billable_minutes: 31,
        billed_minutes: 0,
        unbilled_minutes: 31,
        non_billable_minutes: 15,
        billed_amount: 0,
        unbilled_amount: 51.67,
      },
    ]);
  });

  test('takes project_id on create_invoice only for a project of the same lead', async ({ t, org }) => {
    const lead = await createLead(t, org);
    const otherLead = await createLead(t, org);
    const p = await createProject(t, org, { lead_id: lead._id });
    const body = { currency: 'USD', line_items: [{ description: 'x', quantity: 1, unit_price: 1 }] };
    const wrong = await req(t, org, 'POST', '/invoices', {
      ...body,
      lead_id: otherLead._id,
      project_id: p._id,
    });
    expect(detailFields(await readError(wrong, 400))).toEqual(['project_id']);
    const ok = await req(t, org, 'POST', '/invoices', { ...body, lead_id: lead._id, project_id: p._id });
    expect((await readOutput(ok, TOOL.create_invoice, 201)).invoice.project_id).toBe(p._id);
  });
});

describe('tasks of a project', () => {
  test('takes project_id on create and update, filters by it, and is released when the project goes', async ({
    t,
    org,
    other,
  }) => {
    const p = await createProject(t, org);
    const task = await createTask(t, org, { project_id: p._id, text: 'Kickoff call' });
    expect(task.project_id).toBe(p._id);
    await createTask(t, org, { text: 'Elsewhere' });
    const listed = await readOutput(await req(t, org, 'GET', `/tasks?project_id=${p._id}`), TOOL.list_tasks);
    expect(listed.tasks.map((x) => x._id)).toEqual([task._id]);
    const foreign = await createProject(t, other);
    const refused = await req(t, org, 'POST', '/tasks', { text: 'x', project_id: foreign._id });
    expect(detailFields(await readError(refused, 400))).toEqual(['project_id']);
    const moved = await req(t, org, 'PATCH', `/tasks/${task._id}`, { project_id: null });
    expect((await readOutput(moved, TOOL.update_task)).task.project_id).toBeNull();
    await req(t, org, 'PATCH', `/tasks/${task._id}`, { project_id: p._id });
    expect((await req(t, org, 'DELETE', `/projects/${p._id}`)).status).toBe(200);
    const after = await readOutput(await req(t, org, 'GET', `/tasks/${task._id}`), TOOL.get_task);
    expect(after.task.project_id).toBeNull();
  });
});

describe('access', () => {
  const sample = (path: string) => path.replace(':id', '0'.repeat(24)).replace(':entryId', '1'.repeat(24));

  test.for(projectRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s answers 402 on a plan without projects',
    async ([_name, r], { t, starter }) => {
      const res = await t.request(r.method, `/api/v1${sample(r.path)}`, {
        token: starter.token,
        ...(r.method === 'GET' ? {} : { body: {} }),
      });
      expect((await readError(res, 402)).error).toBe('plan_upgrade_required');
    },
  );

  test('needs read:projects to read and write:projects to write', async ({ t, org }) => {
    const p = await createProject(t, org);
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:projects']);
    expect((await req(t, org, 'GET', `/projects/${p._id}`, undefined, reader)).status).toBe(200);
    expect((await req(t, org, 'GET', `/projects/${p._id}/invoicing-report`, undefined, reader)).status).toBe(
      200,
    );
    const write = await req(
      t,
      org,
      'POST',
      `/projects/${p._id}/time-entries`,
      { date: '2026-11-03', minutes: 5, description: 'x' },
      reader,
    );
    expect((await readError(write, 403)).code).toBe('scope_missing');
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    expect((await req(t, org, 'GET', '/projects', undefined, leadsOnly)).status).toBe(403);
    const writer = await t.createPat(org.orgId, org.ownerId, ['write:projects']);
    expect((await req(t, org, 'PATCH', `/projects/${p._id}`, { name: 'Renamed' }, writer)).status).toBe(200);
  });

  test('lets viewers read only, members log time, managers delete', async ({ t, org }) => {
    const p = await createProject(t, org);
    const viewer = await t.createUser(org.orgId, 'viewer');
    const member = await t.createUser(org.orgId, 'member');
    expect((await req(t, org, 'GET', `/projects/${p._id}`, undefined, viewer)).status).toBe(200);
    expect((await req(t, org, 'POST', '/projects', { name: 'x', currency: 'USD' }, viewer)).status).toBe(403);
    const logged = await req(
      t,
      org,
      'POST',
      `/projects/${p._id}/time-entries`,
      { date: '2026-11-03', minutes: 5, description: 'x' },
      member,
    );
    expect(logged.status).toBe(201);
    expect((await req(t, org, 'DELETE', `/projects/${p._id}`, undefined, member)).status).toBe(403);
    const manager = await t.createUser(org.orgId, 'manager');
    expect((await req(t, org, 'DELETE', `/projects/${p._id}`, undefined, manager)).status).toBe(200);
  });

  test("answers 404 for another organization's project and its entries", async ({ t, org, other }) => {
    const p = await createProject(t, other, { hourly_rate: 10 });
    const e = await logTime(t, other, p._id);
    expect((await req(t, org, 'GET', `/projects/${p._id}`)).status).toBe(404);
    expect((await req(t, org, 'GET', `/projects/${p._id}/time-entries/${e._id}`)).status).toBe(404);
    expect((await req(t, org, 'POST', `/projects/${p._id}/invoice`)).status).toBe(404);
    expect((await req(t, org, 'GET', `/projects/${p._id}/invoicing-report`)).status).toBe(404);
  });
});

describe('tool declarations', () => {
  test('are in the projects toolset with honest annotations and the projects feature', () => {
    const names = [
      'list_projects',
      'get_project',
      'create_project',
      'update_project',
      'delete_project',
      'list_time_entries',
      'get_time_entry',
      'log_time_entry',
      'update_time_entry',
      'delete_time_entry',
      'invoice_project',
      'get_project_invoicing_report',
    ] as const;
    for (const name of names) {
      const tool = TOOL[name];
      expect(tool.toolset, name).toBe('projects');
      expect(tool.access, name).toMatchObject({ resource: 'projects', feature: 'projects' });
      expect(tool.annotations.openWorldHint, name).toBe(false);
      const read = name.startsWith('get_') || name.startsWith('list_');
      expect(tool.annotations.readOnlyHint, name).toBe(read);
      expect(tool.annotations.destructiveHint, name).toBe(name.startsWith('delete_'));
    }
    // Invoicing twice makes a second draft only from new time: not idempotent.
    expect(TOOL.invoice_project.annotations.idempotentHint).toBe(false);
  });
});
