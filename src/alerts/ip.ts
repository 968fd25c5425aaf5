import { isIP } from 'node:net';

/** An IP address as a number, so that ranges of both families are compared the same way. */
export interface Ip {
  family: 4 | 6;
  value: bigint;
}

export interface IpRange {
  family: 4 | 6;
  base: bigint;
  bits: number;
}

const width = (family: 4 | 6): bigint => (family === 4 ? 32n : 128n);

function v4Value(text: string): bigint {
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** Expands `::` and a dotted IPv4 tail (`::ffff:1.2.3.4`, as getaddrinfo may print it). */
function v6Value(text: string): bigint {
  let s = text;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s)?.[1];
  if (dotted) {
    const v4 = v4Value(dotted);
    s = `${s.slice(0, -dotted.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return all.reduce((acc, g) => (acc << 16n) | BigInt(`0x${g}`), 0n);
}

/** A literal IPv4 or IPv6 address (a zone id such as `%eth0` is ignored), or undefined. */
export function parseIp(text: string): Ip | undefined {
  const bare = text.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return { family: 4, value: v4Value(bare) };
  if (family === 6) return { family: 6, value: v6Value(bare) };
  return undefined;
}

/** `10.0.0.0/8`, `::1/128`, or a single address (a range of one). */
export function parseRange(text: string): IpRange | undefined {
  const [addr = '', bitsText, extra] = text.split('/');
  const ip = parseIp(addr);
  if (!ip || extra !== undefined) return undefined;
  const max = Number(width(ip.family));
  const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : Number.NaN;
  if (!(bits >= 0 && bits <= max)) return undefined;
  return { family: ip.family, base: ip.value, bits };
}

export function inRange(ip: Ip, range: IpRange): boolean {
  if (ip.family !== range.family) return false;
  const shift = width(ip.family) - BigInt(range.bits);
  return ip.value >> shift === range.base >> shift;
}

/** A range written in this file: a wrong one is a bug, thrown when the module loads. */
function builtinRange(text: string): IpRange {
  const range = parseRange(text);
  if (!range) throw new Error(`not an address range: ${text}`);
  return range;
}

const MAPPED = builtinRange('::ffff:0:0/96');

/** `::ffff:a.b.c.d` reaches the IPv4 host a.b.c.d: it is judged (and allow-listed) as that address. */
export function unmap(ip: Ip): Ip {
  return inRange(ip, MAPPED) ? { family: 4, value: ip.value & 0xffffffffn } : ip;
}

export type AddressKind =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unspecified'
  | 'carrier-grade NAT'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

const table = (rows: Array<[string, AddressKind]>): Array<[IpRange, AddressKind]> =>
  rows.map(([r, kind]) => [builtinRange(r), kind]);

// First match wins: the broadcast address lies inside 240/4.
const V4 = table([
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'reserved'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
]);

const V6 = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'],
  ['fc00::/7', 'private'],
  ['fec0::/10', 'private'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
  ['2001:db8::/32', 'reserved'],
  // IETF protocol assignments: Teredo tunnels (which hide an IPv4 peer), ORCHID, benchmarking.
  ['2001::/23', 'reserved'],
]);

const GLOBAL_UNICAST = builtinRange('2000::/3');
// Translation prefixes that carry an IPv4 address: the IPv4 address is what is reached.
const NAT64 = builtinRange('64:ff9b::/96');
const SIX_TO_FOUR = builtinRange('2002::/16');

/** Why a connection to this address may reach something internal, or undefined for a public unicast address. */
export function classifyIp(address: Ip): AddressKind | undefined {
  const ip = unmap(address);
  if (ip.family === 4) return V4.find(([r]) => inRange(ip, r))?.[1];
  if (inRange(ip, NAT64)) return classifyIp({ family: 4, value: ip.value & 0xffffffffn });
  if (inRange(ip, SIX_TO_FOUR)) return classifyIp({ family: 4, value: (ip.value >> 80n) & 0xffffffffn });
  const kind = V6.find(([r]) => inRange(ip, r))?.[1];
  if (kind) return kind;
  return inRange(ip, GLOBAL_UNICAST) ? undefined : 'reserved';
}
