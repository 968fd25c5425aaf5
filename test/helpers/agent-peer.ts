import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { HANG_MS } from './wait.ts';
import { join } from 'node:path';
import { after, before } from 'node:test';
import {
  type AgentMessage,
  encode,
  type FinishedMessage,
  HEADER_AGENT_INSTANCE,
  HEADER_PROCESS_SERVER,
  LineDecoder,
  type RunMessage,
  type ServerMessage,
  UPGRADE_PROTOCOL,
} from '../../src/agent/protocol.ts';
import { attemptKey, type LoadedEntry, readSpool } from '../../src/agent/spool.ts';
import { AGENT_HEAP } from '../../src/engine/local-agent.ts';
import { cliEnv, ROOT } from './cli.ts';

/**
 * A stand-in for the server side of the agent protocol: an HTTP server on port 0 that accepts the upgrade on
 * `/millrace/agent` when the secret matches, answers `hello` with `welcome` and `ping` with `pong`, records every
 * message, reassembles job files from `output` chunks, and sends what a test asks (run, kill, abandon, ack).
 */
export interface PeerOptions {
  secret?: string;
  processServer?: string;
  killGraceMs?: number;
  heartbeatMs?: number;
  /** Answer `finished` and `lost` with `ack` (default true). */
  autoAck?: boolean;
}

export interface Received {
  /** Which connection (1, 2, …) it came on. */
  connection: number;
  message: AgentMessage;
}

interface Waiter {
  predicate: (r: Received) => boolean;
  resolve: (r: Received) => void;
}

export class AgentPeer {
  readonly secret: string;
  readonly processServer: string;
  autoAck: boolean;
  /** When set, `ping` gets no `pong` (a server that hangs). */
  silent = false;
  /** When set, upgrades are answered with this status (and a one-line body) instead of 101. */
  rejectWith: number | undefined;
  readonly received: Received[] = [];
  /** Upgrade requests seen: their headers and the status answered. */
  readonly requests: { headers: IncomingMessage['headers']; status: number }[] = [];
  connections = 0;
  /** Framing errors in what the agent sent (a test expects none). */
  readonly errors: string[] = [];
  /** Pids reported in `started`, so that cleanup can kill what a test left running. */
  readonly pids = new Set<number>();
  private readonly files = new Map<string, Map<string, Buffer>>();
  private readonly waiters = new Set<Waiter>();
  private socket: Socket | null = null;
  private readonly server: Server;
  private readonly options: PeerOptions;
  port = 0;

  private constructor(options: PeerOptions) {
    this.options = options;
    this.secret = options.secret ?? 'peer-secret';
    this.processServer = options.processServer ?? 'GLOBAL.TestAgent';
    this.autoAck = options.autoAck ?? true;
    this.server = createServer((_req, res) => {
      res.statusCode = 404;
      res.end('not found\n');
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket) => this.onUpgrade(req, socket));
  }

  static async start(options: PeerOptions = {}): Promise<AgentPeer> {
    const peer = new AgentPeer(options);
    await new Promise<void>((resolve) => peer.server.listen(0, '127.0.0.1', resolve));
    const address = peer.server.address();
    peer.port = typeof address === 'object' && address ? address.port : 0;
    return peer;
  }

  /** What `--server` gets. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/millrace`;
  }

  private onUpgrade(req: IncomingMessage, socket: Socket): void {
    const refuse = (status: number, text: string) => {
      this.requests.push({ headers: req.headers, status });
      socket.end(`HTTP/1.1 ${status} Refused\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${text}\n`);
    };
    const refusal =
      req.url !== '/millrace/agent' || req.headers.upgrade !== UPGRADE_PROTOCOL
        ? ([404, 'no such path'] as const)
        : this.rejectWith !== undefined
          ? ([this.rejectWith, `refused with ${this.rejectWith} by the test`] as const)
          : req.headers.authorization !== `Bearer ${this.secret}`
            ? ([401, 'bad secret'] as const)
            : req.headers[HEADER_PROCESS_SERVER] !== this.processServer
              ? ([404, 'no such process server'] as const)
              : !req.headers[HEADER_AGENT_INSTANCE]
                ? ([400, 'no instance'] as const)
                : null;
    if (refusal) {
      refuse(refusal[0], refusal[1]);
      return;
    }
    this.requests.push({ headers: req.headers, status: 101 });
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${UPGRADE_PROTOCOL}\r\nConnection: Upgrade\r\n\r\n`);
    this.socket?.destroy();
    this.socket = socket;
    const connection = ++this.connections;
    const decoder = new LineDecoder(
      (m) => this.onMessage(connection, socket, m as AgentMessage),
      (why) => {
        this.errors.push(`connection ${connection}: ${why}`);
        socket.destroy();
      },
    );
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.socket === socket) this.socket = null;
    });
  }

  private onMessage(connection: number, socket: Socket, message: AgentMessage): void {
    const r = { connection, message };
    this.received.push(r);
    switch (message.type) {
      case 'hello':
        socket.write(
          encode({
            type: 'welcome',
            killGraceMs: this.options.killGraceMs ?? 1000,
            heartbeatMs: this.options.heartbeatMs ?? 5000,
          }),
        );
        break;
      case 'ping':
        if (!this.silent) socket.write(encode({ type: 'pong' }));
        break;
      case 'started':
        this.pids.add(message.pid);
        break;
      case 'output': {
        const key = `${message.jobId}.${message.attempt}`;
        const files = this.files.get(key) ?? new Map<string, Buffer>();
        this.files.set(key, files);
        const data = Buffer.from(message.data, 'base64');
        const old = files.get(message.file) ?? Buffer.alloc(0);
        const next = Buffer.alloc(Math.max(old.length, message.offset + data.length));
        old.copy(next);
        data.copy(next, message.offset);
        files.set(message.file, next);
        break;
      }
      case 'finished':
      case 'lost':
        if (this.autoAck) socket.write(encode({ type: 'ack', jobId: message.jobId, attempt: message.attempt }));
        break;
    }
    for (const w of this.waiters)
      if (w.predicate(r)) {
        this.waiters.delete(w);
        w.resolve(r);
      }
  }

  /** Sends to the agent connected now. */
  send(message: ServerMessage): void {
    if (!this.socket) throw new Error('no agent is connected');
    this.socket.write(encode(message));
  }

