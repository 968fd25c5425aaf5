import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions as HttpsRequestOptions } from 'node:https';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { type Log, reason } from './log.ts';
import { corkForTick } from './tick-cork.ts';
import {
  AGENT_PATH,
  type AgentMessage,
  encode,
  HEADER_AGENT_INSTANCE,
  HEADER_PROCESS_SERVER,
  LineDecoder,
  UPGRADE_PROTOCOL,
} from './protocol.ts';
import { itemAt } from '../domain/item-at.ts';

export interface ConnectOptions {
  /** The server root with its context path, e.g. `http://127.0.0.1:7070/millrace`. */
  server: URL;
  processServer: string;
  secret: string;
  instance: string;
  /** Files for an `https://` server: read at each connection, so renewed ones are taken without a restart. */
  tls?: AgentTls;
}

/** The agent's TLS files (docs/architecture.md §10). */
export interface AgentTls {
  /** CA certificates the server's certificate is verified against (default: the system's). */
  caFile?: string;
  /** A client certificate and its key, for a server under mutual TLS. */
  certFile?: string;
  keyFile?: string;
  /**
   * The local agent's: trust exactly the first certificate of this file (the server's own), whatever names it
   * holds, since the agent reaches its server by a loopback address the certificate need not name.
   */
  serverCertificate?: string;
}

const readTlsFile = (file: string, what: string): Buffer => {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read ${what} ${file}: ${reason(err)}`);
  }
};

/** The TLS options of one connection, from the files as they are now. */
export function tlsOptions(tls: AgentTls | undefined): HttpsRequestOptions {
  if (!tls) return {};
  const out: HttpsRequestOptions = {};
  if (tls.caFile) out.ca = readTlsFile(tls.caFile, '--ca-file');
  if (tls.certFile) out.cert = readTlsFile(tls.certFile, '--tls-cert');
  if (tls.keyFile) out.key = readTlsFile(tls.keyFile, '--tls-key');
  if (tls.serverCertificate) {
    const pem = readTlsFile(tls.serverCertificate, "the server's certificate").toString('utf8');
    const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
    if (!first) throw new Error(`no certificate in ${tls.serverCertificate}`);
    // Only the leaf: an intermediate of the file trusted this way would vouch for every certificate it signed.
    Object.assign(out, { ca: first, allowPartialTrustChain: true, checkServerIdentity: () => undefined });
  }
  return out;
}

/** TLS verification errors: the server's certificate is not one this agent trusts. */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * A connection failure in words: an untrusted certificate says what to do about it (Node's own advice, the system's
 * CA store, does not help with a private CA). The agent and the CLI client say it alike.
 */
export function connectFailure(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNTRUSTED.has(code))
    return `the server's certificate is not trusted (${reason(err).replace(/; if the root CA .*$/, '')}): give the CA that signed it with --ca-file`;
  return reason(err);
}

