// The test kit of tools/email (test/README.md "Test kits"): a victim scheduled email, and its status
// machine, whose moves but cancelling are the sender job's (run against an SMTP peer).
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { newId } from '../../core/ids.ts';
import { scheduledEmails } from '../../tools/email/tables.ts';
import {
  insertConnectedAccount,
  scheduleBody,
  scheduleEmail,
  sendScheduledEmail,
} from '../fixtures/email.ts';
import { defineKit, type KitScope, type MachineDriver, NO_BODY } from '../fixtures/kit.ts';
import { createLeadOver, insertLead, readAt } from '../fixtures/kit-helpers.ts';
import { createLeadWithContact, insertConnectedAccountRow } from '../fixtures/workflows.ts';
import { json } from '../helpers.ts';
import { type SmtpPeer, startSmtpPeer } from '../support/smtp-peer.ts';

/** The address the driver's SMTP peer refuses: a refused recipient is retried (back to scheduled). */
const BUSY_ADDRESS = 'busy@example.test';

/**
 * Cancelling is the DELETE route; the sender's moves run the 'email.send' handler with a clock past
 * every due time (sending is a claim left by a sender that died; back to scheduled is a refused
 * recipient's retry; failed is a missing attachment). The SMTP peer starts on first use.
 */
function scheduledEmailDriver(scope: KitScope): MachineDriver {
  const { t, org } = scope;
  let peer: SmtpPeer | undefined;
  let account: string | undefined;
  async function emailAccount(): Promise<string> {
    if (account) return account;
    peer = await startSmtpPeer({ refuse: (address) => address === BUSY_ADDRESS });
    const inserted = await insertConnectedAccount(
      t,
      { orgId: org.orgId, userId: org.ownerId },
      { host: peer.host, port: peer.port, username: 'u', password: 'p' },
    );
    account = inserted.id;
    return inserted.id;
  }
  return {
    create: async () => {
      const connected = await emailAccount();
      const res = await t.request('POST', '/api/v1/email/schedule', {
        token: org.token,
        body: {
          to: 'lead@example.test',
          subject: 'Hello',
          body_html: '<p>Hi</p>',
          connected_account_id: connected,
          lead_id: await createLeadOver(scope),
          scheduled_at: new Date(Date.now() + 120_000).toISOString(),
        },
      });
      expect(res.status).toBe(200);
      return (await json<{ job_id: string }>(res)).job_id;
    },
    move: async (id, to) => {
      if (to === 'cancelled')
        return t.request('DELETE', `/api/v1/email/scheduled/${id}`, { token: org.token });
      const later = new Date(Date.now() + 86_400_000);
      const set = (values: Partial<typeof scheduledEmails.$inferInsert>) =>
        t.services.db.system.update(scheduledEmails).set(values).where(eq(scheduledEmails.id, id));
      if (to === 'sending') await set({ status: 'sending', attempts: 1, nextAttemptAt: new Date() });
      else {
        if (to === 'scheduled') await set({ toAddress: BUSY_ADDRESS });
        if (to === 'failed')
          await set({
            attachments: [
              {
                filename: 'x.pdf',
                content_type: 'application/pdf',
                storage_key: 'gone/x.pdf',
                size_bytes: 1,
              },
            ],
          });
        await sendScheduledEmail(t.services, id, { now: later });
      }
      return new Response('{}', { status: 200 });
    },
    read: (id) => readAt(scope, `/api/v1/email/scheduled/${id}`, 'scheduled_email'),
    stateOf: (record) => String(record.status),
    close: async () => {
      await peer?.close();
    },
  };
}

export const kit = defineKit({
  area: 'email',
  bodies: {
    schedule_email: {
      body: {
        to: 'lead@example.test',
        subject: 'Hello',
        body_html: '<p>Hi</p>',
        connected_account_id: '',
        lead_id: '',
        scheduled_at: '2030-01-01T00:00:00Z',
      },
      text: 'subject',
      free: 'attachments',
    },
    cancel_scheduled_email: NO_BODY,
  },
  victims: {
    '/email/scheduled': async ({ t, org }) => {
      const leadId = await insertLead({ t }, org);
      const id = newId();
      await t.services.db.system.insert(scheduledEmails).values({
        id,
        orgId: org.orgId,
        userId: org.ownerId,
        leadId,
        toAddress: 'victim@example.test',
        subject: 'Victim email',
        bodyHtml: '<p>x</p>',
        scheduledAt: new Date(Date.now() + 3_600_000),
        nextAttemptAt: new Date(Date.now() + 3_600_000),
      });
      return {
        id,
        read: () => t.services.db.system.select().from(scheduledEmails).where(eq(scheduledEmails.id, id)),
      };
    },
  },
  machines: {
    'scheduled email': {
      moves:
        'scheduled -> sending, cancelled; sending -> scheduled, sent (email.sent), failed (email.sent); sent (final); failed (final); cancelled (final)',
      field: 'status',
      // Only cancelling is a request; the sender's moves are the job's (tools/email/sender.ts).
      jobOnly: ['scheduled', 'sending', 'sent', 'failed'],
      driver: scheduledEmailDriver,
    },
  },
  fuzz: {
    // A scheduled email (through the owner's connected account), so its get and cancel routes hit a row.
    seed: async ({ t, token, seed, collect, pooled }) => {
      for (const n of [1, 2, 3]) {
        await seed('/api/v1/email/schedule', {
          to: 'fuzz-contact@example.test',
          subject: `Fuzz email ${n}`,
          body_html: '<p>Hello</p>',
          connected_account_id: pooled('connected-accounts'),
          lead_id: pooled('leads'),
          scheduled_at: new Date(Date.now() + 86_400_000).toISOString(),
        });
      }
      collect(
        '/api/v1/email/scheduled',
        await (await t.request('GET', '/api/v1/email/scheduled', { token })).json(),
      );
    },
  },
  // email.sent: an email whose every attempt fails (an account on a port nothing listens on) is sent as failed.
  events: async ({ t, org }) => {
    const { leadId } = await createLeadWithContact(t, org, 'buyer@mail.example');
    const sender = await insertConnectedAccountRow(t, org.orgId, org.ownerId);
    const at = new Date(Date.now() + 120_000);
    const email = await scheduleEmail(
      t,
      org,
      scheduleBody(sender, leadId, { to: 'buyer@mail.example', scheduled_at: at.toISOString() }),
    );
    for (const hours of [0, 1, 2]) {
      await sendScheduledEmail(t.services, email.job_id, { now: new Date(at.getTime() + hours * 3_600_000) });
    }
  },
});
