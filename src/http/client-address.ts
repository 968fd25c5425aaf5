import { BlockList, isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

/**
 * Which peers are trusted proxies (`--trust-proxy`, docs/architecture.md §10), as the predicate Fastify's
 * `trustProxy` takes; undefined when none is. The entries were checked when the configuration was read.
 */
export function proxyTrust(entries: readonly string[]): ((address: string) => boolean) | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return (address) => {
    // A server listening on `::` sees IPv4 peers as `::ffff:a.b.c.d`; ranges are written as plain IPv4.
    const bare = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
    const family = isIP(bare);
    return family !== 0 && list.check(bare, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * The client's address of a request: the one place it is read, for the sign-in limiter, the audit trail, the access
 * log and the per-address caps. Fastify derives it with the predicate above: the peer's address, or, when the peer
 * is a trusted proxy, the rightmost address of `X-Forwarded-For` that is not one (the proxies append, so what a
 * client wrote itself lies further left and is never believed); from any other peer the header is ignored.
 */
export const clientAddress = (req: FastifyRequest): string => req.ip;
