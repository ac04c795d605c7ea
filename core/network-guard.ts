// Which network addresses a tenant may point the server at. Customer input names hosts the server
// then connects to (webhook targets, a connected account's SMTP server); those must not reach
// loopback, private, link-local or other non-public addresses of the server's own network (SSRF).
// The classifier is shared by the webhook dispatcher (tools/webhooks/ssrf.ts) and the SMTP account client
// (providers/smtp-account.ts); `resolvePublicAddress` resolves a name once and hands back the
// checked address to connect to, so a second lookup cannot answer differently (DNS rebinding).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

interface V4Range {
  base: number;
  bits: number;
  reason: string;
}

function v4(text: string): number {
  const parts = text.split('.').map(Number);
  return (((parts[0] ?? 0) << 24) | ((parts[1] ?? 0) << 16) | ((parts[2] ?? 0) << 8) | (parts[3] ?? 0)) >>> 0;
}

const V4_BLOCKED: V4Range[] = [
  { base: v4('0.0.0.0'), bits: 8, reason: 'unspecified ("this network", 0.0.0.0/8)' },
  { base: v4('10.0.0.0'), bits: 8, reason: 'private (10.0.0.0/8)' },
  { base: v4('100.64.0.0'), bits: 10, reason: 'carrier-grade NAT (100.64.0.0/10)' },
  { base: v4('127.0.0.0'), bits: 8, reason: 'loopback (127.0.0.0/8)' },
  { base: v4('169.254.0.0'), bits: 16, reason: 'link-local (169.254.0.0/16)' },
  { base: v4('172.16.0.0'), bits: 12, reason: 'private (172.16.0.0/12)' },
  { base: v4('192.0.0.0'), bits: 24, reason: 'IETF protocol assignments (192.0.0.0/24)' },
  { base: v4('192.0.2.0'), bits: 24, reason: 'documentation (192.0.2.0/24)' },
  { base: v4('192.88.99.0'), bits: 24, reason: '6to4 relay anycast (192.88.99.0/24)' },
  { base: v4('192.168.0.0'), bits: 16, reason: 'private (192.168.0.0/16)' },
  { base: v4('198.18.0.0'), bits: 15, reason: 'benchmarking (198.18.0.0/15)' },
  { base: v4('198.51.100.0'), bits: 24, reason: 'documentation (198.51.100.0/24)' },
  { base: v4('203.0.113.0'), bits: 24, reason: 'documentation (203.0.113.0/24)' },
  { base: v4('224.0.0.0'), bits: 4, reason: 'multicast (224.0.0.0/4)' },
  { base: v4('255.255.255.255'), bits: 32, reason: 'broadcast (255.255.255.255)' },
  { base: v4('240.0.0.0'), bits: 4, reason: 'reserved (240.0.0.0/4)' },
];

function classifyV4(value: number): AddressVerdict {
  for (const range of V4_BLOCKED) {
    const mask = range.bits === 0 ? 0 : (0xffffffff << (32 - range.bits)) >>> 0;
    if ((value & mask) >>> 0 === range.base) return { allowed: false, reason: range.reason };
  }
  return { allowed: true };
}

