// Locks in webhook subscriptions and their delivery log over REST: validation, secrets never returned, plan gating, permissions, test and replay entries.
import { eq } from 'drizzle-orm';
import { describe, expect, vi } from 'vitest';
import { organizations } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';
import { webhookDeliveries, webhooks } from '../../tools/webhooks/tables.ts';
import {
  type Caller,
  type CreatedWebhook,
  detailFields,
  fileTest,
  readError,
  readOutput,
  type TestContext,
  TOOL,
  type Webhook,
} from '../fixtures/index.ts';

const SECRET = 'a-very-secret-signing-key';

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'starter' });

const valid = (overrides: Record<string, unknown> = {}) => ({
  name: 'My receiver',
  url: 'https://hooks.example.test/crm',
  events: ['lead.created', 'lead.updated'],
  secret: SECRET,
  ...overrides,
});

/** POST /webhooks: the answer, unread (createHook when it must succeed). */
async function postHook(t: TestContext, as: Caller, body: Record<string, unknown>): Promise<Response> {
  return t.request('POST', '/api/v1/webhooks', { token: as.token, body });
}

/** POST /webhooks, expecting 201: the body parsed (the record, and a generated secret once). */
async function createHook(
  t: TestContext,
  as: Caller,
  body: Record<string, unknown>,
): Promise<CreatedWebhook> {
  return readOutput(await postHook(t, as, body), TOOL.create_webhook, 201);
}

async function createOk(
  t: TestContext,
  as: Caller,
  overrides: Record<string, unknown> = {},
): Promise<Webhook> {
  return (await createHook(t, as, valid(overrides))).webhook;
}

/** A finished delivery written as the delivery engine would leave it. */
async function insertDelivery(
  t: TestContext,
  orgId: string,
  webhookId: string,
  status: 'pending' | 'succeeded' | 'failed',
  createdAt = new Date(),
): Promise<string> {
  const id = newId(createdAt);
  await t.services.db.system.insert(webhookDeliveries).values({
    id,
    orgId,
    webhookId,
    event: 'lead.created',
    data: { _id: 'x', name: 'Lead' },
    status,
    attempts:
      status === 'pending'
        ? []
        : [
            {
              at: createdAt.toISOString(),
              status_code: status === 'succeeded' ? 200 : 500,
              error: null,
              duration_ms: 12,
              response_excerpt: 'ok',
              next_attempt_at: null,
            },
          ],
    createdAt,
    updatedAt: createdAt,
  });
  return id;
}

function expectNoSecret(payload: unknown): void {
  const text = JSON.stringify(payload);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain('"secret"');
}

