// The test kit of tools/estimates (test/README.md "Test kits"): a victim estimate, and the status
// machine; expired is the daily job's, run with a clock past valid_until.
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { expireEstimates } from '../../tools/estimates/jobs.ts';
import { estimates } from '../../tools/estimates/tables.ts';
import { defineKit, type KitScope, NO_BODY } from '../fixtures/kit.ts';
import { createAt, createLeadOver, insertLead, readAt } from '../fixtures/kit-helpers.ts';

const LINE_ITEMS = [{ description: 'Work', quantity: 1, unit_price: 10 }];

/** The request that moves an estimate to `to`; expired is the daily job's, run with a clock past valid_until. */
async function moveEstimate({ t, org }: KitScope, id: string, to: string): Promise<Response> {
  const base = `/api/v1/estimates/${id}`;
  if (to === 'draft') return t.request('PATCH', base, { token: org.token, body: {} });
  if (to === 'sent')
    return t.request('POST', `${base}/send`, { token: org.token, body: { to: 'a@example.test' } });
  if (to === 'accepted') return t.request('POST', `${base}/accept`, { token: org.token });
  if (to === 'declined') return t.request('POST', `${base}/decline`, { token: org.token });
  await t.services.db.system.update(estimates).set({ validUntil: '2030-01-01' }).where(eq(estimates.id, id));
  await expireEstimates(t.services, new Date('2030-01-02T00:10:00Z'), org.orgId);
  return new Response(null, { status: 200 });
}

export const kit = defineKit({
  area: 'estimates',
  bodies: {
    create_estimate: {
      body: { lead_id: '', currency: 'USD', line_items: LINE_ITEMS, notes: 'n' },
      text: 'notes',
    },
    update_estimate: { body: { notes: 'n' }, text: 'notes' },
    delete_estimate: NO_BODY,
    send_estimate: { body: { message: 'm' }, text: 'message' },
    accept_estimate: NO_BODY,
    decline_estimate: { body: { reason: 'r' }, text: 'reason' },
    convert_estimate_to_invoice: NO_BODY,
  },
  victims: {
    '/estimates': async ({ t, org }) => {
      const leadId = await insertLead({ t }, org);
      const id = newId();
      await t.services.db.system.insert(estimates).values({
        id,
        orgId: org.orgId,
        leadId,
        number: `EST-${id}`,
        status: 'sent',
        currency: 'USD',
        lineItems: LINE_ITEMS,
        subtotalMinor: 1000n,
        taxTotalMinor: 0n,
        totalMinor: 1000n,
      });
      return { id, read: () => t.services.db.system.select().from(estimates).where(eq(estimates.id, id)) };
    },
  },
  machines: {
    estimate: {
      moves:
        'draft -> sent, expired; sent -> accepted, declined, expired; accepted (final); declined (final); expired (final)',
      field: 'status',
      jobOnly: ['expired'],
      driver: (scope) => ({
        create: async () =>
          createAt(scope, '/api/v1/estimates', 'estimate', {
            lead_id: await createLeadOver(scope),
            currency: 'USD',
            line_items: LINE_ITEMS,
          }),
        move: (id, to) => moveEstimate(scope, id, to),
        read: (id) => readAt(scope, `/api/v1/estimates/${id}`, 'estimate'),
        stateOf: (record) => String(record.status),
      }),
    },
  },
});
