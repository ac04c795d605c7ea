// Locks in project templates and client onboarding: template CRUD and bounds, one default onboarding
// template per organization, applying a template (tasks due relative to today, idempotent per lead
// and template, also under parallel requests), convert-to-client applying the default template,
// and the onboarding progress (percent by weight, overdue and next task, the three statuses).
import { describe, expect } from 'vitest';
import { dayAfter, dueAtOf, onboardingOf } from '../../tools/project-templates/store.ts';
import {
  type Caller,
  createLead,
  createProjectTemplate,
  detailFields,
  fileTest,
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

async function apply(
  t: TestContext,
  org: TestOrg,
  templateId: string,
  leadId: string,
  status = 201,
  as: Caller = org,
) {
  return readOutput(
    await req(t, org, 'POST', `/project-templates/${templateId}/apply`, { lead_id: leadId }, as),
    TOOL.apply_project_template,
    status,
  );
}
async function onboarding(t: TestContext, org: TestOrg, leadId: string, as: Caller = org) {
  return (
    await readOutput(
      await req(t, org, 'GET', `/project-templates/leads/${leadId}/onboarding`, undefined, as),
      TOOL.get_lead_onboarding,
    )
  ).onboarding;
}
async function projectTasks(t: TestContext, org: TestOrg, projectId: string, as: Caller = org) {
  return (
    await readOutput(
      await req(t, org, 'GET', `/tasks?project_id=${projectId}&sort=due_at`, undefined, as),
      TOOL.list_tasks,
    )
  ).tasks;
}

describe('templates', () => {
  test('creates with default weights, reads, merges PATCH and PUT, lists with search, deletes for good', async ({
    t,
    org,
  }) => {
    const tpl = await createProjectTemplate(t, org, {
      name: 'Website launch',
      currency: 'EUR',
      tasks: [
        { text: 'Kickoff', offset_days: 0 },
        { text: 'Go live', offset_days: 30, weight: 5 },
      ],
    });
    expect(tpl).toMatchObject({
      name: 'Website launch',
      currency: 'EUR',
      is_default_onboarding: false,
      tasks: [
        { text: 'Kickoff', offset_days: 0, weight: 1 },
        { text: 'Go live', offset_days: 30, weight: 5 },
      ],
    });
    const got = await readOutput(
      await req(t, org, 'GET', `/project-templates/${tpl._id}`),
      TOOL.get_project_template,
    );
    expect(got.project_template).toEqual(tpl);
    const patched = await readOutput(
      await req(t, org, 'PATCH', `/project-templates/${tpl._id}`, { name: 'Site launch' }),
      TOOL.update_project_template,
    );
    expect(patched.project_template).toMatchObject({
      name: 'Site launch',
      currency: 'EUR',
      tasks: tpl.tasks,
    });
    const put = await readOutput(
      await req(t, org, 'PUT', `/project-templates/${tpl._id}`, {
        tasks: [{ text: 'Only', offset_days: 1 }],
      }),
      TOOL.update_project_template,
    );
    expect(put.project_template).toMatchObject({
      name: 'Site launch',
      tasks: [{ text: 'Only', offset_days: 1, weight: 1 }],
    });
    const listed = await readOutput(
      await req(t, org, 'GET', '/project-templates?search=site'),
      TOOL.list_project_templates,
    );
    expect(listed.project_templates.map((x) => x._id)).toEqual([tpl._id]);
    expect((await req(t, org, 'DELETE', `/project-templates/${tpl._id}`)).status).toBe(200);
    expect((await req(t, org, 'GET', `/project-templates/${tpl._id}`)).status).toBe(404);
  });

  test('refuses out-of-bounds tasks with 400s naming the field', async ({ t, org }) => {
    const task = { text: 'x', offset_days: 0 };
    const cases: [unknown, string][] = [
      [[], 'tasks'],
      [Array.from({ length: 101 }, () => task), 'tasks'],
      [[{ ...task, text: 'x'.repeat(501) }], 'tasks.0.text'],
      [[{ ...task, text: ' ' }], 'tasks.0.text'],
      [[task, { ...task, offset_days: 366 }], 'tasks.1.offset_days'],
      [[{ ...task, offset_days: -1 }], 'tasks.0.offset_days'],
      [[{ ...task, weight: 0 }], 'tasks.0.weight'],
      [[{ ...task, weight: 101 }], 'tasks.0.weight'],
      [[{ ...task, weight: 1.5 }], 'tasks.0.weight'],
    ];
    for (const [tasks, field] of cases) {
      const res = await req(t, org, 'POST', '/project-templates', { name: 'Bounds', tasks });
      expect(detailFields(await readError(res, 400)), field).toEqual([field]);
    }
    expect(
      detailFields(await readError(await req(t, org, 'POST', '/project-templates', { tasks: [task] }), 400)),
    ).toEqual(['name']);
    const ok = await createProjectTemplate(t, org, {
      tasks: Array.from({ length: 100 }, () => ({ ...task, offset_days: 365, weight: 100 })),
    });
    expect(ok.tasks.length).toBe(100);
  });

  test('keeps at most one default onboarding template per organization', async ({ t, org, other }) => {
    const a = await createProjectTemplate(t, org, { name: 'A', is_default_onboarding: true });
    const b = await createProjectTemplate(t, org, { name: 'B', is_default_onboarding: true });
    const defaults = async () =>
      (
        await readOutput(
          await req(t, org, 'GET', '/project-templates?limit=100'),
          TOOL.list_project_templates,
        )
      ).project_templates
        .filter((x) => x.is_default_onboarding)
        .map((x) => x._id);
    expect(await defaults()).toEqual([b._id]);
    await req(t, org, 'PATCH', `/project-templates/${a._id}`, { is_default_onboarding: true });
    expect(await defaults()).toEqual([a._id]);
    await req(t, org, 'PATCH', `/project-templates/${a._id}`, { is_default_onboarding: false });
    expect(await defaults()).toEqual([]);
    // Another organization's default is its own.
    await createProjectTemplate(t, other, { is_default_onboarding: true });
    expect(await defaults()).toEqual([]);
  });

  test('lets managers and up manage templates, everyone read them; needs projects on the plan', async ({
    t,
    org,
    starter,
  }) => {
    const member = await t.createUser(org.orgId, 'member');
    const manager = await t.createUser(org.orgId, 'manager');
    const body = { name: 'Team', tasks: [{ text: 'x', offset_days: 0 }] };
    expect((await req(t, org, 'POST', '/project-templates', body, member)).status).toBe(403);
    expect((await req(t, org, 'GET', '/project-templates', undefined, member)).status).toBe(200);
    expect((await req(t, org, 'POST', '/project-templates', body, manager)).status).toBe(201);
    const res = await req(t, org, 'GET', '/project-templates', undefined, starter);
    expect((await readError(res, 402)).error).toBe('plan_upgrade_required');
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:projects']);
    expect((await req(t, org, 'GET', '/project-templates', undefined, reader)).status).toBe(200);
    expect((await readError(await req(t, org, 'POST', '/project-templates', body, reader), 403)).code).toBe(
      'scope_missing',
    );
  });
});

describe('applying a template', () => {
  test('creates the project with tasks due relative to today, then returns it again with 200', async ({
    t,
    org,
    other,
  }) => {
    const tpl = await createProjectTemplate(t, org, {
      name: 'Onboarding ACME',
      currency: 'GBP',
      tasks: [
        { text: 'Welcome email', offset_days: 0 },
        { text: 'Training', offset_days: 14, weight: 3 },
      ],
    });
    const lead = await createLead(t, org);
    const first = await apply(t, org, tpl._id, lead._id);
    expect(first.created).toBe(true);
    expect(first.project).toMatchObject({
      name: 'Onboarding ACME',
      lead_id: lead._id,
      currency: 'GBP',
      status: 'active',
    });
    const now = new Date();
    const tasks = await projectTasks(t, org, first.project._id);
    expect(tasks.map((x) => [x.text, x.lead_id, x.assigned_to, x.due_at])).toEqual([
      ['Welcome email', lead._id, org.ownerId, dueAtOf(dayAfter(now, 0)).toISOString()],
      ['Training', lead._id, org.ownerId, dueAtOf(dayAfter(now, 14)).toISOString()],
    ]);
    const second = await apply(t, org, tpl._id, lead._id, 200);
    expect(second).toEqual({ project: first.project, created: false });
    expect((await projectTasks(t, org, first.project._id)).length).toBe(2);
    // Another lead gets its own project; a foreign lead is a 404.
    const otherLead = await createLead(t, org);
    expect((await apply(t, org, tpl._id, otherLead._id)).project._id).not.toBe(first.project._id);
    const foreign = await createLead(t, other);
    expect(
      (await req(t, org, 'POST', `/project-templates/${tpl._id}/apply`, { lead_id: foreign._id })).status,
    ).toBe(404);
  });

  test('makes one project out of five parallel applies', async ({ t, org }) => {
    const tpl = await createProjectTemplate(t, org, { name: 'Parallel' });
    const lead = await createLead(t, org);
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        req(t, org, 'POST', `/project-templates/${tpl._id}/apply`, { lead_id: lead._id }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    const ids = await Promise.all(
      responses.map(async (r) => (await readOutput(r, TOOL.apply_project_template, r.status)).project._id),
    );
    expect(new Set(ids).size).toBe(1);
    const listed = await readOutput(
      await req(t, org, 'GET', `/projects?lead_id=${lead._id}`),
      TOOL.list_projects,
    );
    expect(listed.total).toBe(1);
    expect((await projectTasks(t, org, ids[0] ?? '')).length).toBe(1);
  });
});

describe('client onboarding', () => {
  test('is not started without a default template, and converting applies the default one once', async ({
    t,
    org,
  }) => {
    const org2 = await t.createOrg({ name: 'Onboarding Org', plan: 'pro' });
    const before = await createLead(t, org2);
    expect(
      (
        await readOutput(
          await req(t, org, 'POST', `/leads/${before._id}/convert-to-client`, {}, org2),
          TOOL.convert_lead_to_client,
        )
      ).lead.status,
    ).toBe('client');
    expect(await onboarding(t, org, before._id, org2)).toEqual({
      lead_id: before._id,
      project_id: null,
      status: 'not_started',
      percent: 0,
      tasks_total: 0,
      tasks_done: 0,
      overdue_tasks: 0,
      next_task: null,
    });

    const tpl = await createProjectTemplate(t, org2, {
      name: 'Client onboarding',
      is_default_onboarding: true,
      tasks: [
        { text: 'Welcome call', offset_days: 0, weight: 1 },
        { text: 'Data import', offset_days: 3, weight: 3 },
        { text: 'Training', offset_days: 10, weight: 6 },
      ],
    });
    const lead = await createLead(t, org2);
    await req(t, org, 'POST', `/leads/${lead._id}/convert-to-client`, {}, org2);
    const started = await onboarding(t, org, lead._id, org2);
    expect(started).toMatchObject({
      status: 'in_progress',
      percent: 0,
      tasks_total: 3,
      tasks_done: 0,
      overdue_tasks: 0,
    });
    expect(started.project_id).not.toBeNull();
    expect(started.next_task).toMatchObject({ text: 'Welcome call', due_date: dayAfter(new Date(), 0) });
    const projects = await readOutput(
      await req(t, org, 'GET', `/projects?lead_id=${lead._id}`, undefined, org2),
      TOOL.list_projects,
    );
    expect(projects.projects.map((p) => [p._id, p.name])).toEqual([
      [started.project_id, 'Client onboarding'],
    ]);
    // Converting again changes nothing; applying the template by hand returns the same project.
    await req(t, org, 'POST', `/leads/${lead._id}/convert-to-client`, {}, org2);
    expect((await apply(t, org, tpl._id, lead._id, 200, org2)).project._id).toBe(started.project_id);

    // Percent by weight: 3 of 10 done -> 30; then 4 of 10 -> 40; all done -> completed, 100.
    const tasks = await projectTasks(t, org, started.project_id ?? '', org2);
    const byText = Object.fromEntries(tasks.map((x) => [x.text, x._id]));
    await req(t, org, 'POST', `/tasks/${byText['Data import']}/complete`, {}, org2);
    expect(await onboarding(t, org, lead._id, org2)).toMatchObject({
      status: 'in_progress',
      percent: 30,
      tasks_done: 1,
    });
    // An overdue task (due long ago) counts, and becomes the next task.
    await req(t, org, 'PATCH', `/tasks/${byText.Training}`, { due_at: '2000-01-01T00:00:00Z' }, org2);
    expect(await onboarding(t, org, lead._id, org2)).toMatchObject({
      overdue_tasks: 1,
      next_task: { id: byText.Training, text: 'Training', due_date: '2000-01-01' },
    });
    await req(t, org, 'POST', `/tasks/${byText['Welcome call']}/complete`, {}, org2);
    expect(await onboarding(t, org, lead._id, org2)).toMatchObject({
      percent: 40,
      tasks_done: 2,
      overdue_tasks: 1,
    });
    await req(t, org, 'POST', `/tasks/${byText.Training}/complete`, {}, org2);
    expect(await onboarding(t, org, lead._id, org2)).toMatchObject({
      status: 'completed',
      percent: 100,
      tasks_total: 3,
      tasks_done: 3,
      overdue_tasks: 0,
      next_task: null,
    });
  });

  test('is read on every plan, and 404 for an unknown or foreign lead', async ({
    t,
    org,
    other,
    starter,
  }) => {
    const lead = await createLead(t, starter);
    expect((await onboarding(t, org, lead._id, starter)).status).toBe('not_started');
    const foreign = await createLead(t, other);
    expect((await req(t, org, 'GET', `/project-templates/leads/${foreign._id}/onboarding`)).status).toBe(404);
    expect((await req(t, org, 'GET', `/project-templates/leads/${'a'.repeat(24)}/onboarding`)).status).toBe(
      404,
    );
    expect((await req(t, org, 'GET', '/project-templates/leads/nope/onboarding')).status).toBe(400);
    // Converting on a plan without projects applies nothing.
    await req(t, org, 'POST', `/leads/${lead._id}/convert-to-client`, {}, starter);
    expect((await onboarding(t, org, lead._id, starter)).status).toBe('not_started');
  });

  test('computes percent, overdue and next task at a fixed today (hand-computed)', () => {
    const now = new Date('2026-11-24T10:00:00Z');
    const task = (id: string, weight: number, dueAt: string | null, isComplete: boolean) => ({
      id,
      text: `Task ${id}`,
      dueAt: dueAt === null ? null : new Date(dueAt),
      isComplete,
      weight,
    });
    // weights 2 + 3 + 5 + 7 = 17, done 2 + 5 = 7: 700 / 17 = 41.17 -> 41 (rounded down).
    const list = [
      task('a', 2, '2026-11-20T23:59:59Z', true),
      task('b', 3, '2026-11-23T23:59:59Z', false), // overdue
      task('c', 5, null, true),
      task('d', 7, '2026-11-24T23:59:59Z', false), // due today: not overdue yet
    ];
    expect(onboardingOf('L', 'P', list, now)).toEqual({
      lead_id: 'L',
      project_id: 'P',
      status: 'in_progress',
      percent: 41,
      tasks_total: 4,
      tasks_done: 2,
      overdue_tasks: 1,
      next_task: { id: 'b', text: 'Task b', due_date: '2026-11-23' },
    });
    // 0% with open tasks is in progress; undated tasks come last as the next task.
    const none = onboardingOf(
      'L',
      'P',
      [task('x', 1, null, false), task('y', 1, '2026-12-01T23:59:59Z', false)],
      now,
    );
    expect(none).toMatchObject({
      status: 'in_progress',
      percent: 0,
      overdue_tasks: 0,
      next_task: { id: 'y' },
    });
    // 99.x% is not 100: 99 of 100 by weight.
    expect(onboardingOf('L', 'P', [task('m', 99, null, true), task('n', 1, null, false)], now).percent).toBe(
      99,
    );
    expect(onboardingOf('L', 'P', [], now)).toMatchObject({ status: 'completed', percent: 100 });
    expect(onboardingOf('L', null, [], now).status).toBe('not_started');
    expect(dayAfter(new Date('2026-12-31T23:30:00Z'), 1)).toBe('2027-01-01');
  });
});