describe('create, read, update, delete', () => {
  test('creates a subscription and returns the record without the secret or the name', async ({ t, org }) => {
    const body = await createHook(t, org, valid());
    const hook = body.webhook;
    expect(hook).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      url: 'https://hooks.example.test/crm',
      events: ['lead.created', 'lead.updated'],
      is_active: true,
      created_by: org.ownerId,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      secret_set: true,
    });
    expectNoSecret(body);
    expect(JSON.stringify(body)).not.toContain('My receiver');
    const [row] = await t.services.db.system.select().from(webhooks).where(eq(webhooks.id, hook._id));
    expect(row?.secret).toBe(SECRET);
    expect(row?.orgId).toBe(org.orgId);
  });

  test('generates a whsec_ secret when none is given and shows it in the create response only', async ({
    t,
    org,
  }) => {
    const { secret: _secret, ...secretless } = valid();
    const body = await createHook(t, org, secretless);
    const generated = body.webhook.secret ?? '';
    // whsec_ + padded base64 of 32 random bytes, as the Standard Webhooks libraries expect.
    expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(generated.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const [row] = await t.services.db.system.select().from(webhooks).where(eq(webhooks.id, body.webhook._id));
    expect(row?.secret).toBe(generated);

    const got = await t.request('GET', `/api/v1/webhooks/${body.webhook._id}`, { token: org.token });
    const listed = await t.request('GET', '/api/v1/webhooks?limit=100', { token: org.token });
    for (const text of [await got.text(), await listed.text()]) {
      expect(text).not.toContain(generated);
      expect(text).not.toContain('"secret"');
    }

    const again = await createHook(t, org, secretless);
    expect(again.webhook.secret).toMatch(/^whsec_/);
    expect(again.webhook.secret).not.toBe(generated);
  });

  test('accepts is_active false, an https URL on a private address, and drops duplicate events', async ({
    t,
    org,
  }) => {
    const hook = await createOk(t, org, {
      url: 'https://10.0.0.5:8443/hook',
      is_active: false,
      events: ['invoice.paid', 'invoice.paid'],
    });
    expect(hook.is_active).toBe(false);
    expect(hook.events).toEqual(['invoice.paid']);
  });

  test('gets, lists newest first, updates and deletes, never showing the secret', async ({ t }) => {
    const other = await t.createOrg({ plan: 'starter' });
    const first = await createOk(t, other, { url: 'https://one.example.test/a' });
    const second = await createOk(t, other, { url: 'https://two.example.test/b' });

    const got = await t.request('GET', `/api/v1/webhooks/${first._id}`, { token: other.token });
    expect(got.status).toBe(200);
    const gotBody = await readOutput(got, TOOL.get_webhook);
    expect(gotBody.webhook).toEqual(first);
    expectNoSecret(gotBody);

    const list = await t.request('GET', '/api/v1/webhooks?limit=1', { token: other.token });
    const listBody = await readOutput(list, TOOL.list_webhooks);
    expect(list.status).toBe(200);
    expect(listBody.total).toBe(2);
    expect(listBody.totalPages).toBe(2);
    expect(listBody.webhooks.map((w) => w._id)).toEqual([second._id]);
    expectNoSecret(listBody);
    const page2 = await readOutput(
      await t.request('GET', '/api/v1/webhooks?limit=1&page=2', { token: other.token }),
      TOOL.list_webhooks,
    );
    expect(page2.webhooks.map((w) => w._id)).toEqual([first._id]);
    const searched = await readOutput(
      await t.request('GET', '/api/v1/webhooks?search=two.example', { token: other.token }),
      TOOL.list_webhooks,
    );
    expect(searched.webhooks.map((w) => w._id)).toEqual([second._id]);

    const put = await t.request('PUT', `/api/v1/webhooks/${first._id}`, {
      token: other.token,
      body: { is_active: false, events: ['contact.created'], secret: 'another-secret-of-16+' },
    });
    expect(put.status).toBe(200);
    const putBody = await readOutput(put, TOOL.update_webhook);
    expect(putBody.webhook).toMatchObject({ _id: first._id, is_active: false, events: ['contact.created'] });
    expect(JSON.stringify(putBody)).not.toContain('another-secret-of-16+');
    expectNoSecret(putBody);
    const [stored] = await t.services.db.system.select().from(webhooks).where(eq(webhooks.id, first._id));
    expect(stored?.secret).toBe('another-secret-of-16+');

    const back = await t.request('PUT', `/api/v1/webhooks/${first._id}`, {
      token: other.token,
      body: { is_active: true },
    });
    expect((await readOutput(back, TOOL.update_webhook)).webhook.is_active).toBe(true);

    const empty = await t.request('PUT', `/api/v1/webhooks/${first._id}`, { token: other.token, body: {} });
    expect(empty.status).toBe(400);
    const badUrl = await t.request('PUT', `/api/v1/webhooks/${first._id}`, {
      token: other.token,
      body: { url: 'http://one.example.test/a' },
    });
    expect(badUrl.status).toBe(400);
    expect((await readError(badUrl, 400)).details?.[0]?.field).toBe('url');

    const deliveryId = await insertDelivery(t, other.orgId, first._id, 'failed');
    const del = await t.request('DELETE', `/api/v1/webhooks/${first._id}`, { token: other.token });
    expect(del.status).toBe(200);
    expect(await readOutput(del, TOOL.delete_webhook)).toEqual({ message: 'Webhook deleted' });
    expect((await t.request('GET', `/api/v1/webhooks/${first._id}`, { token: other.token })).status).toBe(
      404,
    );
    const left = await t.services.db.system
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, deliveryId));
    expect(left).toEqual([]);
    const again = await t.request('DELETE', `/api/v1/webhooks/${first._id}`, { token: other.token });
    expect(again.status).toBe(404);
  });
});