/** The URL the agent upgrades: `<server>` + AGENT_PATH. */
export function agentUrl(server: URL): URL {
  const url = new URL(server.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${AGENT_PATH}`;
  url.search = '';
  url.hash = '';
  return url;
}

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens the HTTP/1.1 upgrade. Resolves with the socket (and bytes that came with the 101) or rejects with the
 * status and the first line of the body of any other answer.
 */
export function connect(options: ConnectOptions): Promise<{ socket: Socket; head: Buffer }> {
  const url = agentUrl(options.server);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      ...(url.protocol === 'https:' ? tlsOptions(options.tls) : {}),
      method: 'GET',
      agent: false,
      headers: {
        Connection: 'Upgrade',
        Upgrade: UPGRADE_PROTOCOL,
        [HEADER_PROCESS_SERVER]: options.processServer,
        Authorization: `Bearer ${options.secret}`,
        [HEADER_AGENT_INSTANCE]: options.instance,
      },
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)),
      CONNECT_TIMEOUT_MS,
    );
    req.once('upgrade', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      clearTimeout(timer);
      const protocol = String(res.headers.upgrade ?? '').toLowerCase();
      if (protocol !== UPGRADE_PROTOCOL) {
        socket.destroy();
        reject(new Error(`the server upgraded to "${protocol}" instead of ${UPGRADE_PROTOCOL}`));
        return;
      }
      resolve({ socket, head });
    });
    req.once('response', (res: IncomingMessage) => {
      clearTimeout(timer);
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 1024) body += chunk;
      });
      const done = () => {
        const line = body.split('\n', 1)[0]?.trim().slice(0, 300) ?? '';
        reject(new Error(`the server answered ${res.statusCode}${line ? `: ${line}` : ''}`));
      };
      res.once('end', done);
      res.once('error', done);
    });
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

/** One upgraded connection: NDJSON both ways, writes that wait when the socket is full. */
export class Session {
  closed = false;
  /** When the server's `welcome` arrived (0: not yet); from then on the agent reports. */
  welcomedAt = 0;
  lastReceived = Date.now();
  private drainWait: Promise<boolean> | null = null;
  private readonly socket: Socket;
  private readonly onClose: (reason: string) => void;

  constructor(socket: Socket, head: Buffer, onMessage: (message: unknown) => void, onClose: (reason: string) => void) {
    this.socket = socket;
    this.onClose = onClose;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    const decoder = new LineDecoder(
      (message) => {
        if (!this.closed) onMessage(message);
      },
      (reason) => this.close(`framing error: ${reason}`),
    );
    socket.on('data', (chunk: Buffer) => {
      this.lastReceived = Date.now();
      decoder.push(chunk);
    });
    socket.once('close', () => this.close('connection closed'));
    socket.on('error', (err) => this.close(err.message));
    if (head.length > 0) queueMicrotask(() => decoder.push(head));
  }

  /**
   * Writes one message. Resolves true once the socket can take more (at once, or after 'drain'), false when the
   * connection is gone (the message may not have arrived).
   */
  send(message: AgentMessage): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    corkForTick(this.socket);
    if (this.socket.write(encode(message))) return Promise.resolve(true);
    if (!this.drainWait) {
      this.drainWait = new Promise<boolean>((resolve) => {
        const finish = (ok: boolean) => {
          this.socket.off('drain', onDrain);
          this.socket.off('close', onGone);
          this.drainWait = null;
          resolve(ok);
        };
        const onDrain = () => finish(true);
        const onGone = () => finish(false);
        this.socket.on('drain', onDrain);
        this.socket.on('close', onGone);
      });
    }
    return this.drainWait;
  }

  /** Ends the connection; `graceful` lets what is already written go out first. */
  close(reason: string, graceful = false): void {
    if (this.closed) return;
    this.closed = true;
    if (graceful) {
      this.socket.end();
      this.socket.setTimeout(2000, () => this.socket.destroy());
    } else this.socket.destroy();
    this.onClose(reason);
  }
}

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5000;
/** A connection that stayed up this long after `welcome` counts as good: the next retry starts at the minimum. */
const GOOD_SESSION_MS = 5000;

export interface KeepConnected {
  stopped(): boolean;
  sleep(ms: number): Promise<void>;
  log: Log;
  /** Runs one upgraded connection; resolves once it is closed, with how long it was up after `welcome` (ms). */
  session(socket: Socket, head: Buffer): Promise<number>;
}

/**
 * Connects, runs the session, and connects again when it ends, until stopped. With several servers (the nodes of
 * one scheduler) a lost or refused connection moves on to the next at once; only when every one failed in turn is
 * there a wait: 100 ms, doubling up to 5 s. Any refusal (401, 404, 409 …) is retried too, since an operator may fix
 * it. The same failure is logged once a minute.
 */
export async function keepConnected(
  options: Omit<ConnectOptions, 'server'> & { servers: readonly URL[] },
  ctl: KeepConnected,
): Promise<void> {
  let delay = BACKOFF_MIN_MS;
  let lastError = '';
  let lastLogged = 0;
  let index = 0;
  let failedInTurn = 0;
  while (!ctl.stopped()) {
    const server = itemAt(options.servers, index % options.servers.length);
    let goodFor = 0;
    let connected = false;
    try {
      const { socket, head } = await connect({ ...options, server });
      if (ctl.stopped()) {
        socket.destroy();
        return;
      }
      lastError = '';
      connected = true;
      goodFor = await ctl.session(socket, head);
    } catch (err) {
      const text = `${agentUrl(server).href}: ${connectFailure(err)}`;
      if (text !== lastError || Date.now() - lastLogged > 60_000) {
        ctl.log(`cannot connect to ${text}; retrying`);
        lastError = text;
        lastLogged = Date.now();
      }
    }
    if (ctl.stopped()) return;
    if (goodFor >= GOOD_SESSION_MS) delay = BACKOFF_MIN_MS;
    // A session that ended or a refusal: the next node is tried; a whole round without a good session waits.
    failedInTurn = connected && goodFor >= GOOD_SESSION_MS ? 1 : failedInTurn + 1;
    index += 1;
    if (options.servers.length > 1 && failedInTurn < options.servers.length) continue;
    failedInTurn = 0;
    await ctl.sleep(delay);
    delay = Math.min(delay * 2, BACKOFF_MAX_MS);
  }
}
