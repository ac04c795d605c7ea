// Locks in REST idempotency keys: a POST with an Idempotency-Key runs once per organization,
// credential and key for 24 hours (a repeat answers the kept response with Idempotent-Replayed), a
// different request with the key is 422, a concurrent one 409 or the replay, refusals before
// execution keep nothing, and two racing replays of one webhook delivery send once.
import { and, eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { idempotencyKeys } from '../core/db/schema.ts';
import { deleteExpiredIdempotencyKeys } from '../core/idempotency.ts';
import { leads } from '../tools/leads/tables.ts';
import { startEventReceiver } from './fixtures/events.ts';
import { createLead, fileTest, readError, readOutput, type TestContext, TOOL } from './fixtures/index.ts';

const test = fileTest({ options: { withoutRateLimits: true } });

let seq = 0;
const newKey = () => `key-${Date.now()}-${seq++}`;

function postLead(
  t: TestContext,
  token: string,
  key: string | undefined,
  body: Record<string, unknown>,
): Promise<Response> {
  return t.request('POST', '/api/v1/leads', {
    token,
    body,
    ...(key === undefined ? {} : { headers: { 'Idempotency-Key': key } }),
  });
}

async function leadsNamed(t: TestContext, orgId: string, name: string): Promise<number> {
  const rows = await t.services.db.system
    .select({ id: leads.id })
    .from(leads)
    .where(and(eq(leads.orgId, orgId), eq(leads.name, name)));
  return rows.length;
}

async function keptRows(t: TestContext, key: string): Promise<number> {
  const rows = await t.services.db.system
    .select({ id: idempotencyKeys.id })
    .from(idempotencyKeys)
    .where(eq(idempotencyKeys.key, key));
  return rows.length;
}

describe('a POST with an Idempotency-Key', () => {
  test('answers a repeat with the kept response and Idempotent-Replayed, and runs once', async ({
    t,
    org,
  }) => {
    const key = newKey();
    const first = await postLead(t, org.token, key, { name: 'Once Inc', industry: 'kept' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const firstText = await first.text();

    const again = await postLead(t, org.token, key, { industry: 'kept', name: 'Once Inc' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await again.text()).toBe(firstText);
    expect(await leadsNamed(t, org.orgId, 'Once Inc')).toBe(1);

    // Without a key the same request runs again, as before.
    expect((await postLead(t, org.token, undefined, { name: 'Once Inc' })).status).toBe(201);
    expect(await leadsNamed(t, org.orgId, 'Once Inc')).toBe(2);
  });

  test('answers 422 idempotency_key_reused for a different body or path with the key', async ({ t, org }) => {
    const key = newKey();
    expect((await postLead(t, org.token, key, { name: 'Reused A' })).status).toBe(201);
    const other = await postLead(t, org.token, key, { name: 'Reused B' });
    expect(await readError(other, 422)).toMatchObject({
      error: 'Idempotency key reused',
      code: 'idempotency_key_reused',
    });
    const lead = await createLead(t, org);
    const otherPath = await t.request('POST', '/api/v1/contacts', {
      token: org.token,
      headers: { 'Idempotency-Key': key },
      body: { lead_id: lead._id, name: 'Someone' },
    });
    expect((await readError(otherPath, 422)).code).toBe('idempotency_key_reused');
    expect(await leadsNamed(t, org.orgId, 'Reused B')).toBe(0);
  });

  test('scopes a key to its organization and credential', async ({ t, org }) => {
    const key = newKey();
    const body = { name: 'Scoped Ltd' };
    expect((await postLead(t, org.token, key, body)).headers.get('idempotent-replayed')).toBeNull();
    // Another key of the same user, and another organization, run their own request.
    const pat = await t.createPat(org.orgId, org.ownerId, ['write:leads']);
    const viaPat = await postLead(t, pat.token, key, body);
    expect(viaPat.status).toBe(201);
    expect(viaPat.headers.get('idempotent-replayed')).toBeNull();
    const other = await t.createOrg();
    const otherOrg = await postLead(t, other.token, key, body);
    expect(otherOrg.status).toBe(201);
    expect(otherOrg.headers.get('idempotent-replayed')).toBeNull();
    expect(await leadsNamed(t, org.orgId, 'Scoped Ltd')).toBe(2);
    expect(await leadsNamed(t, other.orgId, 'Scoped Ltd')).toBe(1);
    // The PAT's own repeat is its own replay.
    expect((await postLead(t, pat.token, key, body)).headers.get('idempotent-replayed')).toBe('true');
  });

  test('keeps nothing for a request refused before execution, so the corrected retry runs', async ({
    t,
    org,
  }) => {
    const key = newKey();
    const invalid = await postLead(t, org.token, key, { name: '' });
    expect((await readError(invalid, 400)).code).toBe('validation_failed');
    const valid = await postLead(t, org.token, key, { name: 'Fixed Co' });
    expect(valid.status).toBe(201);
    expect(valid.headers.get('idempotent-replayed')).toBeNull();

    const narrow = await t.createPat(org.orgId, org.ownerId, ['read:leads']);
    const refusedKey = newKey();
    const refused = await postLead(t, narrow.token, refusedKey, { name: 'Refused Co' });
    expect((await readError(refused, 403)).code).toBe('scope_missing');
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect(
      (await readError(await postLead(t, viewer.token, refusedKey, { name: 'Refused Co' }), 403)).code,
    ).toBe('forbidden');
    expect(await keptRows(t, refusedKey)).toBe(0);
  });

  test('keeps a failure the tool answered once it ran (404) and answers it again', async ({ t, org }) => {
    const key = newKey();
    const request = () =>
      t.request('POST', '/api/v1/contacts', {
        token: org.token,
        headers: { 'Idempotency-Key': key },
        body: { lead_id: '0123456789abcdef01234567', name: 'Orphan' },
      });
    const first = await request();
    expect(first.status).toBe(404);
    const again = await request();
    expect(again.status).toBe(404);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
  });

  test('resolves concurrent requests with one key to one execution (409 or the replay for the others)', async ({
    t,
    org,
  }) => {
    // Several rounds: one round of a race can happen to run in a harmless order.
    for (let round = 0; round < 5; round++) {
      const key = newKey();
      const name = `Racing Corp ${round}`;
      const responses = await Promise.all(
        Array.from({ length: 6 }, () => postLead(t, org.token, key, { name })),
      );
      const executed = responses.filter(
        (r) => r.status === 201 && r.headers.get('idempotent-replayed') === null,
      );
      expect(executed).toHaveLength(1);
      for (const res of responses) {
        if (res.status === 409) expect((await readError(res, 409)).code).toBe('idempotency_key_in_use');
        else expect(res.status).toBe(201);
      }
      expect(await leadsNamed(t, org.orgId, name)).toBe(1);
    }
  });

  test('forgets a key after 24 hours: the request runs again, and the sweep deletes expired keys', async ({
    t,
    org,
  }) => {
    const key = newKey();
    expect((await postLead(t, org.token, key, { name: 'Expiring SA' })).status).toBe(201);
    const past = new Date(Date.now() - 1000);
    await t.services.db.system
      .update(idempotencyKeys)
      .set({ expiresAt: past })
      .where(eq(idempotencyKeys.key, key));
    const later = await postLead(t, org.token, key, { name: 'Expiring SA' });
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(await leadsNamed(t, org.orgId, 'Expiring SA')).toBe(2);

    const row = await t.services.db.system.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key));
    expect(row[0]?.expiresAt.getTime()).toBeGreaterThan(Date.now() + 23 * 60 * 60 * 1000);
    await t.services.db.system
      .update(idempotencyKeys)
      .set({ expiresAt: past })
      .where(eq(idempotencyKeys.key, key));
    expect(await deleteExpiredIdempotencyKeys(t.services)).toBeGreaterThanOrEqual(1);
    expect(await keptRows(t, key)).toBe(0);
  });

  test('lets a key whose claim was abandoned (a process died mid-request) run again after its lease', async ({
    t,
    org,
  }) => {
    const key = newKey();
    expect((await postLead(t, org.token, key, { name: 'Abandoned BV' })).status).toBe(201);
    // As a dead process leaves it: claimed, no answer, lease lapsed.
    await t.services.db.system
      .update(idempotencyKeys)
      .set({
        status: 'in_flight',
        responseStatus: null,
        responseBody: null,
        leaseUntil: new Date(Date.now() + 60_000),
      })
      .where(eq(idempotencyKeys.key, key));
    expect((await readError(await postLead(t, org.token, key, { name: 'Abandoned BV' }), 409)).code).toBe(
      'idempotency_key_in_use',
    );
    await t.services.db.system
      .update(idempotencyKeys)
      .set({ leaseUntil: new Date(Date.now() - 1000) })
      .where(eq(idempotencyKeys.key, key));
    const retried = await postLead(t, org.token, key, { name: 'Abandoned BV' });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(
      (await postLead(t, org.token, key, { name: 'Abandoned BV' })).headers.get('idempotent-replayed'),
    ).toBe('true');
  });

  test('refuses a malformed key with a 400 naming the header; other methods ignore the header', async ({
    t,
    org,
  }) => {
    for (const bad of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const res = await postLead(t, org.token, bad, { name: 'Bad Key' });
      const error = await readError(res, 400);
      expect(error.code).toBe('validation_failed');
      expect(error.details?.[0]?.field).toBe('Idempotency-Key');
    }
    expect(await leadsNamed(t, org.orgId, 'Bad Key')).toBe(0);
    expect((await postLead(t, org.token, 'k'.repeat(255), { name: 'Long Key' })).status).toBe(201);

    const list = await t.request('GET', '/api/v1/leads', {
      token: org.token,
      headers: { 'Idempotency-Key': 'x'.repeat(300) },
    });
    expect(list.status).toBe(200);
    const lead = await createLead(t, org);
    const key = newKey();
    for (const name of ['Patched Once', 'Patched Twice']) {
      const res = await t.request('PATCH', `/api/v1/leads/${lead._id}`, {
        token: org.token,
        headers: { 'Idempotency-Key': key },
        body: { name },
      });
      expect((await readOutput(res, TOOL.update_lead)).lead.name).toBe(name);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
    }
  });
});

describe('replaying a webhook delivery with an Idempotency-Key', () => {
  test('sends once for two racing replays and a later retry with the key', { timeout: 60_000 }, async () => {
    const events = await startEventReceiver({
      name: 'Replays',
      events: ['lead.created'],
      secret: 'replay-secret-0123456789',
    });
    try {
      const { t: ctx, org: owner, receiver, path } = events;
      await createLead(ctx, owner, { name: 'Hooked' });
      await receiver.waitForRequests(1, 10_000);
      const hooks = await ctx.request('GET', '/api/v1/webhooks', { token: owner.token });
      const webhookId = (await readOutput(hooks, TOOL.list_webhooks)).webhooks[0]?._id;
      if (!webhookId) throw new Error('no webhook');
      const deliveriesOf = async () =>
        (
          await readOutput(
            await ctx.request('GET', `/api/v1/webhooks/${webhookId}/deliveries`, { token: owner.token }),
            TOOL.list_webhook_deliveries,
          )
        ).deliveries;
      const settled = async (attempts: number) => {
        for (let i = 0; i < 100; i++) {
          const [delivery] = await deliveriesOf();
          if (delivery?.status === 'succeeded' && delivery.attempts.length === attempts) return delivery;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error(`the delivery never settled after ${attempts} attempts`);
      };
      const delivery = await settled(1);

      const key = newKey();
      const replay = () =>
        ctx.request('POST', `/api/v1/webhooks/deliveries/${delivery._id}/replay`, {
          token: owner.token,
          headers: { 'Idempotency-Key': key },
        });
      const racing = await Promise.all([replay(), replay()]);
      const ran = racing.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null);
      expect(ran).toHaveLength(1);
      for (const res of racing) {
        if (res !== ran[0]) {
          expect(
            res.status === 409 || res.headers.get('idempotent-replayed') === 'true',
            `status ${res.status}`,
          ).toBe(true);
        }
      }
      await receiver.waitForRequests(2, 10_000);
      await settled(2);

      // The client retries after the answer got lost: the kept answer, no third send.
      const retry = await replay();
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      await new Promise((r) => setTimeout(r, 1000));
      expect(receiver.hits(path)).toHaveLength(2);
      expect((await deliveriesOf())[0]?.attempts).toHaveLength(2);
    } finally {
      await events.close();
    }
  });
});