describe('validation', () => {
  test('refuses a URL that is not https with 400 on url', async ({ t, org }) => {
    for (const url of [
      'http://hooks.example.test/crm',
      'ftp://hooks.example.test',
      'not a url',
      'https://',
      '',
    ]) {
      const res = await postHook(t, org, valid({ url }));
      expect(res.status, url).toBe(400);
      const body = await readError(res, 400);
      expect(detailFields(body), url).toEqual(['url']);
    }
    const long = await readError(
      await postHook(t, org, valid({ url: `https://example.test/${'a'.repeat(2000)}` })),
      400,
    );
    expect(detailFields(long)).toEqual(['url']);
  });

  test('refuses a URL carrying a user name or password with 400 on url, on create and on update', async ({
    t,
    org,
  }) => {
    const hook = await createOk(t, org);
    for (const url of [
      'https://user:pass@hooks.example.test/crm',
      'https://user@hooks.example.test/crm',
      'https://:pass@hooks.example.test/crm',
    ]) {
      const res = await postHook(t, org, valid({ url }));
      expect(res.status, url).toBe(400);
      const body = await readError(res, 400);
      expect(body.error, url).toBe('Validation failed');
      expect(detailFields(body), url).toEqual(['url']);
      expect(body.details?.[0]?.message).toContain('user name or password');
      const put = await t.request('PUT', `/api/v1/webhooks/${hook._id}`, { token: org.token, body: { url } });
      expect(put.status, url).toBe(400);
      expect(detailFields(await readError(put, 400)), url).toEqual(['url']);
    }
    const [row] = await t.services.db.system.select().from(webhooks).where(eq(webhooks.id, hook._id));
    expect(row?.url).toBe('https://hooks.example.test/crm');
  });

  test('refuses a whsec_ secret that does not decode to a 24-byte key, on create and on update', async ({
    t,
    org,
  }) => {
    const hook = await createOk(t, org);
    const key = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');
    for (const secret of [
      'whsec_not*base64*at*all!!',
      `whsec_${key(32).replaceAll('=', '')}`, // unpadded
      `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`, // URL-safe alphabet
      `whsec_ ${key(32)}`,
      `whsec_${key(16)}`, // valid base64, too short a key
    ]) {
      const res = await postHook(t, org, valid({ secret }));
      expect(res.status, secret).toBe(400);
      const body = await readError(res, 400);
      expect(detailFields(body), secret).toEqual(['secret']);
      const put = await t.request('PUT', `/api/v1/webhooks/${hook._id}`, {
        token: org.token,
        body: { secret },
      });
      expect(put.status, secret).toBe(400);
      expect(detailFields(await readError(put, 400)), secret).toEqual(['secret']);
    }
    const good = `whsec_${key(24)}`;
    const body = await createHook(t, org, valid({ secret: good }));
    expect(JSON.stringify(body)).not.toContain(good);
    const put = await t.request('PUT', `/api/v1/webhooks/${hook._id}`, {
      token: org.token,
      body: { secret: good },
    });
    expect(put.status).toBe(200);
  });

  test('refuses an unknown event naming it, webhook.test, and an empty list', async ({ t, org }) => {
    const unknown = await readError(
      await postHook(t, org, valid({ events: ['lead.created', 'lead.exploded'] })),
      400,
    );
    expect(unknown.details).toEqual([
      { field: 'events.1', message: expect.stringContaining('"lead.exploded"'), code: 'custom' },
    ]);
    const test = await readError(await postHook(t, org, valid({ events: ['webhook.test'] })), 400);
    expect(test.details?.[0]?.message).toContain('"webhook.test"');
    const empty = await readError(await postHook(t, org, valid({ events: [] })), 400);
    expect(detailFields(empty)).toEqual(['events']);
  });

  test('refuses a short secret, a missing name and unknown fields', async ({ t, org }) => {
    const short = await readError(await postHook(t, org, valid({ secret: 'x'.repeat(15) })), 400);
    expect(detailFields(short)).toEqual(['secret']);
    await createHook(t, org, valid({ secret: 'x'.repeat(16) }));

    const { name: _name, ...nameless } = valid();
    const missing = await readError(await postHook(t, org, nameless), 400);
    expect(detailFields(missing)).toEqual(['name']);

    await readError(await postHook(t, org, valid({ owner: 'me' })), 400);
  });

  test('answers 400 for a path id that is not 24 hex characters', async ({ t, org }) => {
    const res = await t.request('GET', '/api/v1/webhooks/nope', { token: org.token });
    expect(res.status).toBe(400);
  });
});

