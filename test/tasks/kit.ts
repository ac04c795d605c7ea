// The test kit of tools/tasks (test/README.md "Test kits"): the completion machine is driven by PATCH is_complete.
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { tasks } from '../../tools/tasks/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';
import { createAt, createLeadOver, insertLead, readAt, sendOk } from '../fixtures/kit-helpers.ts';

const TEXT = { body: { text: 'Call back' }, text: 'text' };

export const kit = defineKit({
  area: 'tasks',
  bodies: {
    create_task: TEXT,
    update_task: TEXT,
    delete_task: NO_BODY,
    complete_task: NO_BODY,
    // A day ahead: a snooze is at most a year ahead.
    snooze_task: { body: { until: new Date(Date.now() + 86_400_000).toISOString() }, text: 'until' },
    unsnooze_task: NO_BODY,
  },
  victims: {
    '/tasks': async ({ t, org }) => {
      const leadId = await insertLead({ t }, org);
      const id = newId();
      await t.services.db.system.insert(tasks).values({
        id,
        orgId: org.orgId,
        leadId,
        assignedTo: org.ownerId,
        text: 'Victim task',
        dueAt: new Date(Date.now() + 86_400_000),
        snoozedUntil: new Date(Date.now() + 3_600_000),
      });
      return { id, read: () => t.services.db.system.select().from(tasks).where(eq(tasks.id, id)) };
    },
  },
  machines: {
    task: {
      moves: 'open -> complete (task.completed); complete -> open',
      field: 'is_complete',
      driver: (scope) => ({
        create: () => createAt(scope, '/api/v1/tasks', 'task', { text: 'Call back' }),
        move: (id, to) =>
          scope.t.request('PATCH', `/api/v1/tasks/${id}`, {
            token: scope.org.token,
            body: { is_complete: to === 'complete' },
          }),
        read: (id) => readAt(scope, `/api/v1/tasks/${id}`, 'task'),
        stateOf: (record) => (record.is_complete === true ? 'complete' : 'open'),
      }),
    },
  },
  fuzz: {
    seed: async ({ seed, pooled }) => {
      for (const n of [1, 2, 3])
        await seed('/api/v1/tasks', { lead_id: pooled('leads'), text: `Fuzz task ${n}` });
    },
  },
  // task.created, task.completed.
  events: async (scope) => {
    const leadId = await createLeadOver(scope);
    const id = await createAt(scope, '/api/v1/tasks', 'task', { text: 'Call back', lead_id: leadId });
    await sendOk(scope, 'PATCH', `/api/v1/tasks/${id}`, { is_complete: true });
  },
});
