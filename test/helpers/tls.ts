import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

/**
 * Certificates made by the tests with the openssl command line: a CA, and leaves it signs for a server (names
 * 127.0.0.1 and localhost) or an agent (a client certificate). Keys are P-256, valid for two days.
 */

export interface CertFiles {
  cert: string;
  key: string;
  /** The certificate's serial number as X509Certificate reports it (upper-case hex). */
  serial: string;
}

const openssl = (args: string[]): void => {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
};

/** A self-signed CA named `name` in `dir` (`<name>.crt`, `<name>.key`). */
export function makeCa(dir: string, name: string): CertFiles {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return { cert, key, serial: serialOf(cert) };
}

/**
 * A leaf signed by `ca`: a server certificate for 127.0.0.1 and localhost, or (`client`) an agent's. The serial is
 * random, so two leaves of one name tell apart.
 */
export function makeLeaf(dir: string, ca: CertFiles, name: string, use: 'server' | 'client' = 'server'): CertFiles {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(
    ext,
    use === 'server'
      ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'
      : 'extendedKeyUsage=clientAuth\n',
  );
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    `/CN=${name}`,
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-set_serial',
    `0x${randomBytes(8).toString('hex').replace(/^0/, '1')}`,
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    cert,
  ]);
  return { cert, key, serial: serialOf(cert) };
}

export const serialOf = (certFile: string): string => new X509Certificate(readFileSync(certFile)).serialNumber;

/** Base64 SHA-256 of a certificate's public key: what Chromium's `--ignore-certificate-errors-spki-list` names. */
export function spkiHash(certFile: string): string {
  const spki = new X509Certificate(readFileSync(certFile)).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

export interface TlsAnswer {
  status: number;
  body: string;
  /** The serial of the certificate the server presented (upper-case hex). */
  serial: string;
}

/**
 * One HTTPS request on a new connection (so it sees the server's certificate of now), trusting `ca` only. Rejects
 * when the certificate is not trusted; the bound only catches a hang.
 */
export function httpsRequest(
  url: string,
  ca: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        ca: readFileSync(ca),
        agent: false,
        timeout: 60_000,
      },
      (res) => {
        const serial = (res.socket as TLSSocket).getPeerCertificate().serialNumber;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), serial }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 60 s`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
