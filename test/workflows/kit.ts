// The test kit of tools/workflows (test/README.md "Test kits"): a victim workflow with an enrollment,
// and the status machine driven by its activate and pause routes.
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { workflowEnrollments, workflows } from '../../tools/workflows/tables.ts';
import { defineKit, IGNORED_BODY, NAME_BODY, NO_BODY } from '../fixtures/kit.ts';
import { createAt, insertLead, readAt } from '../fixtures/kit-helpers.ts';
import { createLeadWithContact, createWorkflow, enrollLeadIn } from '../fixtures/workflows.ts';

export const kit = defineKit({
  area: 'workflows',
  bodies: {
    create_workflow: {
      body: { name: 'Nurture', steps: [{ type: 'task', delay: { amount: 0, unit: 'days' }, text: 'Call' }] },
      text: 'name',
    },
    update_workflow: NAME_BODY,
    delete_workflow: NO_BODY,
    activate_workflow: IGNORED_BODY,
    pause_workflow: IGNORED_BODY,
    enroll_in_workflow: { body: { lead_id: '' }, text: 'lead_id' },
    unenroll_from_workflow: NO_BODY,
  },
  victims: {
    '/workflows': async ({ t, org }) => {
      const leadId = await insertLead({ t }, org);
      const id = newId();
      const enrollmentId = newId();
      const steps = [
        { type: 'task' as const, delay: { amount: 1, unit: 'days' as const }, text: 'Call back' },
      ];
      await t.services.db.system.insert(workflows).values({
        id,
        orgId: org.orgId,
        name: 'Victim workflow',
        status: 'active',
        steps,
      });
      await t.services.db.system.insert(workflowEnrollments).values({
        id: enrollmentId,
        orgId: org.orgId,
        workflowId: id,
        leadId,
        steps,
        enrolledBy: org.ownerId,
        nextRunAt: new Date(Date.now() + 86_400_000),
      });
      return {
        id,
        params: { id, enrollmentId },
        body: { lead_id: leadId },
        read: async () => ({
          workflow: await t.services.db.system.select().from(workflows).where(eq(workflows.id, id)),
          enrollments: await t.services.db.system
            .select()
            .from(workflowEnrollments)
            .where(eq(workflowEnrollments.workflowId, id)),
        }),
      };
    },
  },
  machines: {
    workflow: {
      moves: 'active -> paused; paused -> active',
      field: 'status',
      driver: (scope) => ({
        create: () =>
          createAt(scope, '/api/v1/workflows', 'workflow', {
            name: 'Nurture',
            steps: [{ type: 'task', delay: { amount: 1, unit: 'days' }, text: 'Call' }],
          }),
        move: (id, to) =>
          scope.t.request('POST', `/api/v1/workflows/${id}/${to === 'active' ? 'activate' : 'pause'}`, {
            token: scope.org.token,
          }),
        read: (id) => readAt(scope, `/api/v1/workflows/${id}`, 'workflow'),
        stateOf: (record) => String(record.status),
      }),
    },
  },
  // workflow.triggered: an enrollment.
  events: async ({ t, org }) => {
    const { leadId } = await createLeadWithContact(t, org, 'enrolled@mail.example');
    const workflow = await createWorkflow(t, org);
    await enrollLeadIn(t, org, workflow._id, { lead_id: leadId });
  },
});
