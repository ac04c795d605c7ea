// The SSRF guard for webhook targets, and the warm connection pools deliveries go through. A
// subscription URL is customer input, so deliveries must not reach loopback, private, link-local or
// other non-public addresses of the server's network.
//
// Every attempt resolves its host (a short cache, RESOLVE_TTL_MS) and checks EVERY address DNS
// returned; the attempt then goes through the pool of (origin, first address): an undici Pool whose
// sockets connect to that pinned address only, with the name kept for TLS (SNI and the certificate
// check). So a kept-alive connection is reused only while DNS still names the address it was
// opened to: when a name starts resolving to 127.0.0.1 (DNS rebinding), the next attempt is refused
// before it picks a pool, the warm connection to the old address is never handed to it, and no
// socket is ever opened to an address that was not checked. A bounded LRU of pools
// (MAX_POOLS) closes the least recently used. WEBHOOK_ALLOW_PRIVATE_TARGETS=true turns the check off
// (local development and tests); the pinning and the pools stay the same. docs/webhooks.md
// "Connection reuse".
import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { buildConnector, type Dispatcher, Pool } from 'undici';
import { type AddressVerdict, classifyAddress } from '../../core/network-guard.ts';

// The classifier moved to core (the connected-accounts SMTP client needs it too); re-exported here
// for the webhook code and tests that import it from this module.
export { classifyAddress } from '../../core/network-guard.ts';

/** The error a refused target fails with; its `reason` is for the log only, never the API. */
export class BlockedTargetError extends Error {
  readonly code = 'ERR_BLOCKED_TARGET';
  constructor(
    readonly target: string,
    readonly reason: string,
  ) {
    super(`Webhook target ${target} is not allowed: ${reason}`);
    this.name = 'BlockedTargetError';
  }
}

export type ParsedTarget =
  | {
      ok: true;
      url: URL;
      /** The host without IPv6 brackets, as the socket connects to it. */
      hostname: string;
      /** The host when it is an IP literal (after WHATWG normalisation of 2130706433, 0x7f.1, ...), else null. */
      ipLiteral: string | null;
    }
  | { ok: false; reason: string };

/**
 * Parses a webhook URL. WHATWG URL parsing normalises IPv4 written in decimal, octal or hex
 * (`https://2130706433/` has host 127.0.0.1), so the literal check below sees the real address.
 */
export function parseTargetUrl(raw: string): ParsedTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: `scheme ${url.protocol} is not https:` };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL' };
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!hostname) return { ok: false, reason: 'no host' };
  return { ok: true, url, hostname, ipLiteral: isIP(hostname) ? hostname : null };
}

/** A target that parsed: what {@link DeliveryDispatchers.dispatcherFor} takes. */
export type ValidTarget = Extract<ParsedTarget, { ok: true }>;

export interface DeliveryDispatcherOptions {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: connect anywhere (development and tests). */
  allowPrivate: boolean;
  /**
   * PEM certificate(s) to trust instead of the system roots. Only tests pass one (their receiver's
   * self-signed certificate); deployments rely on the system roots plus NODE_EXTRA_CA_CERTS.
   */
  ca?: string;
  /** Connect timeout; the caller's abort signal bounds the whole request anyway. */
  connectTimeoutMs?: number;
  /** Connections one pool opens at most (WEBHOOK_CONNECTIONS_PER_ORIGIN); MAX_CONNECTIONS_PER_POOL by default. */
  connectionsPerPool?: number;
  /** At most this many pools stay open; the least recently used is closed first. */
  maxPools?: number;
  /** How long a name's checked addresses are reused before DNS is asked again (0: every attempt). */
  resolveTtlMs?: number;
  /** How a name is resolved; the system resolver by default (tests script a DNS that changes). */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
  /** Which addresses may be reached; core/network-guard.ts by default (tests narrow it to one address). */
  classify?: (address: string) => AddressVerdict;
}

/** The pools deliveries go through, one per (origin, checked address). */
export interface DeliveryDispatchers {
  /**
   * Resolves and checks the target's host, then answers the warm pool for its origin pinned to the
   * checked address. Rejects with BlockedTargetError when any address is refused, or with the
   * resolver's error (ENOTFOUND, ...).
   */
  dispatcherFor(target: ValidTarget): Promise<Dispatcher>;
  /**
   * The same without waiting when no lookup is needed (an IP literal, or a name whose checked
   * addresses are still fresh): the pool, checked as dispatcherFor checks it, or undefined when the
   * name must be resolved first. Throws BlockedTargetError when an address is refused. Most sends
   * go to a receiver resolved moments before, and take no promise or deadline listener here.
   */
  knownDispatcherFor(target: ValidTarget): Dispatcher | undefined;
  /** Pools open now (tests). */
  readonly size: number;
  /** Closes every pool, letting requests in flight finish. */
  close(): Promise<void>;
}

