// Locks in the SSRF guard: which addresses webhook deliveries may reach, in every tricky spelling,
// and that the warm pools deliveries reuse never carry a request to an address DNS no longer names.
import type { LookupAddress } from 'node:dns';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressVerdict } from '../core/network-guard.ts';
import {
  classifyAddress,
  createDeliveryDispatchers,
  type DeliveryDispatcherOptions,
  parseTargetUrl,
  type ValidTarget,
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

function validTarget(url: string): ValidTarget {
  const parsed = parseTargetUrl(url);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed;
}

describe('the delivery pools', () => {
  let receiver: HttpsReceiver;
  beforeAll(async () => {
    receiver = await HttpsReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
  });

  /** One POST through a fresh set of pools, closed afterwards. */
  const post = async (url: string, options: Omit<DeliveryDispatcherOptions, 'ca'>) => {
    const pools = createDeliveryDispatchers({ ...options, ca: receiver.ca });
    try {
      return await postThrough(pools, url);
    } finally {
      await pools.close();
    }
  };
  const postThrough = async (pools: ReturnType<typeof createDeliveryDispatchers>, url: string) => {
    const target = validTarget(url);
    const res = await request(target.url, {
      method: 'POST',
      body: '{}',
      dispatcher: await pools.dispatcherFor(target),
    });
    await res.body.text();
    // The connection is handed back to its pool just after the body ends; a delivery's database
    // write comes in between in the worker, this short pause here.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return res.statusCode;
  };
  const port = () => new URL(receiver.origin).port;
  /** A guard that allows only 127.0.0.1, the receiver. */
  const onlyReceiver = (address: string): AddressVerdict =>
    address === '127.0.0.1' ? { allowed: true } : { allowed: false, reason: 'refused by the test' };
  /** Pools over a scripted DNS answering `dns.answer` (lookups counted), guarded by onlyReceiver. */
  const scriptedPools = (resolveTtlMs: number) => {
    const dns = { answer: '127.0.0.1', lookups: 0 };
    const resolve = async (): Promise<LookupAddress[]> => {
      dns.lookups++;
      return [{ address: dns.answer, family: 4 }];
    };
    const pools = createDeliveryDispatchers({
      allowPrivate: false,
      ca: receiver.ca,
      resolve,
      classify: onlyReceiver,
      resolveTtlMs,
    });
    return { dns, resolve, pools };
  };

  it('refuses an IP-literal private target before connecting and never reaches it', async () => {
    receiver.reset();
    await expect(post(receiver.url(), { allowPrivate: false })).rejects.toMatchObject({
      code: 'ERR_BLOCKED_TARGET',
    });
    await expect(
      post(`https://[::ffff:127.0.0.1]:${port()}/hook`, { allowPrivate: false }),
    ).rejects.toMatchObject({
      code: 'ERR_BLOCKED_TARGET',
    });
    await expect(post(`https://2130706433:${port()}/hook`, { allowPrivate: false })).rejects.toMatchObject({
      code: 'ERR_BLOCKED_TARGET',
    });
    expect(receiver.requests).toHaveLength(0);
    expect(receiver.tlsSessions).toBe(0);
  });

  it('refuses a name resolving to a private address (every resolved address is checked)', async () => {
    receiver.reset();
    await expect(post(`https://localhost:${port()}/hook`, { allowPrivate: false })).rejects.toMatchObject({
      code: 'ERR_BLOCKED_TARGET',
      message: expect.stringMatching(/loopback/),
    });
    // A name mixing a public record with a private one is refused too.
    const mixed = async (): Promise<LookupAddress[]> => [
      { address: '8.8.8.8', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    await expect(
      post(`https://hooks.test:${port()}/hook`, { allowPrivate: false, resolve: mixed }),
    ).rejects.toMatchObject({ code: 'ERR_BLOCKED_TARGET' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('connects when private targets are allowed, by IP and by name (TLS checks the name)', async () => {
    receiver.reset();
    expect(await post(receiver.url(), { allowPrivate: true })).toBe(200);
    expect(await post(`https://localhost:${port()}/hook`, { allowPrivate: true })).toBe(200);
    expect(receiver.requests).toHaveLength(2);
  });

  it('fails TLS verification for an untrusted certificate', async () => {
    const pools = createDeliveryDispatchers({ allowPrivate: true });
    try {
      await expect(postThrough(pools, receiver.url())).rejects.toMatchObject({
        code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO/),
      });
    } finally {
      await pools.close();
    }
  });

  it('reuses one TLS connection for successive requests to the same receiver', async () => {
    receiver.reset();
    const pools = createDeliveryDispatchers({ allowPrivate: true, ca: receiver.ca });
    try {
      for (let i = 0; i < 3; i++) expect(await postThrough(pools, receiver.url())).toBe(200);
      expect(receiver.requests).toHaveLength(3);
      expect(receiver.tlsSessions).toBe(1);
      expect(pools.size).toBe(1);
    } finally {
      await pools.close();
    }
  });

  it('never hands a warm connection to a request whose name now resolves to a refused address', async () => {
    receiver.reset();
    // The name first points at the receiver, then is rebound to 127.0.0.2, which the guard refuses.
    const { dns, pools } = scriptedPools(0);
    // localhost, as the receiver's certificate names it (TLS checks the name, not the address).
    const url = `https://localhost:${port()}/hook`;
    try {
      expect(await postThrough(pools, url)).toBe(200);
      expect(receiver.tlsSessions).toBe(1);
      dns.answer = '127.0.0.2';
      await expect(postThrough(pools, url)).rejects.toMatchObject({
        code: 'ERR_BLOCKED_TARGET',
        message: expect.stringMatching(/127\.0\.0\.2 is refused by the test/),
      });
      // The warm connection to 127.0.0.1 was not used: the receiver saw one request only.
      expect(receiver.requests).toHaveLength(1);
      dns.answer = '127.0.0.1';
      expect(await postThrough(pools, url)).toBe(200);
      expect(receiver.requests).toHaveLength(2);
      expect(receiver.tlsSessions).toBe(1);
    } finally {
      await pools.close();
    }
  });

  it('answers a pool without a lookup only while the checked resolution is fresh, and checks it again', async () => {
    const { dns, resolve, pools } = scriptedPools(60_000);
    const byName = validTarget(`https://localhost:${port()}/hook`);
    try {
      // An IP literal needs no lookup; a name does until it was resolved.
      expect(pools.knownDispatcherFor(validTarget(receiver.url()))).toBeDefined();
      expect(pools.knownDispatcherFor(byName)).toBeUndefined();
      const pool = await pools.dispatcherFor(byName);
      expect(pools.knownDispatcherFor(byName)).toBe(pool);
      expect(dns.lookups).toBe(1);
      // The cached addresses are checked on every answer: a guard that now refuses them wins.
      const strict = createDeliveryDispatchers({
        allowPrivate: false,
        ca: receiver.ca,
        resolve,
        classify: () => ({ allowed: false, reason: 'refused by the test' }),
      });
      try {
        expect(strict.knownDispatcherFor(byName)).toBeUndefined();
        expect(() => strict.knownDispatcherFor(validTarget(receiver.url()))).toThrow(/refused by the test/);
      } finally {
        await strict.close();
      }
      dns.answer = '127.0.0.2';
      // Still fresh: the answer cached above, no new lookup.
      expect(pools.knownDispatcherFor(byName)).toBe(pool);
      expect(dns.lookups).toBe(1);
    } finally {
      await pools.close();
    }
    // With no reuse of resolutions, every send looks the name up.
    const uncached = createDeliveryDispatchers({
      allowPrivate: true,
      ca: receiver.ca,
      resolve,
      resolveTtlMs: 0,
    });
    try {
      await uncached.dispatcherFor(byName);
      expect(uncached.knownDispatcherFor(byName)).toBeUndefined();
    } finally {
      await uncached.close();
    }
  });

  it('keeps at most maxPools pools, closing the least recently used', async () => {
    receiver.reset();
    const pools = createDeliveryDispatchers({ allowPrivate: true, ca: receiver.ca, maxPools: 1 });
    try {
      expect(await postThrough(pools, receiver.url())).toBe(200);
      expect(await postThrough(pools, `https://localhost:${port()}/hook`)).toBe(200);
      expect(pools.size).toBe(1);
      expect(receiver.requests).toHaveLength(2);
    } finally {
      await pools.close();
    }
  });
});