/** Eight 16-bit groups of an IPv6 address (embedded dotted IPv4 and zone ids accepted), or null. */
function parseV6(text: string): number[] | null {
  let s = text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  const dotted = s.slice(lastColon + 1);
  if (dotted.includes('.')) {
    // A trailing dotted IPv4 (::ffff:127.0.0.1) is the last two groups written differently.
    if (isIP(dotted) !== 4) return null;
    const n = v4(dotted);
    s = `${s.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0] ?? '');
  const rest = halves.length === 2 ? groups(halves[1] ?? '') : [];
  const parsed: number[] = [];
  for (const g of [...head, ...rest]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    parsed.push(Number.parseInt(g, 16));
  }
  if (halves.length === 1) return parsed.length === 8 ? parsed : null;
  const fill = 8 - parsed.length;
  if (fill < 1) return null;
  return [...parsed.slice(0, head.length), ...new Array<number>(fill).fill(0), ...parsed.slice(head.length)];
}

function embeddedV4(hi: number, lo: number): number {
  return ((hi << 16) | lo) >>> 0;
}

function classifyV6(g: number[]): AddressVerdict {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(8)) return { allowed: false, reason: 'unspecified (::)' };
  if (zeroTo(7) && g7 === 1) return { allowed: false, reason: 'loopback (::1)' };
  // Forms that carry an IPv4 address are judged by that address (::ffff:127.0.0.1 is loopback).
  if (zeroTo(5) && g5 === 0xffff) return classifyEmbedded('IPv4-mapped', embeddedV4(g6, g7));
  if (zeroTo(6)) return classifyEmbedded('IPv4-compatible', embeddedV4(g6, g7));
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return classifyEmbedded('IPv4-translated', embeddedV4(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return classifyEmbedded('NAT64', embeddedV4(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1)
    return { allowed: false, reason: 'local-use NAT64 (64:ff9b:1::/48)' };
  if (g0 === 0x2002) return classifyEmbedded('6to4', embeddedV4(g1, g2));
  if ((g0 & 0xfe00) === 0xfc00) return { allowed: false, reason: 'unique-local (fc00::/7)' };
  if ((g0 & 0xffc0) === 0xfe80) return { allowed: false, reason: 'link-local (fe80::/10)' };
  if ((g0 & 0xffc0) === 0xfec0) return { allowed: false, reason: 'site-local (fec0::/10)' };
  if ((g0 & 0xff00) === 0xff00) return { allowed: false, reason: 'multicast (ff00::/8)' };
  if (g0 === 0x2001 && g1 === 0x0db8) return { allowed: false, reason: 'documentation (2001:db8::/32)' };
  if (g0 === 0x2001 && g1 === 0) return { allowed: false, reason: 'Teredo (2001::/32)' };
  if (g0 === 0x2001 && (g1 & 0xfff0) === 0x0010) return { allowed: false, reason: 'ORCHID (2001:10::/28)' };
  if (g0 === 0x2001 && g1 === 2 && g2 === 0) return { allowed: false, reason: 'benchmarking (2001:2::/48)' };
  if (g0 === 0x3fff && (g1 & 0xf000) === 0) return { allowed: false, reason: 'documentation (3fff::/20)' };
  // Everything outside global unicast (2000::/3) is reserved or special-purpose: 100::/64 discard, ...
  if ((g0 & 0xe000) !== 0x2000) return { allowed: false, reason: 'not global unicast (outside 2000::/3)' };
  return { allowed: true };
}

function classifyEmbedded(form: string, value: number): AddressVerdict {
  const verdict = classifyV4(value);
  if (verdict.allowed) return verdict;
  return { allowed: false, reason: `${form} ${verdict.reason}` };
}

/** Whether a delivery may connect to this IP address (v4 or v6, brackets allowed); the reason is for logs. */
export function classifyAddress(ip: string): AddressVerdict {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const family = isIP(bare.split('%')[0] ?? '');
  if (family === 4) return classifyV4(v4(bare));
  if (family === 6) {
    const groups = parseV6(bare);
    if (groups) return classifyV6(groups);
  }
  return { allowed: false, reason: `not an IP address: ${ip}` };
}

/** A host refused by the guard; `reason` is for logs (it names the address), never for the API. */
export class PrivateHostError extends Error {
  readonly code = 'ERR_PRIVATE_HOST';
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`Host ${host} is not allowed: ${reason}`);
    this.name = 'PrivateHostError';
  }
}

/**
 * The address to connect to for `host` (a name or an IP literal): every address DNS returns must be
 * public, else PrivateHostError (a name mixing public and private records is refused). The caller
 * connects to the returned address itself (with the name kept for TLS), never resolving again.
 * DNS failures reject with the resolver's error (code ENOTFOUND, EAI_AGAIN, ...).
 */
export async function resolvePublicAddress(host: string): Promise<{ address: string; family: number }> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const literal = isIP(bare);
  const addresses = literal ? [{ address: bare, family: literal }] : await lookup(bare, { all: true });
  for (const entry of addresses) {
    const verdict = classifyAddress(entry.address);
    if (!verdict.allowed) throw new PrivateHostError(host, `${entry.address} is ${verdict.reason}`);
  }
  const first = addresses[0];
  if (!first) throw Object.assign(new Error(`No address for ${host}`), { code: 'ENOTFOUND' });
  return first;
}
