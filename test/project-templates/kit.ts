// The test kit of tools/project-templates (test/README.md "Test kits"): a victim template, and a
// victim lead for the onboarding route (its id is a lead's).
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { leads } from '../../tools/leads/tables.ts';
import { projectTemplates } from '../../tools/project-templates/tables.ts';
import { projects } from '../../tools/projects/tables.ts';
import { defineKit, NAME_BODY, NO_BODY } from '../fixtures/kit.ts';
import { insertLead } from '../fixtures/kit-helpers.ts';

export const kit = defineKit({
  area: 'project-templates',
  bodies: {
    create_project_template: {
      body: { name: 'T', tasks: [{ text: 'Kickoff', offset_days: 0 }] },
      text: 'name',
      free: 'tasks',
    },
    update_project_template: NAME_BODY,
    delete_project_template: NO_BODY,
    apply_project_template: { body: { lead_id: '' }, text: 'lead_id' },
  },
  victims: {
    '/project-templates': async ({ t, org }) => {
      const id = newId();
      const leadId = await insertLead({ t }, org);
      await t.services.db.system.insert(projectTemplates).values({
        id,
        orgId: org.orgId,
        name: 'Victim template',
        currency: 'USD',
        tasks: [{ text: 'Victim task', offset_days: 0, weight: 1 }],
      });
      return {
        id,
        body: { lead_id: leadId },
        read: async () => ({
          template: await t.services.db.system
            .select()
            .from(projectTemplates)
            .where(eq(projectTemplates.id, id)),
          projects: await t.services.db.system.select().from(projects).where(eq(projects.orgId, org.orgId)),
        }),
      };
    },
    // The onboarding route's id is a lead's.
    '/project-templates/leads': async ({ t, org }) => {
      const id = await insertLead({ t }, org);
      return { id, read: () => t.services.db.system.select().from(leads).where(eq(leads.id, id)) };
    },
  },
});
