import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import {
  AGENT_PATH,
  type AgentMessage,
  encode,
  HEADER_AGENT_INSTANCE,
  HEADER_PROCESS_SERVER,
  LineDecoder,
  type ServerMessage,
  UPGRADE_PROTOCOL,
  type WelcomeMessage,
} from '../agent/protocol.ts';
import { corkForTick } from '../agent/tick-cork.ts';
import { Inflow } from './agent-inflow.ts';
import { isPlainObject } from '../domain/json.ts';

/**
 * The server's end of the agent protocol: accepts the agents' upgrade requests, keeps one session per process
 * server (of the one agent instance serving it), frames messages, and hands each session's messages to the engine one at a time, in order.
 */

export interface HubHandlers {
  /**
   * The `welcome` for an accepted agent, or the HTTP status and reason to refuse it with. `instance` is the agent
   * process (X-Millrace-Agent-Instance): one instance serves a process server at a time (docs/architecture.md §16).
   */
  authenticate(
    processServer: string,
    secret: string,
    instance: string,
  ): Promise<{ welcome: WelcomeMessage } | { status: number; reason: string }>;
  onMessage(processServer: string, message: AgentMessage, instance: string): Promise<void>;
  onConnect(processServer: string): void;
  onClose(processServer: string): void;
}

interface Session {
  processServer: string;
  instance: string;
  socket: Duplex;
  lastSeen: number;
  hello: boolean;
  draining: boolean;
  /** Job slots the agent said it offers in its `hello` (informative). */
  slots?: number;
  /** Messages of a session are handled strictly in order. */
  chain: Promise<void>;
  /**
   * Set when something it sent could not be stored: the messages that came after it on this connection are not
   * handled (a report must not be applied over output that was lost); the agent sends them again.
   */
  replaying: boolean;
  /** The output read and not yet stored, which pauses reading the socket (agent-inflow.ts). */
  inflow: Inflow;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  503: 'Service Unavailable',
};

