import { resolve } from 'node:path';
import { parseRange } from '../alerts/ip.ts';
import type { Resolved } from './options.ts';

/** The files of `serve --tls-cert/--tls-key/--tls-client-ca` (docs/architecture.md §10), absolute. */
export interface TlsFiles {
  cert: string;
  key: string;
  /** Agents must present a client certificate of this CA. */
  clientCa?: string;
}

/**
 * The TLS files and the trusted proxies of `serve`, from its resolved options. A certificate needs its key (and the
 * key its certificate), and a client CA needs both: each alone would be a start that silently serves plain HTTP.
 */
export function transportOptions(get: (key: string) => Resolved | undefined): {
  tls?: TlsFiles;
  trustProxy: string[];
} {
  const cert = get('tls-cert');
  const key = get('tls-key');
  const clientCa = get('tls-client-ca');
  const given = (r: Resolved | undefined): r is Resolved => r !== undefined && r.text !== '';
  if (given(cert) !== given(key))
    throw new Error(`${given(cert) ? cert?.source : key?.source} is given alone: --tls-cert and --tls-key go together`);
  if (given(clientCa) && !given(cert))
    throw new Error(`${clientCa.source} needs --tls-cert and --tls-key: client certificates are asked over HTTPS`);
  return {
    ...(given(cert) && given(key)
      ? {
          tls: {
            cert: resolve(cert.text),
            key: resolve(key.text),
            ...(given(clientCa) ? { clientCa: resolve(clientCa.text) } : {}),
          },
        }
      : {}),
    trustProxy: proxyList(get('trust-proxy')),
  };
}

/** `--trust-proxy 10.0.0.5,192.168.0.0/24,::1`: addresses and CIDR ranges, each checked. */
function proxyList(r: Resolved | undefined): string[] {
  if (!r) return [];
  const entries = r.text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const e of entries)
    if (!parseRange(e))
      throw new Error(
        `invalid ${r.source}: "${e.slice(0, 100)}" is not an IP address or a CIDR range such as 10.0.0.0/8`,
      );
  return entries;
}