describe('plan, feature and permission checks', () => {
  test('answers 402 plan_upgrade_required on the free plan', async ({ t }) => {
    const free = await t.createOrg({ plan: 'free' });
    const res = await t.request('POST', '/api/v1/webhooks', { token: free.token, body: valid() });
    expect(res.status).toBe(402);
    expect(await readError(res, 402)).toMatchObject({
      error: 'plan_upgrade_required',
      feature: 'webhooks',
      current_plan: 'free',
    });
    const list = await t.request('GET', '/api/v1/webhooks', { token: free.token });
    expect(list.status).toBe(402);
  });

  test('answers 402 feature_disabled when the organization switched webhooks off', async ({ t }) => {
    const off = await t.createOrg({ plan: 'starter' });
    const hook = await createOk(t, off);
    await t.services.db.system
      .update(organizations)
      .set({ disabledFeatures: ['webhooks'] })
      .where(eq(organizations.id, off.orgId));
    await t.services.authCache.invalidate({ orgIds: [off.orgId] });
    const res = await t.request('GET', `/api/v1/webhooks/${hook._id}/deliveries`, { token: off.token });
    expect(res.status).toBe(402);
    expect(await readError(res, 402)).toMatchObject({ error: 'feature_disabled', feature: 'webhooks' });
  });

  test('answers 403 with required_permission for a member', async ({ t, org }) => {
    const member = await t.createUser(org.orgId, 'member');
    const res = await t.request('POST', '/api/v1/webhooks', { token: member.token, body: valid() });
    expect(res.status).toBe(403);
    expect(await readError(res, 403)).toMatchObject({ required_permission: 'settings.webhooks.create' });
    const list = await t.request('GET', '/api/v1/webhooks', { token: member.token });
    expect(list.status).toBe(403);
    expect(await readError(list, 403)).toMatchObject({
      required_permission: 'settings.webhooks.view_global',
    });
  });

  test('lets a manager (view_own) read only the logs of subscriptions they created', async ({ t, org }) => {
    const manager = await t.createUser(org.orgId, 'manager');
    const ownersHook = await createOk(t, org);
    const res = await t.request('GET', `/api/v1/webhooks/${ownersHook._id}/deliveries`, {
      token: manager.token,
    });
    expect(res.status).toBe(404);
    const [mine] = await t.services.db.system
      .insert(webhooks)
      .values({
        id: newId(),
        orgId: org.orgId,
        url: 'https://mine.example.test',
        events: ['lead.created'],
        secret: SECRET,
        createdBy: manager.userId,
      })
      .returning();
    if (!mine) throw new Error('no webhook inserted');
    const own = await t.request('GET', `/api/v1/webhooks/${mine.id}/deliveries`, { token: manager.token });
    expect(own.status).toBe(200);
  });
});

