// Locks in tasks over REST: CRUD, list filters and conventions, completion (task.completed once), snooze/unsnooze behind task_snooze, the caller's open tasks, trash and access rules.
import { and, eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { tasks } from '../../tools/tasks/tables.ts';
import {
  type Caller,
  createLead,
  createTask,
  detailFields,
  fileTest,
  type InputOf,
  eventsOf as outboxEventsOf,
  readError,
  readOutput,
  type TestContext,
  type TestOrg,
  TOOL,
} from '../fixtures/index.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'starter', otherPlan: 'free' }).extend(
  'freeOrg',
  { scope: 'file' },
  async ({ t }) => t.createOrg({ plan: 'free', name: 'Free Org' }),
);

/** A new lead's id. */
async function newLead(t: TestContext, org: TestOrg, as: Caller = org, name = 'Task Lead'): Promise<string> {
  return (await createLead(t, as, { name }))._id;
}

async function list(t: TestContext, org: TestOrg, query: string, as: Caller = org) {
  const res = await t.request('GET', `/api/v1/tasks${query}`, { token: as.token });
  return readOutput(res, TOOL.list_tasks);
}

async function myTasks(t: TestContext, query: string, as: Caller) {
  const res = await t.request('GET', `/api/v1/me/tasks${query}`, { token: as.token });
  return readOutput(res, TOOL.list_my_tasks);
}

/** The payloads of one task's `event` events. */
async function eventsOf(t: TestContext, taskId: string, event: string): Promise<Record<string, unknown>[]> {
  return (await outboxEventsOf(t, taskId)).filter((e) => e.event === event).map((e) => e.data);
}

describe('create and get', () => {
  test('creates a task assigned to the caller by default and emits task.created once', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const due = at(2 * DAY);
    const task = await createTask(t, org, {
      text: '  Call back about pricing  ',
      lead_id: leadId,
      due_at: due,
    });
    expect(task).toMatchObject({
      lead_id: leadId,
      assigned_to: org.ownerId,
      text: 'Call back about pricing',
      due_at: due,
      is_complete: false,
      completed_at: null,
      completed_by: null,
      snoozed_until: null,
      created_by: org.ownerId,
    });
    expect(task._id).toMatch(/^[0-9a-f]{24}$/);
    const res = await t.request('GET', `/api/v1/tasks/${task._id}`, { token: org.token });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.get_task)).task).toEqual(task);

    const created = await eventsOf(t, task._id, 'task.created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ _id: task._id, text: 'Call back about pricing', lead_id: leadId });
  });

  test('creates a standalone task and one assigned to another active user', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const task = await createTask(t, org, { text: 'Prepare the QBR deck', assigned_to: member.userId });
    expect(task.lead_id).toBeNull();
    expect(task.assigned_to).toBe(member.userId);
    expect(task.due_at).toBeNull();
  });

  test('answers 404 for a lead that is unknown, trashed or of another organization', async ({
    t,
    org,
    other,
  }) => {
    const foreignLead = await newLead(t, org, other);
    const trashed = await newLead(t, org);
    expect((await t.request('DELETE', `/api/v1/leads/${trashed}`, { token: org.token })).status).toBe(200);
    for (const leadId of [foreignLead, trashed, '0123456789abcdef01234567']) {
      const res = await t.request('POST', '/api/v1/tasks', {
        token: org.token,
        body: { text: 'x', lead_id: leadId },
      });
      expect(res.status).toBe(404);
      expect((await readError(res, 404)).message).toBe('Lead not found');
    }
  });

  test('rejects bad input with field details', async ({ t, org, other }) => {
    const foreignUser = await t.createUser(other.orgId, 'member');
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'text'],
      [{ text: '   ' }, 'text'],
      [{ text: 'a'.repeat(5001) }, 'text'],
      [{ text: 'nul\u0000here' }, 'text'],
      [{ text: 'x', due_at: 'tomorrow' }, 'due_at'],
      [{ text: 'x', due_at: '2026-13-01T00:00:00Z' }, 'due_at'],
      [{ text: 'x', lead_id: 'nope' }, 'lead_id'],
      [{ text: 'x', assigned_to: foreignUser.userId }, 'assigned_to'],
      // Unknown keys are refused as a whole (strict input).
      [{ text: 'x', is_complete: true }, '(root)'],
    ];
    for (const [body, field] of cases) {
      const res = await t.request('POST', '/api/v1/tasks', { token: org.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(detailFields(await readError(res, 400)), JSON.stringify(body)).toContain(field);
    }
    expect((await t.request('GET', '/api/v1/tasks/nope', { token: org.token })).status).toBe(400);
  });

  test('answers 404 for another organization', async ({ t, org, other }) => {
    const task = await createTask(t, org, { text: 'Private' });
    expect((await t.request('GET', `/api/v1/tasks/${task._id}`, { token: other.token })).status).toBe(404);
  });
});

