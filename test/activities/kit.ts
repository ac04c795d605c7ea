// The test kit of tools/activities (test/README.md "Test kits").
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { activities } from '../../tools/activities/tables.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';
import { createAt, createLeadOver, insertLead } from '../fixtures/kit-helpers.ts';

const NOTE = { body: { note: 'n', values: {} }, text: 'note', free: 'values' };

export const kit = defineKit({
  area: 'activities',
  bodies: {
    log_activity: {
      body: { type: 'note', lead_id: '', note: 'n', values: {} },
      text: 'note',
      free: 'values',
    },
    update_activity: NOTE,
    delete_activity: NO_BODY,
  },
  victims: {
    '/activities': async ({ t, org }) => {
      const leadId = await insertLead({ t }, org);
      const id = newId();
      await t.services.db.system.insert(activities).values({
        id,
        orgId: org.orgId,
        leadId,
        type: 'call',
        userId: org.ownerId,
        fields: { direction: 'outbound', duration_seconds: 60, status: 'in_progress' },
      });
      return { id, read: () => t.services.db.system.select().from(activities).where(eq(activities.id, id)) };
    },
  },
  fuzz: {
    // Several, since the fuzz rarely creates one itself and early deletions must not leave none.
    seed: async ({ seed, pooled }) => {
      for (const n of [1, 2, 3])
        await seed('/api/v1/activities', { lead_id: pooled('leads'), type: 'note', note: `Fuzz note ${n}` });
    },
    pools: { 'leads/activities': 'activities' },
  },
  // activity.created, and call.completed for a logged call.
  events: async (scope) => {
    await createAt(scope, '/api/v1/activities', 'activity', {
      lead_id: await createLeadOver(scope),
      type: 'call',
      direction: 'outbound',
      duration_seconds: 60,
      outcome: 'connected',
    });
  },
});
