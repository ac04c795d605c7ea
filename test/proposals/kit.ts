// The test kit of tools/proposals (test/README.md "Test kits"): a victim proposal (under /proposals
// and /proposal-ai), and the status machine, answered on the public page with the proposal's token.

import { createHash, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { proposals } from '../../tools/proposals/tables.ts';
import { defineKit, IGNORED_BODY, type KitScope, type MachineDriver, NO_BODY } from '../fixtures/kit.ts';
import { createAt, createLeadOver, insertLead, readAt } from '../fixtures/kit-helpers.ts';
import { createProposal, sendProposal } from '../fixtures/proposals.ts';
import { json } from '../helpers.ts';

const SECTIONS = [{ heading: 'Scope', body_markdown: 'Work' }];

async function insertVictim({ t, org }: KitScope) {
  const leadId = await insertLead({ t }, org);
  const id = newId();
  await t.services.db.system
    .insert(proposals)
    .values({ id, orgId: org.orgId, leadId, title: 'Victim proposal', sections: SECTIONS });
  return { id, read: () => t.services.db.system.select().from(proposals).where(eq(proposals.id, id)) };
}

/**
 * Moves a proposal: edit (draft), send, answer on the public page with its token, or withdraw
 * (expired). A proposal never sent gets a token planted in its row, so an answer to a draft reaches
 * the machine (and its refusal) like any other.
 */
function proposalDriver(scope: KitScope): MachineDriver {
  const { t, org } = scope;
  /** The public link of each proposal the driver sent (or planted, for a proposal never sent). */
  const tokens = new Map<string, string>();
  return {
    create: async () =>
      createAt(scope, '/api/v1/proposals', 'proposal', {
        lead_id: await createLeadOver(scope),
        title: 'Offer',
        sections: SECTIONS,
      }),
    move: async (id, to) => {
      const base = `/api/v1/proposals/${id}`;
      if (to === 'draft') return t.request('PATCH', base, { token: org.token, body: {} });
      if (to === 'expired') return t.request('POST', `${base}/expire`, { token: org.token });
      if (to === 'sent') {
        const res = await t.request('POST', `${base}/send`, {
          token: org.token,
          body: { to: 'lead@example.test' },
        });
        if (res.status === 200) {
          const sent = await json<{ public_url: string }>(res.clone());
          tokens.set(id, sent.public_url.split('/p/')[1] ?? '');
        }
        return res;
      }
      let token = tokens.get(id);
      if (token === undefined) {
        token = randomBytes(32).toString('base64url');
        await t.services.db.system
          .update(proposals)
          .set({ publicTokenHash: createHash('sha256').update(token).digest('hex') })
          .where(eq(proposals.id, id));
        tokens.set(id, token);
      }
      const body = to === 'accepted' ? { name: 'Ann', email: 'ann@example.test' } : {};
      return t.request('POST', `/p/${token}/${to === 'accepted' ? 'accept' : 'decline'}`, { body });
    },
    read: (id) => readAt(scope, `/api/v1/proposals/${id}`, 'proposal'),
    stateOf: (record) => String(record.status),
  };
}

export const kit = defineKit({
  area: 'proposals',
  bodies: {
    create_proposal: { body: { lead_id: '', title: 'Offer', sections: SECTIONS }, text: 'title' },
    update_proposal: { body: { title: 'Offer' }, text: 'title' },
    delete_proposal: NO_BODY,
    send_proposal: { body: { to: 'lead@example.test' }, text: 'to' },
    expire_proposal: NO_BODY,
    suggest_proposal_questions: IGNORED_BODY,
  },
  victims: {
    '/proposals': insertVictim,
    '/proposal-ai': insertVictim,
  },
  machines: {
    proposal: {
      moves:
        'draft -> sent (proposal.sent), expired; sent -> accepted (proposal.accepted), declined (proposal.declined), expired; accepted (final); declined (final); expired (final)',
      field: 'status',
      // A resend issues a new link (proposal.sent again); an answer is given once.
      noSameState: ['sent', 'accepted', 'declined'],
      driver: proposalDriver,
    },
  },
  // proposal.sent, proposal.accepted with contract.signed, proposal.declined (on the public page).
  events: async ({ t, org }) => {
    const accepted = await createProposal(t, org);
    const { token: acceptToken } = await sendProposal(t, org, accepted._id, { to: 'buyer@customer.example' });
    const accept = await t.request('POST', `/p/${acceptToken}/accept`, {
      body: { name: 'Pat Buyer', email: 'pat@customer.example', signature: 'Pat Buyer' },
    });
    expect(accept.status).toBe(200);
    const declined = await createProposal(t, org);
    const { token: declineToken } = await sendProposal(t, org, declined._id);
    const decline = await t.request('POST', `/p/${declineToken}/decline`, { body: { reason: 'Budget' } });
    expect(decline.status).toBe(200);
  },
});