describe('list_tasks', () => {
  let leadId: string;
  let member: { userId: string; token: string };
  const ids: Record<string, string> = {};

  test.beforeAll(async ({ t, org }) => {
    leadId = await newLead(t, org, org, 'List Lead');
    member = await t.createUser(org.orgId, 'member');
    ids.overdue = (
      await createTask(t, org, { text: 'Overdue zebra', lead_id: leadId, due_at: at(-2 * DAY) })
    )._id;
    ids.soon = (await createTask(t, org, { text: 'Soon zebra', lead_id: leadId, due_at: at(DAY) }))._id;
    ids.later = (
      await createTask(t, org, { text: 'Later zebra', lead_id: leadId, due_at: at(10 * DAY) })
    )._id;
    ids.undated = (await createTask(t, org, { text: 'Undated zebra', lead_id: leadId }))._id;
    ids.member = (
      await createTask(t, org, {
        text: 'Member zebra',
        lead_id: leadId,
        assigned_to: member.userId,
        due_at: at(-DAY),
      })
    )._id;
    const done = await createTask(t, org, { text: 'Done zebra', lead_id: leadId, due_at: at(-3 * DAY) });
    ids.done = done._id;
    expect((await t.request('POST', `/api/v1/tasks/${done._id}/complete`, { token: org.token })).status).toBe(
      200,
    );
  });

  test('filters by lead and pages with total and totalPages', async ({ t, org }) => {
    const page1 = await list(t, org, `?lead_id=${leadId}&limit=4`);
    expect(page1).toMatchObject({ total: 6, page: 1, limit: 4, totalPages: 2 });
    expect(page1.tasks).toHaveLength(4);
    const page2 = await list(t, org, `?lead_id=${leadId}&limit=4&page=2`);
    expect(page2.tasks).toHaveLength(2);
    const all = [...page1.tasks, ...page2.tasks].map((x) => x._id);
    expect(new Set(all).size).toBe(6);
    // Default order: newest first.
    expect(page1.tasks[0]?._id).toBe(ids.done);
  });

  test('sorts by due_at with undated tasks last, both directions', async ({ t, org }) => {
    const asc = (await list(t, org, `?lead_id=${leadId}&sort=due_at`)).tasks.map((x) => x._id);
    expect(asc).toEqual([ids.done, ids.overdue, ids.member, ids.soon, ids.later, ids.undated]);
    const desc = (await list(t, org, `?lead_id=${leadId}&sort=-due_at`)).tasks.map((x) => x._id);
    expect(desc).toEqual([ids.later, ids.soon, ids.member, ids.overdue, ids.done, ids.undated]);
    expect((await list(t, org, `?lead_id=${leadId}&sort=-updated_at`)).tasks).toHaveLength(6);
  });

  test('filters by assignee, completion, due window, overdue and search', async ({ t, org }) => {
    const byMember = await list(t, org, `?lead_id=${leadId}&assigned_to=${member.userId}`);
    expect(byMember.tasks.map((x) => x._id)).toEqual([ids.member]);
    const done = await list(t, org, `?lead_id=${leadId}&is_complete=true`);
    expect(done.tasks.map((x) => x._id)).toEqual([ids.done]);
    expect((await list(t, org, `?lead_id=${leadId}&is_complete=false`)).total).toBe(5);
    const overdue = await list(t, org, `?lead_id=${leadId}&overdue=true&sort=due_at`);
    expect(overdue.tasks.map((x) => x._id)).toEqual([ids.overdue, ids.member]);
    const window = await list(
      t,
      org,
      `?lead_id=${leadId}&due_after=${encodeURIComponent(at(0))}&due_before=${encodeURIComponent(at(5 * DAY))}`,
    );
    expect(window.tasks.map((x) => x._id)).toEqual([ids.soon]);
    const found = await list(t, org, '?search=undated%20zebra');
    expect(found.tasks.map((x) => x._id)).toEqual([ids.undated]);
    expect((await list(t, org, '?search=50%25')).total).toBe(0);
  });

  test('rejects bad list parameters with 400', async ({ t, org }) => {
    for (const query of [
      '?limit=101',
      '?limit=0',
      '?page=0',
      '?sort=text',
      '?is_complete=yes',
      '?overdue=1',
      '?due_before=yesterday',
      '?lead_id=nope',
    ]) {
      const res = await t.request('GET', `/api/v1/tasks${query}`, { token: org.token });
      expect(res.status, query).toBe(400);
      expect((await readError(res, 400)).details?.length, query).toBeGreaterThan(0);
    }
    expect((await list(t, org, '?limit=100')).limit).toBe(100);
  });

  test("does not show another organization's tasks", async ({ t, org, other }) => {
    expect((await list(t, org, `?lead_id=${leadId}`, other)).total).toBe(0);
  });
});

