import { lookup as dnsLookup } from 'node:dns/promises';
import { classifyIp, type Ip, type IpRange, inRange, parseIp, parseRange, unmap } from './ip.ts';
import { itemAt } from '../domain/item-at.ts';
import { errorCode } from '../errors.ts';

/**
 * Webhook targets (OWASP API7, SSRF): a webhook may only reach public http(s) servers, unless the operator lists
 * the host, address or range in MILLRACE_WEBHOOK_ALLOW. Checked when an escalation is defined and again at each
 * send, because a host name may resolve elsewhere by then.
 */

/** Same shape as `dns.promises.lookup(host, { all: true })`, so tests can inject their own answers. */
export type LookupAll = (
  hostname: string,
  options: { all: true },
) => Promise<ReadonlyArray<{ address: string; family: number }>>;

export interface WebhookTarget {
  address: string;
  family: 4 | 6;
}

/** getaddrinfo cannot be cancelled; a definition request should not hang on a slow resolver. */
const DNS_TIMEOUT_MS = 5000;

const ALLOW_SETTING = 'MILLRACE_WEBHOOK_ALLOW';

const defaultLookup: LookupAll = (hostname, options) => dnsLookup(hostname, options);

interface AllowList {
  hosts: Set<string>;
  ranges: IpRange[];
}

/** `example.com.` and `Example.COM` name the same host; IPv6 literals lose their brackets. */
const normalHost = (host: string): string =>
  host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');

/** An allow-list entry as WHATWG URL would write it in a host, so `2130706433` or an IDN compare equal. */
function allowEntry(entry: string): IpRange | string | undefined {
  const text = entry.trim();
  const range = parseRange(text);
  if (range) return range;
  if (text.includes('/') || !/^[\p{L}\p{N}._-]+$/u.test(text)) return undefined;
  let host: string;
  try {
    host = normalHost(new URL(`http://${text}/`).hostname);
  } catch {
    return undefined;
  }
  return parseRange(host) ?? host;
}

/** Why an allow-list entry is not a host name, an IP address or a CIDR range; undefined when it is fine. */
export function allowEntryProblem(entry: string): string | undefined {
  return allowEntry(entry) === undefined
    ? `"${entry}" is not a host name, an IP address or a CIDR range (such as 10.0.0.0/8)`
    : undefined;
}

function compile(allow: readonly string[]): AllowList {
  const list: AllowList = { hosts: new Set(), ranges: [] };
  for (const entry of allow) {
    const e = allowEntry(entry);
    if (typeof e === 'string') list.hosts.add(e);
    else if (e) list.ranges.push(e);
  }
  return list;
}

const ipAllowed = (list: AllowList, ip: Ip): boolean => {
  const plain = unmap(ip);
  return list.ranges.some((r) => inRange(ip, r) || inRange(plain, r));
};

/** The URL as messages show it: no user info, query or fragment, which may hold secrets. */
const shown = (u: URL): string => `${u.origin}${u.pathname}`;

function addressProblem(u: URL, list: AllowList, text: string, how: string): string | undefined {
  const ip = parseIp(text);
  if (!ip) return `Webhook address ${shown(u)} ${how} ${text}, which is not an IP address`;
  const kind = classifyIp(ip);
  if (kind === undefined || ipAllowed(list, ip)) return undefined;
  const article = /^[aeiou]/.test(kind) ? 'an' : 'a';
  return `Webhook address ${shown(u)} ${how} ${article} ${kind} address (${text.replace(/%.*$/, '')}); add it to ${ALLOW_SETTING} to permit it`;
}

function parse(url: string): URL | string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'Webhook address is not a valid URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `Webhook address uses the ${u.protocol} scheme; only http and https are allowed`;
  if (u.username !== '' || u.password !== '')
    return `Webhook address ${shown(u)} must not hold a user name or password`;
  if (u.hostname === '') return 'Webhook address has no host';
  return u;
}

/**
 * What can be said without DNS: the scheme, user info, and an IP literal in any form WHATWG URL accepts (it
 * rewrites `0x7f.1`, `2130706433` and `0177.0.0.1` to 127.0.0.1). Undefined when nothing is wrong so far.
 */
export function webhookUrlProblem(url: string, allow: readonly string[]): string | undefined {
  const u = parse(url);
  if (typeof u === 'string') return u;
  const host = normalHost(u.hostname);
  return parseIp(host) ? addressProblem(u, compile(allow), host, 'points to') : undefined;
}

async function resolveAll(host: string, lookup: LookupAll): Promise<ReadonlyArray<{ address: string }> | string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), DNS_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([lookup(host, { all: true }), timeout]);
    if (typeof found === 'string' || found.length > 0) return found;
    return 'no addresses';
  } catch (e) {
    return String(errorCode(e) ?? 'lookup failed');
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves the URL's host and refuses it when any of its addresses is internal (an attacker controlling DNS can
 * mix a public and a private answer). An allow-listed host name skips the address checks. Returns the address to
 * connect to: the caller must connect to exactly that one, not resolve again.
 */
export async function resolveWebhookTarget(
  url: string,
  allow: readonly string[],
  lookup: LookupAll = defaultLookup,
): Promise<WebhookTarget | { problem: string; unresolved?: true }> {
  const problem = webhookUrlProblem(url, allow);
  if (problem) return { problem };
  const u = new URL(url);
  const host = normalHost(u.hostname);
  const literal = parseIp(host);
  if (literal) return { address: host, family: literal.family };
  const list = compile(allow);
  const found = await resolveAll(host, lookup);
  if (typeof found === 'string')
    return {
      problem: `Webhook address ${shown(u)}: the host name ${host} could not be resolved (${found})`,
      unresolved: true,
    };
  if (!list.hosts.has(host))
    for (const { address } of found) {
      const p = addressProblem(u, list, address, 'resolves to');
      if (p) return { problem: p };
    }
  const first = itemAt(found, 0);
  const ip = parseIp(first.address);
  if (!ip) return { problem: `Webhook address ${shown(u)} resolves to ${first.address}, which is not an IP address` };
  return { address: first.address, family: ip.family };
}
