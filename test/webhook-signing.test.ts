// Locks in the webhook signatures: X-CRM-Signature over the exact body bytes and the Standard
// Webhooks headers, and the receiver checks docs/webhooks.md tells customers to run.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  signPayload,
  standardWebhookSignature,
  verifyStandardWebhook,
  verifyWebhookSignature,
} from '../tools/webhooks/signing.ts';

const secret = 'whsec-test-secret-0123456789';
const body =
  '{"event":"lead.created","org_id":"abc","timestamp":"2026-01-01T00:00:00.000Z","data":{"name":"Zoë"}}';

describe('signPayload', () => {
  it('is the lowercase hex HMAC-SHA256 of the body bytes', () => {
    const expected = createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex');
    expect(signPayload(secret, body)).toBe(expected);
    expect(signPayload(secret, body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('signs bytes and the equivalent string alike, and any byte change alters it', () => {
    const bytes = new TextEncoder().encode(body);
    expect(signPayload(secret, bytes)).toBe(signPayload(secret, body));
    expect(signPayload(secret, `${body} `)).not.toBe(signPayload(secret, body));
    expect(signPayload(`${secret}x`, body)).not.toBe(signPayload(secret, body));
  });

  it('honours a Uint8Array view into a larger buffer', () => {
    const backing = new Uint8Array(Buffer.from(`xx${body}yy`, 'utf8'));
    const view = backing.subarray(2, backing.length - 2);
    expect(signPayload(secret, view)).toBe(signPayload(secret, body));
  });
});

describe('verifyWebhookSignature', () => {
  const good = signPayload(secret, body);

  it('accepts the right signature, also in upper case', () => {
    expect(verifyWebhookSignature(body, good, secret)).toBe(true);
    expect(verifyWebhookSignature(Buffer.from(body), good.toUpperCase(), secret)).toBe(true);
  });

  it.each([
    ['missing', undefined],
    ['null', null],
    ['empty', ''],
    ['short', good.slice(0, 63)],
    ['non-hex', `${good.slice(0, 63)}g`],
    ['another body', signPayload(secret, '{}')],
    ['another secret', signPayload('another-secret-000000', body)],
  ])('rejects a %s signature', (_label, header) => {
    expect(verifyWebhookSignature(body, header, secret)).toBe(false);
  });

  it('rejects a body changed after signing (re-serialised JSON)', () => {
    const reserialised = JSON.stringify(JSON.parse(body), null, 1);
    expect(verifyWebhookSignature(reserialised, good, secret)).toBe(false);
  });
});

describe('Standard Webhooks', () => {
  const id = '65a1b2c3d4e5f60718293a4b';
  const timestamp = 1_767_225_600;
  const now = new Date(timestamp * 1000);

  it('signs "id.timestamp.body" keyed with the UTF-8 secret, base64, prefixed v1,', () => {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(`${id}.${timestamp}.${body}`)
      .digest('base64');
    expect(standardWebhookSignature(secret, id, timestamp, body)).toBe(`v1,${expected}`);
  });

  const signature = standardWebhookSignature(secret, id, timestamp, body);
  const headers = { id, timestamp: String(timestamp), signature };

  it('verifies a fresh delivery', () => {
    expect(verifyStandardWebhook(body, headers, secret, { now })).toBe(true);
    expect(verifyStandardWebhook(body, headers, secret, { now: new Date((timestamp + 300) * 1000) })).toBe(
      true,
    );
  });

  it('accepts one matching signature among several', () => {
    const several = `v1,${Buffer.alloc(32).toString('base64')} v2,abc ${signature}`;
    expect(verifyStandardWebhook(body, { ...headers, signature: several }, secret, { now })).toBe(true);
  });

  it('rejects stale and future timestamps beyond the tolerance', () => {
    expect(verifyStandardWebhook(body, headers, secret, { now: new Date((timestamp + 301) * 1000) })).toBe(
      false,
    );
    expect(verifyStandardWebhook(body, headers, secret, { now: new Date((timestamp - 301) * 1000) })).toBe(
      false,
    );
    expect(
      verifyStandardWebhook(body, headers, secret, {
        now: new Date((timestamp + 60) * 1000),
        toleranceSeconds: 30,
      }),
    ).toBe(false);
  });

  it.each([
    ['another id', { ...headers, id: 'ffffffffffffffffffffffff' }],
    ['another timestamp', { ...headers, timestamp: String(timestamp + 1) }],
    ['a non-numeric timestamp', { ...headers, timestamp: '1767225600.5' }],
    ['a missing signature', { ...headers, signature: null }],
    ['a missing id', { ...headers, id: undefined }],
    ['a signature without version', { ...headers, signature: signature.slice(3) }],
    ['a wrong version', { ...headers, signature: `v2,${signature.slice(3)}` }],
  ])('rejects %s', (_label, changed) => {
    expect(verifyStandardWebhook(body, changed, secret, { now })).toBe(false);
  });

  it('keys webhook-signature with the decoded bytes of a canonical whsec_ secret, X-CRM-Signature with the string', () => {
    const key = Buffer.alloc(32, 0xa5);
    const whsec = `whsec_${key.toString('base64')}`;
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
    expect(standardWebhookSignature(whsec, id, timestamp, body)).toBe(`v1,${expected}`);
    const standard = { id, timestamp: String(timestamp), signature: `v1,${expected}` };
    expect(verifyStandardWebhook(body, standard, whsec, { now })).toBe(true);
    // The specified header stays keyed with the secret string as configured, prefix and all.
    const crm = createHmac('sha256', Buffer.from(whsec, 'utf8')).update(body).digest('hex');
    expect(signPayload(whsec, body)).toBe(crm);
    expect(verifyWebhookSignature(body, crm, whsec)).toBe(true);

    // A stored whsec_ secret that is not canonical base64 (a row from before creation checked it)
    // keeps the UTF-8 key it was always signed with.
    const legacy = 'whsec_end_to_end_0123456789';
    const legacyDigest = createHmac('sha256', Buffer.from(legacy, 'utf8'))
      .update(`${id}.${timestamp}.${body}`)
      .digest('base64');
    expect(standardWebhookSignature(legacy, id, timestamp, body)).toBe(`v1,${legacyDigest}`);
  });

  it('rejects another body or secret', () => {
    expect(verifyStandardWebhook(`${body} `, headers, secret, { now })).toBe(false);
    expect(verifyStandardWebhook(body, headers, `${secret}x`, { now })).toBe(false);
  });
});
