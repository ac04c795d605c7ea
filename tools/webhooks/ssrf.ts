// The SSRF guard for webhook targets. A subscription URL is customer input, so deliveries must not
// reach loopback, private, link-local or other non-public addresses of the server's network. The
// check runs when the socket connects (on the addresses DNS actually returned for this connection),
// so a name that resolves to a public address at subscription time and to 127.0.0.1 later (DNS
// rebinding) is still refused. WEBHOOK_ALLOW_PRIVATE_TARGETS=true turns the guard off (local
// development and tests).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { classifyAddress } from '../../core/network-guard.ts';

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

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for net/tls.connect that resolves the name and refuses the connection when ANY
 * resolved address is refused, so a name mixing public and private records cannot slip through.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback: LookupCallback) => {
  dnsLookup(hostname, { family: options.family ?? 0, hints: options.hints, all: true }, (err, addresses) => {
    if (err) {
      callback(err, []);
      return;
    }
    for (const entry of addresses) {
      const verdict = classifyAddress(entry.address);
      if (!verdict.allowed) {
        callback(new BlockedTargetError(hostname, `${entry.address} is ${verdict.reason}`), []);
        return;
      }
    }
    const first = addresses[0];
    if (!first) {
      callback(Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      return;
    }
    if (options.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  });
};

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
}

/**
 * The undici dispatcher deliveries go through: IP-literal hosts are checked before connecting and
 * names through {@link guardedLookup}, both when the socket is opened. One connection per request
 * (no pooling across deliveries), so every request is checked against fresh DNS.
 */
const KEEP_ALIVE_MS = 4_000;

export function createDeliveryDispatcher(options: DeliveryDispatcherOptions): Agent {
  const connector = buildConnector({
    ...(options.connectTimeoutMs === undefined ? {} : { timeout: options.connectTimeoutMs }),
    ...(options.ca === undefined ? {} : { ca: options.ca }),
    ...(options.allowPrivate ? {} : { lookup: guardedLookup }),
  });
  return new Agent({
    // Keep-alive saves a TLS handshake per delivery. A connection's address was checked when it was
    // made, and idle connections close within seconds, so DNS changes are checked again soon.
    pipelining: 1,
    keepAliveTimeout: KEEP_ALIVE_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MS,
    connect: (connectOptions, callback) => {
      if (!options.allowPrivate && isIP(connectOptions.hostname)) {
        const verdict = classifyAddress(connectOptions.hostname);
        if (!verdict.allowed) {
          callback(new BlockedTargetError(connectOptions.hostname, verdict.reason), null);
          return;
        }
      }
      connector(connectOptions, callback);
    },
  });
}
