// Locks in what a new user stumbled on: GET / points to the docs and MCP; /docs and the OpenAPI
// document are served compressed with an ETag (304 on revalidation); the contact phone example
// passes its own OpenAPI schema; system mail without SMTP_URL says delivery "file" and the start
// warns; RATE_LIMITS=off switches the request limits off with a warning at start.
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import {
  createInvoice,
  createLead,
  createProposal,
  createTestContext,
  fileTest,
  readJson,
  readOutput,
  TOOL,
} from './fixtures/index.ts';
import { createSchemaValidator } from './openapi-fuzz-inputs.ts';

const lines: Record<string, unknown>[] = [];
const logger = createLogger('warn', {
  write(msg: string) {
    lines.push(JSON.parse(msg));
  },
});
const test = fileTest({ options: { logger, withoutRateLimits: true } });

describe('the root and the docs', () => {
  test('GET / answers 200 pointing to /docs, the OpenAPI document and /mcp', async ({ t }) => {
    const res = await t.request('GET', '/');
    const body = await readJson(
      res,
      z.object({ name: z.string(), docs: z.string(), openapi: z.string(), mcp: z.string() }).loose(),
    );
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ docs: '/docs', openapi: '/api/v1/openapi.json', mcp: '/mcp' });
  });

  test.for(['/docs/assets/swagger-ui-bundle.js', '/api/v1/openapi.json', '/docs'])(
    'serves %s gzip-compressed with an ETag and answers 304 to If-None-Match',
    async (path, { t }) => {
      const res = await t.app.request(path, { headers: { 'accept-encoding': 'gzip' } });
      expect(res.status).toBe(200);
      const tag = res.headers.get('etag');
      expect(tag).toBeTruthy();
      expect(res.headers.get('cache-control')).toMatch(/public/);
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (path !== '/docs') {
        expect(res.headers.get('content-encoding')).toBe('gzip');
        // The gzip magic number: the bytes on the wire are compressed.
        expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
      }
      const again = await t.app.request(path, {
        headers: { 'accept-encoding': 'gzip', 'if-none-match': tag ?? '' },
      });
      expect(again.status).toBe(304);
    },
  );
});

describe('the contact phone example', () => {
  test('+1 415-555-0100 passes the OpenAPI schema of create_contact and the server takes it', async ({
    t,
    org,
  }) => {
    const doc = await (await t.request('GET', '/api/v1/openapi.json')).json();
    const schema = doc.paths['/api/v1/contacts'].post.requestBody.content['application/json'].schema;
    const lead = await createLead(t, org);
    const body = { lead_id: lead._id, name: 'Ada', phones: [{ phone: '+1 415-555-0100', type: 'office' }] };
    const validate = createSchemaValidator().compile(schema);
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    const res = await t.request('POST', '/api/v1/contacts', { token: org.token, body });
    const contact = (await readOutput(res, TOOL.create_contact, 201)).contact;
    expect(contact.phones).toEqual([{ phone: '+14155550100', type: 'office' }]);
    // Still refused: too few digits once the formatting is stripped.
    const short = await t.request('POST', '/api/v1/contacts', {
      token: org.token,
      body: { ...body, phones: [{ phone: '+1 415', type: 'office' }] },
    });
    expect(short.status).toBe(400);
  });
});

describe('system mail without SMTP_URL', () => {
  test('warns at start and a send says delivery "file"', async ({ t, org }) => {
    expect(lines.some((l) => l.level === 40 && String(l.msg).startsWith('SMTP_URL is not set'))).toBe(true);
    const invoice = await createInvoice(t, org);
    const res = await t.request('POST', `/api/v1/invoices/${invoice._id}/send`, {
      token: org.token,
      body: { to: 'billing@client.test', confirm: true },
    });
    const out = await readOutput(res, TOOL.send_invoice);
    expect(out.mail?.delivery).toBe('file');
    const proposal = await createProposal(t, org);
    const sent = await readOutput(
      await t.request('POST', `/api/v1/proposals/${proposal._id}/send`, {
        token: org.token,
        body: { to: 'buyer@client.test' },
      }),
      TOOL.send_proposal,
    );
    expect(sent.mail).toMatchObject({ to: 'buyer@client.test', delivery: 'file' });
  });
});

describe('RATE_LIMITS', () => {
  test('is on by default and refuses anything but on and off', () => {
    expect(loadConfig({}).rateLimits).toBe(true);
    expect(loadConfig({ RATE_LIMITS: 'off' }).rateLimits).toBe(false);
    expect(() => loadConfig({ RATE_LIMITS: 'no' })).toThrow(/RATE_LIMITS/);
  });

  test('off: no 429 past a limit, and a warning at start', async () => {
    const warnings: Record<string, unknown>[] = [];
    const logger = createLogger('warn', {
      write(msg: string) {
        warnings.push(JSON.parse(msg));
      },
    });
    const unlimited = await createTestContext({ RATE_LIMITS: 'off' }, { logger });
    try {
      expect(warnings.some((l) => String(l.msg).startsWith('RATE_LIMITS=off'))).toBe(true);
      // The auth limit is 10 a minute per IP: 15 failed logins all answer 401, none 429.
      for (let i = 0; i < 15; i++) {
        const res = await unlimited.request('POST', '/api/v1/auth/login', {
          body: { email: 'nobody@example.test', password: 'wrong password' },
        });
        expect(res.status).toBe(401);
        expect(res.headers.get('ratelimit-limit')).toBeNull();
      }
    } finally {
      await unlimited.close();
    }
  });
});