/** Pools kept open at most: each is a few sockets to one receiver, idle ones close on their own. */
const MAX_POOLS = 256;
/** A checked resolution is reused this long (a receiver's DNS change is seen within this time). */
const RESOLVE_TTL_MS = 5_000;
/**
 * An idle kept-alive connection is closed after this long (or sooner, when the receiver's
 * Keep-Alive header says so): long enough to carry a burst of deliveries, short enough not to hold
 * sockets to receivers that got one event.
 */
const KEEP_ALIVE_MS = 10_000;
const KEEP_ALIVE_MAX_MS = 30_000;
/**
 * Connections one pool opens at most. It bounds the handshakes a burst costs: undici opens a new
 * connection when a request arrives just before a finished one hands its connection back. The
 * delivery code sends at most this many requests to one origin at once (tools/webhooks/deliver.ts
 * `originSlots`), so a request never waits inside the pool while its deadline runs.
 */
const MAX_CONNECTIONS_PER_POOL = 64;
// The default of WEBHOOK_CONNECTIONS_PER_ORIGIN (core/config.ts), which the delivery code passes in.

const systemResolve = (hostname: string): Promise<LookupAddress[]> => dnsLookup(hostname, { all: true });

export function createDeliveryDispatchers(options: DeliveryDispatcherOptions): DeliveryDispatchers {
  const maxPools = options.maxPools ?? MAX_POOLS;
  const resolveTtlMs = options.resolveTtlMs ?? RESOLVE_TTL_MS;
  const resolve = options.resolve ?? systemResolve;
  const classify = options.classify ?? classifyAddress;
  // One connector (and so one TLS session cache) and one TLS context for every pool. Handed `ca`,
  // tls.connect builds a new context for each connection, parsing the certificates again (about a
  // third of a connection's client-side CPU in bench:webhooks); a context given is reused as it is.
  const connector = buildConnector({
    ...(options.connectTimeoutMs === undefined ? {} : { timeout: options.connectTimeoutMs }),
    secureContext: createSecureContext(options.ca === undefined ? {} : { ca: options.ca }),
  });
  /** Map order is the LRU order: a used pool is moved to the end. */
  const pools = new Map<string, Pool>();
  const resolved = new Map<string, { addresses: LookupAddress[]; until: number }>();

  /** The target's addresses when known without a lookup: its IP literal, or a fresh resolution. */
  function knownAddresses(target: ValidTarget): LookupAddress[] | undefined {
    if (target.ipLiteral) return [{ address: target.ipLiteral, family: isIP(target.ipLiteral) }];
    const cached = resolved.get(target.hostname);
    return cached && cached.until > Date.now() ? cached.addresses : undefined;
  }

  async function lookUp(hostname: string): Promise<LookupAddress[]> {
    const addresses = await resolve(hostname);
    if (resolveTtlMs > 0) resolved.set(hostname, { addresses, until: Date.now() + resolveTtlMs });
    // The cache is bounded like the pools: names seen once are dropped first.
    if (resolved.size > maxPools) for (const name of resolved.keys()) if (resolved.delete(name)) break;
    return addresses;
  }

  /** The address to connect to: every address of the name checked, the first one pinned. */
  function checkedAddress(target: ValidTarget, addresses: LookupAddress[]): string {
    if (!options.allowPrivate)
      for (const entry of addresses) {
        const verdict = classify(entry.address);
        if (!verdict.allowed)
          throw new BlockedTargetError(target.hostname, `${entry.address} is ${verdict.reason}`);
      }
    const first = addresses[0];
    if (!first) throw Object.assign(new Error(`No address for ${target.hostname}`), { code: 'ENOTFOUND' });
    return first.address;
  }

  function poolFor(origin: string, address: string): Pool {
    const key = `${origin} ${address}`;
    const existing = pools.get(key);
    if (existing) {
      pools.delete(key);
      pools.set(key, existing);
      return existing;
    }
    const pool = new Pool(origin, {
      connections: options.connectionsPerPool ?? MAX_CONNECTIONS_PER_POOL,
      pipelining: 1,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MAX_MS,
      // The socket goes to the checked address whatever the URL's host says; undici derives SNI and
      // the certificate's expected name from `host` (the name), not from `hostname` (the address).
      connect: (connectOptions, callback) => connector({ ...connectOptions, hostname: address }, callback),
    });
    pools.set(key, pool);
    if (pools.size > maxPools) {
      const [oldestKey, oldest] = pools.entries().next().value ?? [];
      if (oldestKey !== undefined && oldest) {
        pools.delete(oldestKey);
        // close() lets requests already running on it finish.
        oldest.close().catch(() => undefined);
      }
    }
    return pool;
  }

  return {
    async dispatcherFor(target) {
      const addresses = knownAddresses(target) ?? (await lookUp(target.hostname));
      return poolFor(target.url.origin, checkedAddress(target, addresses));
    },
    knownDispatcherFor(target) {
      const addresses = knownAddresses(target);
      return addresses && poolFor(target.url.origin, checkedAddress(target, addresses));
    },
    get size() {
      return pools.size;
    },
    async close() {
      const open = [...pools.values()];
      pools.clear();
      resolved.clear();
      await Promise.all(open.map((pool) => pool.close().catch(() => undefined)));
    },
  };
}