describe('update and complete', () => {
  test('merges the fields sent and clears the due date with null', async ({ t, org }) => {
    const leadId = await newLead(t, org);
    const task = await createTask(t, org, { text: 'Draft', due_at: at(DAY) });
    const res = await t.request('PATCH', `/api/v1/tasks/${task._id}`, {
      token: org.token,
      body: { text: 'Final', lead_id: leadId },
    });
    expect(res.status).toBe(200);
    const updated = (await readOutput(res, TOOL.update_task)).task;
    expect(updated).toMatchObject({ text: 'Final', lead_id: leadId, due_at: task.due_at });
    const cleared = await t.request('PATCH', `/api/v1/tasks/${task._id}`, {
      token: org.token,
      body: { due_at: null, lead_id: null },
    });
    expect((await readOutput(cleared, TOOL.update_task)).task).toMatchObject({ due_at: null, lead_id: null });
    const bad = await t.request('PATCH', `/api/v1/tasks/${task._id}`, {
      token: org.token,
      body: { text: '' },
    });
    expect(bad.status).toBe(400);
  });

  test('answers PUT like PATCH: only the fields sent change', async ({ t, org }) => {
    const task = await createTask(t, org, { text: 'Call back', due_at: at(DAY) });
    const res = await t.request('PUT', `/api/v1/tasks/${task._id}`, {
      token: org.token,
      body: { text: 'Call back today' },
    });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.update_task)).task).toMatchObject({
      text: 'Call back today',
      due_at: task.due_at,
    });
    const bad = await t.request('PUT', `/api/v1/tasks/${task._id}`, { token: org.token, body: { text: '' } });
    expect(bad.status).toBe(400);
  });

  test('completes once: task.completed is emitted once, repeats return the task unchanged', async ({
    t,
    org,
  }) => {
    const task = await createTask(t, org, { text: 'Send contract' });
    const first = await t.request('POST', `/api/v1/tasks/${task._id}/complete`, { token: org.token });
    expect(first.status).toBe(200);
    const done = (await readOutput(first, TOOL.complete_task)).task;
    expect(done).toMatchObject({ is_complete: true, completed_by: org.ownerId });
    expect(done.completed_at).not.toBeNull();
    const again = await t.request('POST', `/api/v1/tasks/${task._id}/complete`, { token: org.token });
    expect((await readOutput(again, TOOL.complete_task)).task).toEqual(done);
    const viaUpdate = await t.request('PATCH', `/api/v1/tasks/${task._id}`, {
      token: org.token,
      body: { is_complete: true },
    });
    expect((await readOutput(viaUpdate, TOOL.update_task)).task.completed_at).toBe(done.completed_at);
    const events = await eventsOf(t, task._id, 'task.completed');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ _id: task._id, is_complete: true, completed_by: org.ownerId });
  });

  test('treats is_complete true on update as completion and false as reopening', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const task = await createTask(t, org, { text: 'Book the demo' });
    const res = await t.request('PATCH', `/api/v1/tasks/${task._id}`, {
      token: member.token,
      body: { is_complete: true },
    });
    expect((await readOutput(res, TOOL.update_task)).task).toMatchObject({
      is_complete: true,
      completed_by: member.userId,
    });
    expect(await eventsOf(t, task._id, 'task.completed')).toHaveLength(1);
    const reopen = await t.request('PATCH', `/api/v1/tasks/${task._id}`, {
      token: org.token,
      body: { is_complete: false },
    });
    expect((await readOutput(reopen, TOOL.update_task)).task).toMatchObject({
      is_complete: false,
      completed_at: null,
      completed_by: null,
    });
    // Completing again after a reopen is a new completion.
    await t.request('POST', `/api/v1/tasks/${task._id}/complete`, { token: org.token });
    expect(await eventsOf(t, task._id, 'task.completed')).toHaveLength(2);
  });
});

