// The test kit of tools/projects (test/README.md "Test kits"): a victim project with a time entry
// (routes address either), and the project status machine driven by PATCH.
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { invoices } from '../../tools/invoices/tables.ts';
import { projects, timeEntries } from '../../tools/projects/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';
import { createAt, insertLead, readAt } from '../fixtures/kit-helpers.ts';

const DESCRIPTION = { body: { description: 'd' }, text: 'description' };

export const kit = defineKit({
  area: 'projects',
  bodies: {
    create_project: { body: { name: 'P', currency: 'USD', description: 'd' }, text: 'description' },
    update_project: DESCRIPTION,
    delete_project: NO_BODY,
    log_time_entry: { body: { date: '2026-11-03', minutes: 5, description: 'd' }, text: 'description' },
    update_time_entry: DESCRIPTION,
    delete_time_entry: NO_BODY,
    invoice_project: NO_BODY,
  },
  victims: {
    '/projects': async ({ t, org }) => {
      const leadId = await insertLead({ t }, org);
      const id = newId();
      const entryId = newId();
      await t.services.db.system.insert(projects).values({
        id,
        orgId: org.orgId,
        leadId,
        name: 'Victim project',
        currency: 'USD',
        hourlyRateMinor: 9000n,
      });
      await t.services.db.system.insert(timeEntries).values({
        id: entryId,
        orgId: org.orgId,
        projectId: id,
        userId: org.ownerId,
        date: '2026-11-03',
        minutes: 60,
        description: 'Victim time',
      });
      return {
        id,
        params: { id, entryId },
        read: async () => ({
          project: await t.services.db.system.select().from(projects).where(eq(projects.id, id)),
          entries: await t.services.db.system.select().from(timeEntries).where(eq(timeEntries.projectId, id)),
          invoices: await t.services.db.system.select().from(invoices).where(eq(invoices.projectId, id)),
        }),
      };
    },
  },
  machines: {
    project: {
      moves:
        'active -> on_hold, completed, archived; on_hold -> active, completed, archived; completed -> active, archived; archived -> active',
      field: 'status',
      driver: (scope) => ({
        create: () => createAt(scope, '/api/v1/projects', 'project', { name: 'Website', currency: 'USD' }),
        move: (id, to) =>
          scope.t.request('PATCH', `/api/v1/projects/${id}`, {
            token: scope.org.token,
            body: { status: to },
          }),
        read: (id) => readAt(scope, `/api/v1/projects/${id}`, 'project'),
        stateOf: (record) => String(record.status),
      }),
    },
  },
});
