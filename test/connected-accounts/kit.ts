// The test kit of tools/connected-accounts (test/README.md "Test kits"): a victim account read back
// with its inbound mail, and the fuzz's sender account (marked verified: no SMTP server answers there).

import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { connectedAccounts, inboundEmails } from '../../tools/connected-accounts/tables.ts';
import { createConnectedAccount, postInbound } from '../fixtures/connected-accounts.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';

const DISPLAY_NAME = { body: { display_name: 'Sam' }, text: 'display_name' };

export const kit = defineKit({
  area: 'connected-accounts',
  bodies: {
    create_connected_account: {
      body: {
        email: 'sam@example.com',
        display_name: 'Sam',
        smtp: { host: 'smtp.example.com', port: 587, secure: false, username: 'sam', password: 'pw' },
      },
      text: 'display_name',
    },
    update_connected_account: DISPLAY_NAME,
    delete_connected_account: NO_BODY,
    verify_connected_account: NO_BODY,
    rotate_inbound_secret: NO_BODY,
  },
  victims: {
    '/connected-accounts': async ({ t, org }) => {
      // A closed port on loopback: the owner's control request to verify fails fast, reaching nothing.
      const { _id: id } = await createConnectedAccount(t, org, {
        smtp: { host: '127.0.0.1', port: 1, secure: false, username: 'victim', password: 'victim-password' },
      });
      return {
        id,
        read: async () => ({
          account: await t.services.db.system
            .select()
            .from(connectedAccounts)
            .where(eq(connectedAccounts.id, id)),
          inbound: await t.services.db.system
            .select()
            .from(inboundEmails)
            .where(eq(inboundEmails.connectedAccountId, id)),
        }),
      };
    },
  },
  fuzz: {
    seed: async ({ t, seed, firstId }) => {
      const account = firstId(
        await seed('/api/v1/connected-accounts', {
          email: 'fuzz-sender@example.test',
          smtp: {
            host: 'smtp.example.com',
            port: 587,
            secure: false,
            username: 'fuzz',
            password: 'fuzz-password',
          },
        }),
      );
      // Only a verified account schedules mail; no SMTP server answers here, so the row says so.
      await t.services.db.system
        .update(connectedAccounts)
        .set({ status: 'verified', verifiedAt: new Date() })
        .where(eq(connectedAccounts.id, account));
    },
  },
  // email.received: a mail posted to the account's inbound route.
  events: async ({ t, org }) => {
    const account = await createConnectedAccount(t, org, { email: 'sales@example.com' });
    expect((await postInbound(t, account, { from: 'Buyer <buyer@mail.example>' })).status).toBe(200);
  },
});
