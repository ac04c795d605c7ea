// Which address a request comes from. By default the socket's peer: X-Forwarded-For is trivially
// forged, so it is believed only for the number of proxy hops the operator says it runs (TRUST_PROXY).

/** Strips the IPv4-mapped IPv6 prefix so one client is one key whichever stack accepted it. */
export function normalizeIp(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address.toLowerCase();
}

/**
 * With `trustedHops` proxies in front, each appends the address it received from, so the client
 * is the entry `trustedHops` places from the right end of the list formed by X-Forwarded-For plus
 * the socket address. Entries further left were written by the client and are not believed.
 */
export function clientIp(
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trustedHops: number,
): string {
  const socket = socketAddress ? normalizeIp(socketAddress) : 'unknown';
  if (trustedHops === 0 || !forwardedFor) return socket;
  const chain = [
    ...forwardedFor
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    socket,
  ];
  const index = Math.max(0, chain.length - 1 - trustedHops);
  return normalizeIp(chain[index] ?? socket);
}