describe('snooze and unsnooze', () => {
  test('needs the task_snooze plan feature (402 on free)', async ({ t, freeOrg }) => {
    const res = await t.request('POST', '/api/v1/tasks', {
      token: freeOrg.token,
      body: { text: 'Free task' },
    });
    const task = (await readOutput(res, TOOL.create_task, 201)).task;
    const snooze = await t.request('POST', `/api/v1/tasks/${task._id}/snooze`, {
      token: freeOrg.token,
      body: { until: at(DAY) },
    });
    expect(snooze.status).toBe(402);
    expect(await readError(snooze, 402)).toMatchObject({
      error: 'plan_upgrade_required',
      feature: 'task_snooze',
      current_plan: 'free',
    });
    const unsnooze = await t.request('POST', `/api/v1/tasks/${task._id}/unsnooze`, { token: freeOrg.token });
    expect(unsnooze.status).toBe(402);
  });

  test('snoozes until a future time and unsnoozes (idempotently)', async ({ t, org }) => {
    const task = await createTask(t, org, { text: 'Snooze me', due_at: at(DAY) });
    const until = at(3 * DAY);
    const res = await t.request('POST', `/api/v1/tasks/${task._id}/snooze`, {
      token: org.token,
      body: { until },
    });
    expect(res.status).toBe(200);
    expect((await readOutput(res, TOOL.snooze_task)).task.snoozed_until).toBe(until);
    const un = await t.request('POST', `/api/v1/tasks/${task._id}/unsnooze`, { token: org.token });
    expect(un.status).toBe(200);
    const cleared = (await readOutput(un, TOOL.unsnooze_task)).task;
    expect(cleared.snoozed_until).toBeNull();
    const again = await t.request('POST', `/api/v1/tasks/${task._id}/unsnooze`, { token: org.token });
    expect(again.status).toBe(200);
    expect((await readOutput(again, TOOL.unsnooze_task)).task).toEqual(cleared);
  });

  test('rejects a past, too distant or malformed time, and a completed task', async ({ t, org }) => {
    const task = await createTask(t, org, { text: 'Bad snooze' });
    for (const until of [at(-HOUR), at(400 * DAY), 'next week', undefined]) {
      const res = await t.request('POST', `/api/v1/tasks/${task._id}/snooze`, {
        token: org.token,
        body: until === undefined ? {} : { until },
      });
      expect(res.status, String(until)).toBe(400);
      expect(detailFields(await readError(res, 400))).toEqual(['until']);
    }
    await t.request('POST', `/api/v1/tasks/${task._id}/complete`, { token: org.token });
    const done = await t.request('POST', `/api/v1/tasks/${task._id}/snooze`, {
      token: org.token,
      body: { until: at(DAY) },
    });
    expect(done.status).toBe(409);
  });

  test('forbids a viewer to snooze', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    const task = await createTask(t, org, { text: 'Viewer cannot' });
    const res = await t.request('POST', `/api/v1/tasks/${task._id}/unsnooze`, { token: viewer.token });
    expect(res.status).toBe(403);
    expect(await readError(res, 403)).toMatchObject({
      error: 'Forbidden',
      required_permission: 'tasks.edit',
    });
  });
});

