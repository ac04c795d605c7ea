// Locks in the project races on PostgreSQL: parallel applies of one template to one lead make one
// project (one 201, the rest 200 with it), parallel invoicing of a project puts its time on one
// draft only, and parallel "make this the default onboarding template" leave exactly one default.
import { describe, expect } from 'vitest';
import {
  createLead,
  createProject,
  createProjectTemplate,
  fileTest,
  logTime,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const PARALLEL = 8;

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

const post = (t: TestContext, org: TestOrg, path: string, body: unknown = {}) =>
  t.request('POST', `/api/v1${path}`, { token: org.token, body });

describe('projects under concurrency', () => {
  test(`makes one project out of ${PARALLEL} parallel applies`, async ({ t, org }) => {
    const tpl = await createProjectTemplate(t, org, {
      tasks: [
        { text: 'One', offset_days: 0 },
        { text: 'Two', offset_days: 1, weight: 2 },
      ],
    });
    const lead = await createLead(t, org);
    const responses = await Promise.all(
      Array.from({ length: PARALLEL }, () =>
        post(t, org, `/project-templates/${tpl._id}/apply`, { lead_id: lead._id }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array.from({ length: PARALLEL - 1 }, () => 200), 201]);
    const bodies = await Promise.all(
      responses.map((r) => readOutput(r, TOOL.apply_project_template, r.status)),
    );
    expect(new Set(bodies.map((b) => b.project._id)).size).toBe(1);
    const projects = await readOutput(
      await t.request('GET', `/api/v1/projects?lead_id=${lead._id}`, { token: org.token }),
      TOOL.list_projects,
    );
    expect(projects.total).toBe(1);
    const tasks = await readOutput(
      await t.request('GET', `/api/v1/tasks?project_id=${bodies[0]?.project._id}`, { token: org.token }),
      TOOL.list_tasks,
    );
    expect(tasks.total).toBe(2);
  });

  test(`puts a project's time on one draft when invoiced ${PARALLEL} times in parallel`, async ({
    t,
    org,
  }) => {
    const lead = await createLead(t, org);
    const project = await createProject(t, org, { lead_id: lead._id, hourly_rate: 100 });
    for (let i = 0; i < 5; i++) await logTime(t, org, project._id, { minutes: 30 });
    const responses = await Promise.all(
      Array.from({ length: PARALLEL }, () => post(t, org, `/projects/${project._id}/invoice`)),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([
      201,
      ...Array.from({ length: PARALLEL - 1 }, () => 400),
    ]);
    const created = responses.find((r) => r.status === 201);
    if (!created) throw new Error('no invoice created');
    expect((await readOutput(created, TOOL.invoice_project, 201)).invoice.total).toBe(250);
  });

  test(`leaves one default onboarding template after ${PARALLEL} parallel changes`, async ({ t, org }) => {
    const templates = [];
    for (let i = 0; i < PARALLEL; i++) templates.push(await createProjectTemplate(t, org, { name: `T${i}` }));
    const responses = await Promise.all(
      templates.map((tpl) =>
        t.request('PATCH', `/api/v1/project-templates/${tpl._id}`, {
          token: org.token,
          body: { is_default_onboarding: true },
        }),
      ),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const listed = await readOutput(
      await t.request('GET', '/api/v1/project-templates?limit=100', { token: org.token }),
      TOOL.list_project_templates,
    );
    expect(listed.project_templates.filter((x) => x.is_default_onboarding).length).toBe(1);
  });
});
