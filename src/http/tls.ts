import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server as HttpsServer, ServerOptions as HttpsOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { TlsFiles } from '../config/tls.ts';

/**
 * HTTPS for every route of the port: both interfaces, the dashboard and the agents' upgrade
 * (docs/architecture.md §10). The files are read at the start and again on each reload (SIGHUP), so a renewed
 * certificate is taken without a restart; connections already open keep the context they were made with.
 */
export class ServerTls {
  readonly files: TlsFiles;
  /** The server's own certificate now: the local agent presents it as its client certificate. */
  private own: Buffer = Buffer.alloc(0);

  constructor(files: TlsFiles) {
    this.files = files;
  }

  /**
   * The options the HTTPS server is created with. With a client CA every connection is asked for a certificate
   * but none is refused in the handshake: browsers and interface clients hold none, and only the agents' endpoint
   * requires one (agentRefusal).
   */
  serverOptions(): HttpsOptions {
    const { options, own } = this.context();
    this.own = own;
    return { ...options, ...(this.files.clientCa ? { requestCert: true, rejectUnauthorized: false } : {}) };
  }

  /** Reads the files again for new connections. A file that cannot be read throws and leaves the current one. */
  reload(server: HttpsServer): void {
    const { options, own } = this.context();
    server.setSecureContext(options);
    this.own = own;
  }

  /**
   * Why an agent's connection is refused under mutual TLS, or undefined when it may go on: it presented a
   * certificate the client CA verifies, or the server's own certificate (the local agent, which holds its key).
   */
  agentRefusal(socket: Duplex): string | undefined {
    if (!this.files.clientCa) return undefined;
    const tls = socket as Partial<TLSSocket>;
    if (tls.authorized === true) return undefined;
    const peer = tls.getPeerCertificate?.();
    if (peer?.raw?.equals(this.own)) return undefined;
    return peer?.raw
      ? `the client certificate is not one of the agents' CA (${String(tls.authorizationError ?? 'not verified')})`
      : "a client certificate of the agents' CA is required (the agent's --tls-cert and --tls-key)";
  }

  private context(): { options: HttpsOptions; own: Buffer } {
    const cert = read(this.files.cert, 'TLS certificate (--tls-cert)');
    const key = read(this.files.key, 'TLS key (--tls-key)');
    const ca = this.files.clientCa ? read(this.files.clientCa, 'client CA (--tls-client-ca)') : undefined;
    return { options: { cert, key, ...(ca ? { ca } : {}) }, own: Buffer.from(new X509Certificate(cert).raw) };
  }
}

function read(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read the ${what} ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
