// Locks in the SSRF guard: which addresses webhook deliveries may reach, in every tricky spelling.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  classifyAddress,
  createDeliveryDispatcher,
  guardedLookup,
  parseTargetUrl,
} from '../tools/webhooks/ssrf.ts';
import { HttpsReceiver } from './support/https-receiver.ts';

const refused: Array<[string, RegExp]> = [
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['10.1.2.3', /private/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['169.254.169.254', /link-local/],
  ['100.64.0.1', /carrier-grade/],
  ['100.127.255.255', /carrier-grade/],
  ['0.0.0.0', /unspecified/],
  ['0.1.2.3', /unspecified/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['240.0.0.1', /reserved/],
  ['255.255.255.255', /broadcast/],
  ['192.0.2.10', /documentation/],
  ['198.18.0.1', /benchmarking/],
  ['::', /unspecified/],
  ['::1', /loopback/],
  ['0:0:0:0:0:0:0:1', /loopback/],
  ['fe80::1', /link-local/],
  ['fe80::1%eth0', /link-local/],
  ['febf::1', /link-local/],
  ['fc00::1', /unique-local/],
  ['fd12:3456:789a::1', /unique-local/],
  ['ff02::1', /multicast/],
  ['::ffff:127.0.0.1', /IPv4-mapped loopback/],
  ['::ffff:7f00:1', /IPv4-mapped loopback/],
  ['::FFFF:A9FE:A9FE', /IPv4-mapped link-local/],
  ['::ffff:10.0.0.1', /IPv4-mapped private/],
  ['::127.0.0.1', /IPv4-compatible loopback/],
  ['::ffff:0:127.0.0.1', /IPv4-translated loopback/],
  ['64:ff9b::7f00:1', /NAT64 loopback/],
  ['64:ff9b::192.168.0.1', /NAT64 private/],
  ['64:ff9b:1::1', /local-use NAT64/],
  ['2002:7f00:1::1', /6to4 loopback/],
  ['2001:db8::1', /documentation/],
  ['2001::1', /Teredo/],
  ['100::1', /not global unicast/],
  ['[::1]', /loopback/],
  ['not-an-ip', /not an IP/],
  ['1.2.3', /not an IP/],
];

const allowed = [
  '93.184.215.14',
  '8.8.8.8',
  '1.1.1.1',
  '172.15.255.255',
  '172.32.0.1',
  '100.63.255.255',
  '100.128.0.1',
  '192.167.1.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::8.8.8.8',
  '2002:808:808::1',
];

describe('classifyAddress', () => {
  it.each(refused)('refuses %s', (ip, reason) => {
    const verdict = classifyAddress(ip);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) expect(verdict.reason).toMatch(reason);
  });

  it.each(allowed)('allows %s', (ip) => {
    expect(classifyAddress(ip)).toEqual({ allowed: true });
  });
});

describe('parseTargetUrl', () => {
  const literals: Array<[string, string]> = [
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://0x7f000001/hook', '127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['https://[::1]:8443/x', '::1'],
    ['https://[fe80::1]/', 'fe80::1'],
  ];

  it.each(literals)('normalises %s to the IP literal %s, which is refused', (url, ip) => {
    const parsed = parseTargetUrl(url);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.ipLiteral).toBe(ip);
    expect(classifyAddress(ip).allowed).toBe(false);
  });

  it('keeps names as names for the connect-time DNS check', () => {
    const parsed = parseTargetUrl('https://hooks.example.com/in');
    expect(parsed).toMatchObject({ ok: true, hostname: 'hooks.example.com', ipLiteral: null });
  });

  it.each([
    ['http://example.com/', /scheme/],
    ['ftp://example.com/', /scheme/],
    ['https://user:pw@example.com/', /credentials/],
    ['not a url', /valid URL/],
  ])('rejects %s', (url, reason) => {
    const parsed = parseTargetUrl(url);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });
});

describe('guardedLookup', () => {
  const resolve = (host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((done) => {
      guardedLookup(host, { all }, (err, address) => done({ err, address }));
    });

  it('refuses a name that resolves to loopback, with the detailed reason', async () => {
    const { err } = await resolve('localhost', false);
    expect(err?.code).toBe('ERR_BLOCKED_TARGET');
    expect(err?.message).toMatch(/loopback/);
  });

  it('refuses it in the all-addresses form used by happy eyeballs too', async () => {
    const { err } = await resolve('localhost', true);
    expect(err?.code).toBe('ERR_BLOCKED_TARGET');
  });
});

describe('the delivery dispatcher', () => {
  let receiver: HttpsReceiver;
  beforeAll(async () => {
    receiver = await HttpsReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
  });

  const post = async (url: string, allowPrivate: boolean) => {
    const dispatcher = createDeliveryDispatcher({ allowPrivate, ca: receiver.ca });
    try {
      const res = await request(url, { method: 'POST', body: '{}', dispatcher });
      await res.body.text();
      return res.statusCode;
    } finally {
      await dispatcher.destroy();
    }
  };

  it('refuses an IP-literal private target at connect time and never reaches it', async () => {
    receiver.reset();
    await expect(post(receiver.url(), false)).rejects.toMatchObject({ code: 'ERR_BLOCKED_TARGET' });
    const port = new URL(receiver.origin).port;
    await expect(post(`https://[::ffff:127.0.0.1]:${port}/hook`, false)).rejects.toMatchObject({
      code: 'ERR_BLOCKED_TARGET',
    });
    await expect(post(`https://2130706433:${port}/hook`, false)).rejects.toMatchObject({
      code: 'ERR_BLOCKED_TARGET',
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses a name resolving to a private address (the check runs on resolved addresses)', async () => {
    receiver.reset();
    const port = new URL(receiver.origin).port;
    await expect(post(`https://localhost:${port}/hook`, false)).rejects.toMatchObject({
      code: 'ERR_BLOCKED_TARGET',
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it('connects when private targets are allowed (and the certificate is trusted)', async () => {
    receiver.reset();
    expect(await post(receiver.url(), true)).toBe(200);
    const port = new URL(receiver.origin).port;
    expect(await post(`https://localhost:${port}/hook`, true)).toBe(200);
    expect(receiver.requests).toHaveLength(2);
  });

  it('fails TLS verification for an untrusted certificate', async () => {
    const dispatcher = createDeliveryDispatcher({ allowPrivate: true });
    try {
      await expect(request(receiver.url(), { method: 'POST', body: '{}', dispatcher })).rejects.toMatchObject(
        {
          code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO/),
        },
      );
    } finally {
      await dispatcher.destroy();
    }
  });
});
