// Locks in on PostgreSQL that the same inbound mail delivered in parallel is recorded once (one row, one activity, one email.received; the others answered duplicate), and that parallel creates of the same address give one account and 409s. Repeated for several rounds, since one round may run in a harmless order.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents } from '../../core/db/schema.ts';
import { activities } from '../../tools/activities/tables.ts';
import { connectedAccounts, inboundEmails } from '../../tools/connected-accounts/tables.ts';
import {
  createConnectedAccount,
  createContact,
  fileTest,
  inboundTokenOf,
  signedInbound,
  smtpOf,
} from '../fixtures/index.ts';
import { onPostgres } from '../helpers.ts';

const ROUNDS = 6;
const PARALLEL = 5;

const test = fileTest({ options: { withoutRateLimits: true } }).extend(
  'account',
  { scope: 'file' },
  async ({ t, org }) => createConnectedAccount(t, org),
);

describe.runIf(onPostgres)('connected accounts under concurrency', () => {
  test('records one mail delivered in parallel once', async ({ t, org, account }) => {
    const contact = await createContact(t, org, {
      emails: [{ email: 'racer@customer.example', type: 'office' }],
    });
    for (let round = 0; round < ROUNDS; round++) {
      const messageId = `<race-${round}-${Date.now()}@customer.example>`;
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, () =>
          t.request('POST', `/hooks/email/${inboundTokenOf(account)}`, {
            body: signedInbound(account.inbound_signing_key, {
              from: 'racer@customer.example',
              message_id: messageId,
            }),
          }),
        ),
      );
      const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ status: string }>));
      expect(responses.map((r) => r.status)).toEqual(Array(PARALLEL).fill(200));
      expect(bodies.filter((b) => b.status === 'received')).toHaveLength(1);
      expect(bodies.filter((b) => b.status === 'duplicate')).toHaveLength(PARALLEL - 1);
      const rows = await t.services.db.system
        .select()
        .from(inboundEmails)
        .where(eq(inboundEmails.messageId, messageId));
      expect(rows).toHaveLength(1);
      const events = (
        await t.services.db.system.select().from(outboxEvents).where(eq(outboxEvents.orgId, org.orgId))
      ).filter((e) => e.event === 'email.received' && e.data.message_id === messageId);
      expect(events).toHaveLength(1);
    }
    const emailActivities = (
      await t.services.db.system.select().from(activities).where(eq(activities.leadId, contact.lead_id))
    ).filter((a) => a.type === 'email');
    expect(emailActivities).toHaveLength(ROUNDS);
  });

  test('gives one account for parallel creates of the same address, 409 for the others', async ({
    t,
    org,
  }) => {
    for (let round = 0; round < ROUNDS; round++) {
      const email = `same-${round}-${Date.now()}@example.com`;
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          t.request('POST', '/api/v1/connected-accounts', {
            token: org.token,
            body: {
              email: i % 2 ? email.toUpperCase() : email,
              smtp: smtpOf({ host: 'smtp.example.com', port: 587 }),
            },
          }),
        ),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([201, ...Array(PARALLEL - 1).fill(409)]);
      const rows = await t.services.db.system
        .select()
        .from(connectedAccounts)
        .where(eq(connectedAccounts.userId, org.ownerId));
      expect(rows.filter((r) => r.email.toLowerCase() === email)).toHaveLength(1);
    }
  });
});