describe('test deliveries and the log', () => {
  test('creates a pending webhook.test delivery, also for an inactive subscription', async ({ t, org }) => {
    const hook = await createOk(t, org, { is_active: false });
    // A spy that passes calls through: the job is really enqueued (and waits, no worker runs here).
    const enqueue = vi.spyOn(t.services.queue, 'enqueue');
    const res = await t.request('POST', `/api/v1/webhooks/test/${hook._id}`, { token: org.token });
    expect(res.status).toBe(200);
    const { delivery } = await readOutput(res, TOOL.test_webhook);
    expect(enqueue.mock.calls).toEqual([
      ['webhook.deliver', { deliveryId: delivery._id, single: true }, { jobId: delivery._id }],
    ]);
    enqueue.mockRestore();
    expect(delivery).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      webhook_id: hook._id,
      event: 'webhook.test',
      status: 'pending',
      data: { webhook_id: hook._id, message: 'Test delivery from the CRM', sent_by: org.ownerId },
      attempts: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const [row] = await t.services.db.system
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, delivery._id));
    expect(row).toMatchObject({
      orgId: org.orgId,
      webhookId: hook._id,
      event: 'webhook.test',
      outboxEventId: null,
      status: 'pending',
    });
    expect(row?.nextAttemptAt).toBeInstanceOf(Date);

    const log = await readOutput(
      await t.request('GET', `/api/v1/webhooks/${hook._id}/deliveries`, { token: org.token }),
      TOOL.list_webhook_deliveries,
    );
    expect(log.total).toBe(1);
    expect(log.deliveries[0]?._id).toBe(delivery._id);
  });

  test('filters the log by status, pages newest first, and refuses an unknown status', async ({ t, org }) => {
    const hook = await createOk(t, org);
    const base = Date.now() - 60_000;
    const failedOld = await insertDelivery(t, org.orgId, hook._id, 'failed', new Date(base));
    const succeeded = await insertDelivery(t, org.orgId, hook._id, 'succeeded', new Date(base + 1000));
    const failedNew = await insertDelivery(t, org.orgId, hook._id, 'failed', new Date(base + 2000));
    const url = `/api/v1/webhooks/${hook._id}/deliveries`;

    const all = await readOutput(
      await t.request('GET', url, { token: org.token }),
      TOOL.list_webhook_deliveries,
    );
    expect(all.deliveries.map((d) => d._id)).toEqual([failedNew, succeeded, failedOld]);
    expect(all.deliveries[0]?.attempts).toEqual([
      expect.objectContaining({ status_code: 500, duration_ms: 12, next_attempt_at: null }),
    ]);

    const failed = await readOutput(
      await t.request('GET', `${url}?status=failed&limit=1`, { token: org.token }),
      TOOL.list_webhook_deliveries,
    );
    expect(failed).toMatchObject({ total: 2, totalPages: 2, page: 1, limit: 1 });
    expect(failed.deliveries.map((d) => d._id)).toEqual([failedNew]);
    const failed2 = await readOutput(
      await t.request('GET', `${url}?status=failed&limit=1&page=2`, { token: org.token }),
      TOOL.list_webhook_deliveries,
    );
    expect(failed2.deliveries.map((d) => d._id)).toEqual([failedOld]);
    const ok = await readOutput(
      await t.request('GET', `${url}?status=succeeded`, { token: org.token }),
      TOOL.list_webhook_deliveries,
    );
    expect(ok.deliveries.map((d) => d._id)).toEqual([succeeded]);

    expect((await t.request('GET', `${url}?status=lost`, { token: org.token })).status).toBe(400);
    expect((await t.request('GET', `${url}?limit=101`, { token: org.token })).status).toBe(400);
  });

  test('replays a finished delivery: pending again, same id; refuses a pending one', async ({ t, org }) => {
    const hook = await createOk(t, org);
    const id = await insertDelivery(t, org.orgId, hook._id, 'failed');
    const enqueue = vi.spyOn(t.services.queue, 'enqueue');
    const res = await t.request('POST', `/api/v1/webhooks/deliveries/${id}/replay`, { token: org.token });
    expect(res.status).toBe(200);
    const { delivery } = await readOutput(res, TOOL.replay_webhook_delivery);
    // One attempt was logged before, so this replay is the second attempt's job.
    expect(enqueue.mock.calls).toEqual([
      ['webhook.deliver', { deliveryId: id, single: true }, { jobId: `${id}:replay:2` }],
    ]);
    enqueue.mockRestore();
    expect(delivery).toMatchObject({
      _id: id,
      status: 'pending',
      webhook_id: hook._id,
      event: 'lead.created',
    });
    expect(delivery.attempts).toHaveLength(1);
    const [row] = await t.services.db.system
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, id));
    expect(row?.status).toBe('pending');
    expect(row?.nextAttemptAt).toBeInstanceOf(Date);

    const again = await t.request('POST', `/api/v1/webhooks/deliveries/${id}/replay`, { token: org.token });
    expect(again.status).toBe(400);
    expect((await readError(again, 400)).error).toBe('Operation not allowed');
  });

  test("answers 404 to a replay of another organization's delivery and leaves it alone", async ({
    t,
    org,
  }) => {
    const other = await t.createOrg({ plan: 'starter' });
    const hook = await createOk(t, other);
    const id = await insertDelivery(t, other.orgId, hook._id, 'failed');
    const res = await t.request('POST', `/api/v1/webhooks/deliveries/${id}/replay`, { token: org.token });
    expect(res.status).toBe(404);
    expect((await readError(res, 404)).error).toBe('Not found');
    const [row] = await t.services.db.system
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, id));
    expect(row?.status).toBe('failed');
    const unknown = await t.request('POST', `/api/v1/webhooks/deliveries/${newId()}/replay`, {
      token: org.token,
    });
    expect(unknown.status).toBe(404);
  });
});
