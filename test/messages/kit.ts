// The test kit of tools/messages (test/README.md "Test kits"): bodies of the send tools (they parse;
// the references then fail the checks), the tenancy victim (a message of another organization), and
// helpers the message tests share: a lead with a contact's number and a number of the organization.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { TwilioProvider } from '../../providers/twilio.ts';
import { messages } from '../../tools/messages/tables.ts';
import { authTokenContext } from '../../tools/telephony/store.ts';
import { telephonySettings } from '../../tools/telephony/tables.ts';
import type { TestContext, TestOrg } from '../fixtures/context.ts';
import { defineKit } from '../fixtures/kit.ts';
import { createContact, createLead } from '../fixtures/records.ts';
import { freshNumber } from '../phone-numbers/kit.ts';
import { startTwilioPeer } from '../support/twilio-peer.ts';
import { connectTelephony } from '../telephony/kit.ts';

const ID = '0'.repeat(24);

export const kit = defineKit({
  area: 'messages',
  bodies: {
    send_sms: {
      body: { lead_id: ID, to: '+14155550100', from_phone_number_id: ID, body: 'Hello', confirm: false },
      text: 'body',
    },
    send_whatsapp: {
      body: { lead_id: ID, to: '+14155550100', from_phone_number_id: ID, body: 'Hello', confirm: false },
      text: 'body',
    },
  },
  // sms.sent and sms.received through the routes and the hook, against a Twilio peer of their own:
  // the context's provider is pointed at it for the while (the shared context has no peer).
  events: async ({ t, org }) => {
    const peer = await startTwilioPeer({ deliver: (url, init) => Promise.resolve(t.app.request(url, init)) });
    const provider = t.services.telephony;
    t.services.telephony = new TwilioProvider({ ...t.config.telephony, baseUrl: peer.url });
    try {
      await connectTelephony(t, org, peer);
      const from = await createNumber(t, org);
      const lead = await leadWithPhone(t, org);
      const sent = await t.request('POST', '/api/v1/sms', {
        token: org.token,
        body: { lead_id: lead.leadId, to: lead.phone, from_phone_number_id: from.id, body: 'Hello' },
      });
      expect(sent.status).toBe(201);
      const inbound = peer.inboundMessage(lead.phone, from.number, 'Hello back');
      expect(
        (await peer.sendInbound(`${t.config.publicBaseUrl}/hooks/twilio/messaging`, inbound)).status,
      ).toBe(200);
    } finally {
      t.services.telephony = provider;
      await t.request('DELETE', '/api/v1/settings/telephony', { token: org.token });
      await peer.close();
    }
  },
  victims: {
    '/messages': async ({ t, org }) => {
      const id = newId();
      await t.services.db.system.insert(messages).values({
        id,
        orgId: org.orgId,
        channel: 'sms',
        direction: 'inbound',
        fromAddress: '+14155550100',
        toAddress: '+14155550101',
        body: 'Victim message',
        status: 'received',
      });
      return { id, read: () => t.services.db.system.select().from(messages).where(eq(messages.id, id)) };
    },
  },
});

/** A number of `org` with the capabilities given (SMS and WhatsApp by default), through the route. */
export async function createNumber(
  t: TestContext,
  org: Pick<TestOrg, 'token'>,
  capabilities: { voice?: boolean; sms?: boolean; whatsapp?: boolean } = {},
): Promise<{ id: string; number: string }> {
  const number = freshNumber();
  const res = await t.request('POST', '/api/v1/phone-numbers', {
    token: org.token,
    body: { number, capabilities: { voice: false, sms: true, whatsapp: true, ...capabilities } },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const { phone_number: created } = (await res.json()) as { phone_number: { _id: string } };
  return { id: created._id, number };
}

/** A lead whose contact has a fresh phone number (E.164): the recipient of the tests' messages. */
export async function leadWithPhone(
  t: TestContext,
  org: Pick<TestOrg, 'token'>,
): Promise<{ leadId: string; contactId: string; phone: string }> {
  const lead = await createLead(t, org);
  const phone = freshNumber();
  const contact = await createContact(t, org, { lead_id: lead._id, phones: [{ type: 'mobile', phone }] });
  return { leadId: lead._id, contactId: contact._id, phone };
}

/**
 * Telephony settings for `org` written straight to the table (an unverified account nobody answers
 * for), for suites whose context has no Twilio peer: the sends then meet an unreachable provider.
 * Kept if the organization has some already.
 */
export async function unverifiedTelephony(
  t: TestContext,
  org: Pick<TestOrg, 'orgId' | 'ownerId'>,
): Promise<void> {
  const token = randomBytes(16).toString('hex');
  const now = new Date();
  await t.services.db.system
    .insert(telephonySettings)
    .values({
      orgId: org.orgId,
      accountSid: `AC${randomBytes(16).toString('hex')}`,
      authToken: t.services.secrets.encryptSecret(token, authTokenContext(org.orgId)),
      authTokenLast4: token.slice(-4),
      verifiedAt: now,
      updatedBy: org.ownerId,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing();
}