function refuse(socket: Duplex, status: number, reason: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${reason}\n`,
  );
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

/** Only well-formed messages reach the engine; agents are authenticated, but not trusted with the server's state. */
function wellFormed(m: unknown): m is AgentMessage {
  if (!isPlainObject(m)) return false;
  const x = m;
  switch (x.type) {
    case 'ping':
    case 'draining':
      return true;
    case 'hello':
      return Array.isArray(x.known) && x.known.every(isKnownAttempt);
    case 'started':
      return isInt(x.jobId) && isInt(x.attempt) && isInt(x.startTime);
    case 'output':
      return (
        isInt(x.jobId) &&
        isInt(x.attempt) &&
        typeof x.file === 'string' &&
        isInt(x.offset) &&
        x.offset >= 0 &&
        typeof x.data === 'string'
      );
    case 'finished':
      return (
        isInt(x.jobId) &&
        isInt(x.attempt) &&
        isInt(x.startTime) &&
        isInt(x.endTime) &&
        (x.returnCode === null || isInt(x.returnCode)) &&
        (x.out === undefined || (typeof x.out === 'object' && x.out !== null)) &&
        Array.isArray(x.files)
      );
    case 'lost':
      return isInt(x.jobId) && isInt(x.attempt);
    case 'raise':
      return (
        typeof x.id === 'string' &&
        typeof x.definition === 'string' &&
        typeof x.path === 'string' &&
        isInt(x.size) &&
        isInt(x.mtime) &&
        typeof x.inode === 'string' &&
        (x.moveError === undefined || typeof x.moveError === 'string')
      );
    case 'watchStatus':
      return Array.isArray(x.watches) && x.watches.length <= 10_000;
    default:
      return false;
  }
}
/** An item of `hello`'s `known`: a job id and attempt the agent still has. */
const isKnownAttempt = (k: unknown): boolean =>
  typeof k === 'object' && k !== null && 'jobId' in k && isInt(k.jobId) && 'attempt' in k && isInt(k.attempt);

export class AgentHub {
  private readonly sessions = new Map<string, Session>();
  private readonly accepting = new Map<string, Promise<void>>();
  /** When each refusal (process server, instance, reason) was last logged. */
  private readonly refusedLogged = new Map<string, number>();
  private readonly path: string;
  private readonly handlers: HubHandlers;
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(rootPath: string, handlers: HubHandlers, logger: Logger, now: () => number) {
    this.path = `${rootPath}${AGENT_PATH}`;
    this.handlers = handlers;
    this.logger = logger;
    this.now = now;
  }

  /**
   * Serves the agents' upgrades of `server`. `refusal` tells why a connection may not carry an agent whatever it
   * presents (mutual TLS without the agents' client certificate, docs/architecture.md §10).
   */
  attach(server: Server, refusal?: (socket: Duplex) => string | undefined): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => {});
      const refused = refusal?.(socket);
      if (refused !== undefined) {
        this.logRefusal('', '', 403, refused);
        refuse(socket, 403, refused);
        return;
      }
      // One upgrade of a process server at a time: which instance holds it is decided without a race.
      const processServer = String(req.headers[HEADER_PROCESS_SERVER] ?? '');
      const accepted = (this.accepting.get(processServer) ?? Promise.resolve())
        .then(() => this.accept(req, socket, head))
        .catch((err: unknown) => {
          this.logger.warn({ err }, 'agent connection failed');
          refuse(socket, 503, 'server error');
        });
      this.accepting.set(processServer, accepted);
      void accepted.then(() => {
        if (this.accepting.get(processServer) === accepted) this.accepting.delete(processServer);
      });
    });
  }

  /** Connected, introduced itself, and not shutting down: it may be given work. */
  isReady(processServer: string): boolean {
    const s = this.sessions.get(processServer);
    return s?.hello === true && !s.draining;
  }

  isConnected(processServer: string): boolean {
    return this.sessions.has(processServer);
  }

  /** The agents connected now and the slots each offers (metrics). */
  connected(): { processServer: string; instance: string; slots: number | undefined; ready: boolean }[] {
    return [...this.sessions.values()].map((s) => ({
      processServer: s.processServer,
      instance: s.instance,
      slots: s.slots,
      ready: s.hello && !s.draining,
    }));
  }

  /** The agent instance connected to this node for the process server, if any. */
  instanceOf(processServer: string): string | undefined {
    return this.sessions.get(processServer)?.instance;
  }

  /** The instance holding the process server here, and whether it said hello and was heard from within `liveMs`. */
  holder(processServer: string, liveMs: number): { instance: string; live: boolean } | undefined {
    const s = this.sessions.get(processServer);
    if (!s) return undefined;
    return { instance: s.instance, live: s.hello && this.now() - (this.lastSeen(processServer) ?? 0) <= liveMs };
  }

  /** When the agent was last heard from; now while the server itself does not read it (agent-inflow.ts). */
  lastSeen(processServer: string): number | undefined {
    const s = this.sessions.get(processServer);
    return s?.inflow.paused ? this.now() : s?.lastSeen;
  }

  /**
   * Sends if connected (to `instance`, when named); returns false when the agent is away (it learns what it missed
   * from its `hello`).
   */
  send(processServer: string, message: ServerMessage, instance?: string): boolean {
    const s = this.sessions.get(processServer);
    if (!s || s.socket.destroyed || (instance !== undefined && s.instance !== instance)) return false;
    corkForTick(s.socket);
    s.socket.write(encode(message));
    return true;
  }

  /** Drops a session that has been silent too long; its process server then counts as away. */
  disconnect(processServer: string): void {
    const s = this.sessions.get(processServer);
    if (!s) return;
    this.sessions.delete(processServer);
    s.socket.destroy();
    this.handlers.onClose(processServer);
  }

  /**
   * Closes the agent's connection because what it reported could not be stored (the database away): it connects
   * again and sends every report not acknowledged, as after any reconnection.
   */
  replay(processServer: string, err: unknown): void {
    const s = this.sessions.get(processServer);
    if (!s || s.replaying) return;
    s.replaying = true;
    this.logger.warn(
      { err, processServer },
      'agent report or output not stored; reconnecting the agent so that it sends it again',
    );
    s.socket.destroy();
  }

  close(): void {
    for (const s of this.sessions.values()) s.socket.destroy();
    this.sessions.clear();
  }

  /** A refused agent retries every few seconds: the same refusal is logged once a minute, as the agent does. */
  private logRefusal(processServer: string, instance: string, status: number, reason: string): void {
    const key = `${processServer}\n${instance}\n${reason}`;
    const now = this.now();
    if (now - (this.refusedLogged.get(key) ?? Number.NEGATIVE_INFINITY) < 60_000) return;
    if (this.refusedLogged.size > 1000) this.refusedLogged.clear();
    this.refusedLogged.set(key, now);
    this.logger.warn({ processServer, instance, status }, `agent refused: ${reason}`);
  }

  private async accept(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = (req.url ?? '').split('?')[0];
    if (url !== this.path) return refuse(socket, 404, 'no such endpoint');
    if ((req.headers.upgrade ?? '').toLowerCase() !== UPGRADE_PROTOCOL)
      return refuse(socket, 400, `expected Upgrade: ${UPGRADE_PROTOCOL}`);
    const processServer = String(req.headers[HEADER_PROCESS_SERVER] ?? '');
    const auth = String(req.headers.authorization ?? '');
    const secret = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    const instance = String(req.headers[HEADER_AGENT_INSTANCE] ?? '');
    const verdict = await this.handlers.authenticate(processServer, secret, instance);
    if (!('welcome' in verdict)) {
      this.logRefusal(processServer, instance, verdict.status, verdict.reason);
      return refuse(socket, verdict.status, verdict.reason);
    }
    const existing = this.sessions.get(processServer);
    if (existing) {
      // The same agent process connecting again, or another one after this session went silent (authenticate
      // refused any other): the older connection is dead (a cut network, a killed agent) or about to be.
      this.logger.warn(
        { processServer, instance, previous: existing.instance },
        'agent connection replaces the older session',
      );
      this.sessions.delete(processServer);
      existing.socket.destroy();
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${UPGRADE_PROTOCOL}\r\nConnection: Upgrade\r\n\r\n`);
    socket.write(encode(verdict.welcome));
    const session: Session = {
      processServer,
      instance,
      socket,
      lastSeen: this.now(),
      hello: false,
      draining: false,
      chain: Promise.resolve(),
      replaying: false,
      inflow: new Inflow(socket, {
        pong: () => socket.write(encode({ type: 'pong' })),
        resumed: () => {
          session.lastSeen = this.now();
        },
      }),
    };
    this.sessions.set(processServer, session);
    if ('setNoDelay' in socket && typeof socket.setNoDelay === 'function') socket.setNoDelay(true);
    this.logger.info({ processServer, instance: session.instance }, 'agent connected');
    const decoder = new LineDecoder(
      (m) => this.receive(session, m),
      (reason) => {
        this.logger.warn({ processServer, reason }, 'agent protocol error; closing');
        socket.destroy();
      },
    );
    // Any bytes count as hearing from the agent: a ping may be behind a long line still arriving.
    socket.on('data', (chunk: Buffer) => {
      session.lastSeen = this.now();
      decoder.push(chunk);
    });
    // The HTTP server's sockets allow half-open connections: an agent that dies sends FIN, which alone would leave
    // the socket in CLOSE-WAIT and the session in place. Its end is the session's end. Keep-alive probes find a
    // peer that vanished without a FIN (a cut cable) within about a minute.
    socket.on('end', () => socket.destroy());
    socket.on('error', () => socket.destroy());
    if ('setKeepAlive' in socket && typeof socket.setKeepAlive === 'function') socket.setKeepAlive(true, 15_000);
    socket.on('close', () => {
      this.logger.info({ processServer }, 'agent disconnected');
      if (this.sessions.get(processServer) !== session) return; // replaced by a newer connection, or dropped as silent
      this.sessions.delete(processServer);
      this.handlers.onClose(processServer);
    });
    if (head.length > 0) decoder.push(head);
  }

  private receive(session: Session, message: unknown): void {
    session.lastSeen = this.now();
    if (!wellFormed(message)) {
      this.logger.warn({ processServer: session.processServer }, 'malformed agent message ignored');
      return;
    }
    if (message.type === 'ping') {
      session.socket.write(encode({ type: 'pong' }));
      return;
    }
    if (message.type === 'draining') session.draining = true;
    const held = message.type === 'output' ? message.data.length : 0;
    session.inflow.hold(held);
    session.chain = session.chain
      .then(async () => {
        if (session.replaying) return;
        await this.handlers.onMessage(session.processServer, message, session.instance);
        if (message.type === 'hello' && !session.hello) {
          session.hello = true;
          if (Number.isSafeInteger(message.slots)) session.slots = message.slots;
          this.handlers.onConnect(session.processServer);
        }
      })
      .catch((err: unknown) => {
        // The agent re-sends what was not acknowledged after it reconnects.
        this.logger.warn({ err, processServer: session.processServer }, 'agent message not processed; reconnecting it');
        session.replaying = true;
        session.socket.destroy();
      })
      .finally(() => session.inflow.release(held));
  }
}