describe('list_my_tasks', () => {
  test("lists the caller's open, unsnoozed tasks, due first and undated last", async ({ t, org }) => {
    const me = await t.createUser(org.orgId, 'member');
    const colleague = await t.createUser(org.orgId, 'member');
    const mine = (text: string, extra: Partial<InputOf<'create_task'>> = {}) =>
      createTask(t, org, { text, assigned_to: me.userId, ...extra });
    const late = await mine('Late', { due_at: at(-DAY) });
    const soon = await mine('Soon', { due_at: at(2 * HOUR) });
    const far = await mine('Far', { due_at: at(20 * DAY) });
    const undated = await mine('Undated');
    const snoozed = await mine('Snoozed', { due_at: at(-2 * DAY) });
    await t.request('POST', `/api/v1/tasks/${snoozed._id}/snooze`, {
      token: me.token,
      body: { until: at(DAY) },
    });
    const expired = await mine('Snooze over', { due_at: at(3 * DAY) });
    await t.services.db.system
      .update(tasks)
      .set({ snoozedUntil: new Date(Date.now() - HOUR) })
      .where(eq(tasks.id, expired._id));
    const completed = await mine('Completed', { due_at: at(-DAY) });
    await t.request('POST', `/api/v1/tasks/${completed._id}/complete`, { token: me.token });
    const trashed = await mine('Trashed', { due_at: at(-DAY) });
    await t.request('DELETE', `/api/v1/tasks/${trashed._id}`, { token: me.token });
    await createTask(t, org, { text: "Colleague's", assigned_to: colleague.userId, due_at: at(-DAY) });

    const all = await myTasks(t, '', me);
    expect(all.tasks.map((x) => x.text)).toEqual(['Late', 'Soon', 'Snooze over', 'Far', 'Undated']);
    expect(all).toMatchObject({ total: 5, page: 1, limit: 25, totalPages: 1 });
    const dueSoon = await myTasks(t, `?due_before=${encodeURIComponent(at(DAY))}`, me);
    expect(dueSoon.tasks.map((x) => x._id)).toEqual([late._id, soon._id]);
    const paged = await myTasks(t, '?limit=2&page=3', me);
    expect(paged.tasks.map((x) => x._id)).toEqual([undated._id]);
    expect(paged.totalPages).toBe(3);
    expect(far.text).toBe('Far');

    expect((await t.request('GET', '/api/v1/me/tasks?limit=101', { token: me.token })).status).toBe(400);
    expect((await t.request('GET', '/api/v1/me/tasks?due_before=x', { token: me.token })).status).toBe(400);
  });
});

describe('trash', () => {
  test('deletes to the trash and restores; the trash lists the task by its text', async ({ t, org }) => {
    const task = await createTask(t, org, { text: 'Trash me' });
    const del = await t.request('DELETE', `/api/v1/tasks/${task._id}`, { token: org.token });
    expect(del.status).toBe(200);
    expect(await readOutput(del, TOOL.delete_task)).toEqual({ message: 'Task moved to the trash' });
    expect((await t.request('GET', `/api/v1/tasks/${task._id}`, { token: org.token })).status).toBe(404);
    const trash = await readOutput(
      await t.request('GET', '/api/v1/trash?type=task&limit=100', { token: org.token }),
      TOOL.list_trash,
    );
    expect(trash.items.find((i) => i._id === task._id)).toMatchObject({ type: 'task', name: 'Trash me' });
    const restore = await t.request('POST', `/api/v1/trash/${task._id}/restore`, { token: org.token });
    expect(restore.status).toBe(200);
    expect(await readOutput(restore, TOOL.restore_trash_item)).toMatchObject({
      type: 'task',
      task: { _id: task._id, text: 'Trash me' },
    });
    expect((await t.request('GET', `/api/v1/tasks/${task._id}`, { token: org.token })).status).toBe(200);
  });

  test('refuses to restore a task while its lead is in the trash; the lead brings it back', async ({
    t,
    org,
  }) => {
    const leadId = await newLead(t, org);
    const task = await createTask(t, org, { text: 'Child task', lead_id: leadId });
    await t.request('DELETE', `/api/v1/tasks/${task._id}`, { token: org.token });
    await t.request('DELETE', `/api/v1/leads/${leadId}`, { token: org.token });
    const refused = await t.request('POST', `/api/v1/trash/${task._id}/restore`, { token: org.token });
    expect(refused.status).toBe(409);
    expect((await readError(refused, 409)).message).toBe('Restore its lead first');

    const withLead = await createTask(t, org, { text: 'Goes with lead', lead_id: await newLead(t, org) });
    const lead2 = withLead.lead_id ?? '';
    await t.request('DELETE', `/api/v1/leads/${lead2}`, { token: org.token });
    expect((await t.request('GET', `/api/v1/tasks/${withLead._id}`, { token: org.token })).status).toBe(404);
    await t.request('POST', `/api/v1/trash/${lead2}/restore`, { token: org.token });
    expect((await t.request('GET', `/api/v1/tasks/${withLead._id}`, { token: org.token })).status).toBe(200);
  });
});