  /** Sends raw text (to test malformed input). */
  sendRaw(text: string): void {
    if (!this.socket) throw new Error('no agent is connected');
    this.socket.write(text);
  }

  run(run: Omit<RunMessage, 'type' | 'attempt' | 'env' | 'outNames'> & Partial<RunMessage>): RunMessage {
    const message: RunMessage = { type: 'run', attempt: 1, env: {}, outNames: [], ...run };
    this.send(message);
    return message;
  }

  /** Resolves with the first message (already received or to come) that matches; rejects after `timeoutMs`. */
  waitFor(predicate: (r: Received) => boolean, what: string, timeoutMs = HANG_MS): Promise<Received> {
    const seen = this.received.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const got = this.received.map((x) => `${x.connection}:${x.message.type}`).join(' ');
        reject(new Error(`no ${what} within ${timeoutMs} ms (received: ${got})`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  async finished(jobId: number, attempt = 1, connection = 0): Promise<FinishedMessage> {
    const r = await this.waitFor(
      (x) =>
        x.connection >= connection &&
        x.message.type === 'finished' &&
        x.message.jobId === jobId &&
        x.message.attempt === attempt,
      `finished ${jobId}.${attempt}`,
    );
    return r.message as FinishedMessage;
  }

  /** The job file as reassembled from `output` chunks (empty when none arrived). */
  file(jobId: number, name: string, attempt = 1): Buffer {
    return this.files.get(`${jobId}.${attempt}`)?.get(name) ?? Buffer.alloc(0);
  }

  /** Messages of one type, in arrival order. */
  messages<T extends AgentMessage['type']>(type: T): Extract<AgentMessage, { type: T }>[] {
    return this.received.filter((r) => r.message.type === type).map((r) => r.message) as Extract<
      AgentMessage,
      { type: T }
    >[];
  }

  /** Cuts the connection (the agent reconnects). */
  drop(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  /** Kills the process group of every job reported started, then closes the server. */
  async close(): Promise<void> {
    for (const pid of this.pids) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    this.socket?.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export interface AgentProcess {
  child: ChildProcess;
  dataDir: string;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const agents = new Set<ChildProcess>();

/**
 * `node bin/millrace agent --server <peer> …` with the test's environment (no MILLRACE_*) plus `env`, and the heap
 * setting the agent is deployed with (the local agent and the systemd unit).
 */
export function spawnAgent(
  peer: Pick<AgentPeer, 'url' | 'processServer'>,
  dir: string,
  options: { dataDir?: string; env?: Record<string, string>; args?: string[] } = {},
): AgentProcess {
  const dataDir = options.dataDir ?? join(dir, 'agent');
  const child = spawn(
    process.execPath,
    [
      AGENT_HEAP,
      'bin/millrace',
      'agent',
      '--server',
      peer.url,
      '--process-server',
      peer.processServer,
      '--secret-file',
      join(dir, 'secret'),
      '--data',
      dataDir,
      ...(options.args ?? []),
    ],
    { cwd: ROOT, env: cliEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  agents.add(child);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      agents.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, dataDir, output: () => out, exited };
}

/** Starts an agent and resolves once its `hello` arrived on a new connection. */
export async function startAgent(
  peer: AgentPeer,
  dir: string,
  options: { dataDir?: string; env?: Record<string, string>; args?: string[] } = {},
): Promise<AgentProcess> {
  const before = peer.connections;
  const agent = spawnAgent(peer, dir, options);
  const failed = agent.exited.then(({ code, signal }) => {
    throw new Error(`the agent exited (${code ?? signal}) before saying hello:\n${agent.output()}`);
  });
  await Promise.race([peer.waitFor((r) => r.connection > before && r.message.type === 'hello', 'hello'), failed]);
  failed.catch(() => {});
  return agent;
}

/** SIGKILLs the agent and waits until it is gone. */
export async function killAgent(agent: AgentProcess): Promise<void> {
  agent.child.kill('SIGKILL');
  await agent.exited;
}

/**
 * For a `describe`: a temporary folder with the secret file and a peer, made before the tests; after them every
 * agent is killed, every job the peer saw started is killed, and the folder is removed.
 */
export function agentSuite(options: PeerOptions = {}): { peer(): AgentPeer; dir(): string } {
  let peer: AgentPeer | undefined;
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-agent-'));
    peer = await AgentPeer.start(options);
    await writeFile(join(dir, 'secret'), `${peer.secret}\n`);
  });
  after(async () => {
    await Promise.all(
      [...agents].map((child) => {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        return gone;
      }),
    );
    await peer?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    peer: () => {
      if (!peer) throw new Error('the peer starts in before()');
      return peer;
    },
    dir: () => dir,
  };
}

/** The spool entries an agent's data folder holds now (read as the agent reads them at start), by `jobId.attempt`. */
export function spooled(dataDir: string): Map<string, LoadedEntry> {
  const entries = new Map<string, LoadedEntry>();
  for (const l of readSpool(join(dataDir, 'spool')))
    entries.set(l.ok ? attemptKey(l.entry.jobId, l.entry.attempt) : attemptKey(l.jobId, l.attempt), l);
  return entries;
}
