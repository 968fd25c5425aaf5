import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpLimits } from '../config/config.ts';
import { MillraceError } from '../errors.ts';
import { loopDelayMonitor } from '../loop-delay.ts';
import { errorShape, rawErrorResponse, targetOf } from './error-shape.ts';
import { clientAddress } from './client-address.ts';
import { SlowBodies } from './slow-bodies.ts';

/**
 * What keeps slow, numerous or overwhelming clients from taking the server down, below the routes:
 * - Node's own deadlines for headers and for the whole request (408), checked every second;
 * - a minimum body rate after a grace period (408), so a body cannot trickle in until the deadline on every
 *   connection a client opens;
 * - a cap on connections per client address (503, then closed); behind a trusted proxy, whose connections carry many
 *   clients, on the requests in flight per forwarded client address instead (503);
 * - shedding: beyond a number of requests in flight, or while the event loop lags, new requests get 503 with
 *   Retry-After at once rather than a timeout later; health and metrics paths are exempt so probes keep answering;
 * - a request whose body was not read (an early 401, 403, 413 or 408) closes its connection after the answer, so
 *   the rest of the body is never read, and resets it only once the client had time to read the answer;
 * - every error Node or the router produces itself answers in the interface's own error shape.
 */

/** Paths (after the context path) that shedding never refuses: probes must tell "busy" from "dead". */
export const EXEMPT_PREFIXES = ['/health', '/metrics'];

/** How often lag and body rates are looked at. */
const TICK_MS = 500;

const overCap = new WeakSet<Socket>();

export interface GuardOptions {
  limits: HttpLimits;
  /** Context path (`/millrace`), to which EXEMPT_PREFIXES are relative. */
  root: string;
  xmlBase: string;
  /** Whether a peer is a trusted proxy (client-address.ts); none when absent. */
  trusts?: ((address: string) => boolean) | undefined;
}

/** Options for Fastify's constructor: Node's deadlines and the shapes of errors no route sees. */
export function serverOptions(o: GuardOptions) {
  return {
    http: {
      headersTimeout: o.limits.headersTimeoutMs,
      requestTimeout: o.limits.requestTimeoutMs,
      connectionsCheckingInterval: 1000,
    },
    requestTimeout: o.limits.requestTimeoutMs,
    clientErrorHandler(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket) {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const withMessage: Socket & { _httpMessage?: ServerResponse } = socket;
      const res = withMessage._httpMessage;
      if (res?.headersSent) {
        socket.destroy();
        return;
      }
      const [status, message] =
        err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, `The request did not arrive within ${o.limits.requestTimeoutMs / 1000} s`]
          : err.code === 'HPE_HEADER_OVERFLOW'
            ? [431, 'The request line and headers are too large']
            : [400, 'Malformed HTTP request'];
      if (socket.writable)
        socket.write(rawErrorResponse(res?.req?.url ?? targetOf(err.rawPacket), o.xmlBase, status, message));
      socket.destroy();
    },
    frameworkErrors(err: Error & { code?: string }, req: FastifyRequest, reply: FastifyReply) {
      const [status, message] =
        err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? [414, 'A path segment is too long (at most 400 characters)']
          : err.code === 'FST_ERR_BAD_URL'
            ? [400, 'The URL is not valid (bad percent-encoding)']
            : [400, 'Bad request'];
      const { type, body } = errorShape(req.url, o.xmlBase, status, message);
      return reply.code(status).type(type).header('Cache-Control', 'no-store').send(body);
    },
  };
}

/**
 * Counts each address's open connections and marks a connection over the cap (answered in the interface's shape if a
 * request comes at once, closed soon after in any case). A trusted proxy's connections are not counted: its clients
 * are, per request (`countProxied`).
 */
function capConnectionsPerAddress(server: Server, o: GuardOptions): void {
  const perAddress = new Map<string, number>();
  // Over HTTPS the sockets requests arrive on are the TLS ones, counted once their handshake is done.
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    if (o.trusts?.(address)) return;
    const n = (perAddress.get(address) ?? 0) + 1;
    perAddress.set(address, n);
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    if (n > o.limits.maxConnectionsPerAddress) {
      // Answered (in the interface's shape) if a request comes at once; closed in any case soon after.
      overCap.add(socket);
      setTimeout(() => socket.destroy(), 2000).unref();
    }
  });
}