describe('permissions, scopes and ownership', () => {
  test('lets a viewer read but not write, and a member delete', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    const member = await t.createUser(org.orgId, 'member');
    const task = await createTask(t, org, { text: 'Perm task' });
    expect((await t.request('GET', `/api/v1/tasks/${task._id}`, { token: viewer.token })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/me/tasks', { token: viewer.token })).status).toBe(200);
    const writes: [string, string, unknown, string][] = [
      ['POST', '/api/v1/tasks', { text: 'x' }, 'tasks.create'],
      ['PATCH', `/api/v1/tasks/${task._id}`, { text: 'x' }, 'tasks.edit'],
      ['POST', `/api/v1/tasks/${task._id}/complete`, undefined, 'tasks.edit'],
      ['DELETE', `/api/v1/tasks/${task._id}`, undefined, 'tasks.delete'],
    ];
    for (const [method, path, body, permission] of writes) {
      const res = await t.request(method, path, { token: viewer.token, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await readError(res, 403)).toMatchObject({
        error: 'Forbidden',
        required_permission: permission,
      });
    }
    expect((await t.request('DELETE', `/api/v1/tasks/${task._id}`, { token: member.token })).status).toBe(
      200,
    );
  });

  test('holds a PAT to the leads scopes', async ({ t, org }) => {
    const { token } = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    const res = await t.request('POST', '/api/v1/tasks', { token, body: { text: 'Scoped' } });
    expect(res.status).toBe(403);
    expect((await readError(res, 403)).error).toContain('write:leads');
    expect((await t.request('GET', '/api/v1/tasks', { token })).status).toBe(200);
    const contactsOnly = await t.createPat(org.orgId, org.ownerId, ['read:contacts']);
    expect((await t.request('GET', '/api/v1/me/tasks', { token: contactsOnly.token })).status).toBe(403);
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    expect(
      (await t.request('POST', '/api/v1/tasks', { token: writer.token, body: { text: 'ok' } })).status,
    ).toBe(201);
  });

  test("hands a deleted user's tasks to the heir", async ({ t, org }) => {
    const leaving = await t.createUser(org.orgId, 'member');
    const task = await createTask(t, org, { text: 'Inherited', assigned_to: leaving.userId });
    const refused = await t.request('DELETE', `/api/v1/users/${leaving.userId}`, { token: org.token });
    expect(refused.status).toBe(400);
    const res = await t.request('DELETE', `/api/v1/users/${leaving.userId}`, {
      token: org.token,
      body: { transfer_to_user_id: org.ownerId },
    });
    expect(res.status).toBe(200);
    const [row] = await t.services.db.system
      .select()
      .from(tasks)
      .where(and(eq(tasks.id, task._id), eq(tasks.orgId, org.orgId)));
    expect(row?.assignedTo).toBe(org.ownerId);
    expect(row?.deletedAt).toBeNull();
  });
});