/** Installs the guards on an app (before its routes are registered). Returns a stop function for its timers. */
export function installGuards(app: FastifyInstance, o: GuardOptions): () => void {
  capConnectionsPerAddress(app.server, o);

  const lag = loopDelayMonitor();
  // Overloaded means lagging in consecutive windows: one long synchronous task (a migration, a big parse) lags one
  // window and is no reason to refuse anyone.
  let laggingWindows = 0;
  const bodies = new SlowBodies(o.limits.minBodyBytesPerSecond);
  const lagTimer = setInterval(() => {
    laggingWindows = lag.maxMs() > o.limits.maxEventLoopDelayMs ? laggingWindows + 1 : 0;
    lag.reset();
    bodies.sweep(Date.now());
  }, TICK_MS);
  lagTimer.unref();

  // /health and /metrics are served at the root of the port (src/http/ops-routes.ts); also under the context path.
  const exempt = [...EXEMPT_PREFIXES, ...EXEMPT_PREFIXES.map((p) => `${o.root}${p}`)];
  const exemptStarts = exempt.flatMap((p) => [`${p}/`, `${p}?`]);
  const isExempt = (url: string) => exempt.includes(url) || exemptStarts.some((p) => url.startsWith(p));
  let inFlight = 0;
  const proxied = new Map<string, number>();

  // The hooks take Fastify's callback form: they never wait, and an async hook costs every request a promise and a
  // turn of the microtask queue.
  app.addHook('onRequest', (req, reply, done) => {
    if (overCap.has(req.raw.socket)) {
      reply.header('Connection', 'close');
      done(
        new MillraceError(503, 'TOO_MANY_CONNECTIONS', 'Too many connections from your address; try again later', {
          'Retry-After': '5',
        }),
      );
      return;
    }
    if (o.trusts?.(req.raw.socket.remoteAddress ?? '') && !countProxied(req, reply)) {
      done(
        new MillraceError(503, 'TOO_MANY_CONNECTIONS', 'Too many requests at once from your address; try again later', {
          'Retry-After': '5',
        }),
      );
      return;
    }
    if (!isExempt(req.url) && (inFlight >= o.limits.maxInFlight || laggingWindows >= 2)) {
      done(new MillraceError(503, 'OVERLOADED', 'The server is overloaded; try again shortly', { 'Retry-After': '1' }));
      return;
    }
    // A live feed (`…/stream`) stays open for as long as its client listens: it is not work in flight.
    if (!req.url.split('?')[0]?.endsWith('/stream')) {
      inFlight += 1;
      reply.raw.once('close', () => {
        inFlight -= 1;
      });
    }
    done();
  });

  /** Counts a forwarded request of its client while it is open; false (not counted) past the cap. */
  function countProxied(req: FastifyRequest, reply: FastifyReply): boolean {
    const client = clientAddress(req);
    const n = (proxied.get(client) ?? 0) + 1;
    if (n > o.limits.maxConnectionsPerAddress) return false;
    proxied.set(client, n);
    reply.raw.once('close', () => {
      const left = (proxied.get(client) ?? 1) - 1;
      if (left <= 0) proxied.delete(client);
      else proxied.set(client, left);
    });
    return true;
  }

  app.addHook('preParsing', (req, reply, payload, done) => {
    if (!hasBody(req.raw)) {
      done(null, payload);
      return;
    }
    // Once answered (also without reading the body: 415, 401…) the rate no longer matters.
    reply.raw.once('close', bodies.watch(req.raw));
    done(null, payload);
  });

  // An answer given before the body was read (401, 403, 413, 408…) ends the connection: reading the rest of a
  // body nobody wants is what a hostile client counts on.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (!req.raw.complete && hasBody(req.raw)) {
      reply.header('Connection', 'close');
      closeUnread(req.raw);
    }
    done(null, payload);
  });

  return () => {
    clearInterval(lagTimer);
    lag.stop();
  };
}

/**
 * How long a connection whose body was not read stays open after its answer (not reading), before it is closed.
 * Node would close it as soon as the answer is written; with unread bytes in the socket that close is a TCP reset,
 * which can reach a client still sending before it has read the answer: it sees EPIPE or "connection reset", never
 * the 413 or 403. Half-closing first (the answer, then FIN) and resetting only later lets it read the answer; not
 * reading meanwhile keeps what the server takes in to the body limit and the socket buffers.
 */
export const UNREAD_LINGER_MS = 2000;

/** Replaces Node's close after the answer (`destroySoon`) on this socket by a half-close that reads no further. */
function closeUnread(req: IncomingMessage): void {
  const socket = req.socket;
  // inject() (tests) has no real socket
  if (typeof socket.destroySoon !== 'function') return;
  const close = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    // The body arrived in the end (while the answer was written): nothing is left unread.
    if (req.complete) {
      close();
      return;
    }
    // Node's server resumes a socket to discard an unread body (IncomingMessage._dump): it stays paused.
    const stop = () => socket.pause();
    stop();
    socket.on('resume', stop);
    socket.end();
    const timer = setTimeout(() => socket.destroy(), UNREAD_LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}

const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
