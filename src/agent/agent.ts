import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import type { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { Attempts } from './attempts.ts';
import { type AgentTls, agentUrl, keepConnected, Session } from './connection.ts';
import { type Log, stderrLog } from './log.ts';
import { ParentLink } from './parent-link.ts';
import { isAlive, lockDataDir } from './pidfile.ts';
import { toServerMessage } from './server-messages.ts';
import { serverList } from './servers.ts';
import { FileWatcher } from './file-watcher.ts';
import { RaiseSpool } from './raise-spool.ts';
import { ScriptFiles } from './script-files.ts';
import { jobSpawner } from './spawner.ts';
import { Spool } from './spool.ts';
import { Timers } from './timers.ts';

export interface AgentOptions {
  /**
   * The server root with its context path, e.g. `http://127.0.0.1:7070/millrace`; several, comma-separated, for
   * the nodes of one scheduler (tried in turn).
   */
  server: string;
  /** The process server this agent is, `<partition>.<name>`. */
  processServer: string;
  secret: string;
  /** TLS files for an `https://` server (docs/architecture.md §10). */
  tls?: AgentTls;
  /** The agent's own folder: pid file, spool, work folders. */
  dataDir: string;
  /** Job slots offered (informative). Default: the number of CPUs. */
  slots?: number;
  /** Stop once this process is gone and no job runs (checked every second). */
  parentPid?: number;
  /**
   * A descriptor holding a pipe from the parent (parent-link.ts): its end means the parent is gone (or stopping),
   * heard at once; the agent then stops if no job runs, and otherwise answers `staying` on it.
   */
  parentPipe?: number;
  log?: Log;
  /** How often the logs of running jobs are checked for new bytes (ms). Default 250. */
  pollMs?: number;
  /** For the `hello` text. */
  version?: string;
  /**
   * Folders (with what lies below them) the server may ask this agent to watch for file events
   * (docs/architecture.md §7b); none: it watches no folder.
   */
  watchRoots?: readonly string[];
  /**
   * Log every job's start and end. Default: only ends the job record cannot tell (no start, a signal, a kill);
   * two lines per job were a write to stderr each, which the local agent shares with the server.
   */
  logJobs?: boolean;
  /**
   * What starts the job processes: `python3`, a small Python process (spawner.ts), or `node`, the agent itself.
   * Default: `python3` when the agent's PATH has one of version 3.8 or later, else `node`.
   */
  spawner?: 'python3' | 'node';
}

export interface AgentHandle {
  /** The random id this agent process sends as X-Millrace-Agent-Instance. */
  instance: string;
  /** Graceful stop: `draining`, no more runs, wait for the running jobs and their acknowledgements. */
  drain(): Promise<void>;
  /** Stops at once: jobs keep running (and are reported `lost` by the next agent on this folder). */
  stop(): Promise<void>;
  /** Resolves with the reason once the agent has stopped (drained, parent gone, stopped). */
  closed: Promise<string>;
}

/** Starts an agent. Throws AgentLockedError when another live agent uses the data folder. */
export async function startAgent(options: AgentOptions): Promise<AgentHandle> {
  const agent = new Agent(options);
  agent.start();
  return {
    instance: agent.instance,
    drain: () => agent.drain(),
    stop: async () => {
      agent.shutdown('stopped');
      await agent.closed;
    },
    closed: agent.closed,
  };
}

const WELCOME_TIMEOUT_MS = 30_000;
const DEFAULT_HEARTBEAT_MS = 15_000;
const DEFAULT_KILL_GRACE_MS = 10_000;
/** While draining, how long to wait for acknowledgements once every job has ended. */
const ACK_WAIT_MS = 10_000;
/**
 * A final report not acknowledged within this many heartbeats (at least RESEND_MIN_MS) is sent again on the same
 * connection: the server may have failed to store it for any reason (docs/architecture.md §7); it ignores one it
 * has stored already and acknowledges it again.
 */
const RESEND_HEARTBEATS = 2;
const RESEND_MIN_MS = 1000;

class Agent {
  readonly instance = randomBytes(8).toString('hex');
  readonly closed: Promise<string>;
  private resolveClosed!: (why: string) => void;
  private readonly log: Log;
  private readonly dataDir: string;
  private readonly servers: URL[];
  private readonly spool: Spool;
  private readonly workRoot: string;
  private readonly releaseLock: () => void;
  private readonly attempts: Attempts;
  private readonly raises: RaiseSpool;
  private readonly watcher: FileWatcher;
  private session: Session | null = null;
  private killGraceMs = DEFAULT_KILL_GRACE_MS;
  private draining = false;
  private stopped = false;
  private parentGone = false;
  private parentLink: ParentLink | undefined;
  private readonly timers = new Timers();
  private heartbeat: NodeJS.Timeout | undefined;
  private resendMs = RESEND_HEARTBEATS * DEFAULT_HEARTBEAT_MS;
  private heartbeatEvery = DEFAULT_HEARTBEAT_MS;
  private ackWait: NodeJS.Timeout | undefined;
  private readonly options: AgentOptions;

  constructor(options: AgentOptions) {
    this.options = options;
    this.log = options.log ?? stderrLog;
    this.servers = serverList(options.server);
    this.dataDir = resolve(options.dataDir);
    this.closed = new Promise((res) => {
      this.resolveClosed = res;
    });
    mkdirSync(this.dataDir, { recursive: true });
    this.releaseLock = lockDataDir(this.dataDir);
    try {
      this.spool = new Spool(this.dataDir);
      this.workRoot = join(this.dataDir, 'work');
      mkdirSync(this.workRoot, { recursive: true });
      const scripts = new ScriptFiles(join(this.dataDir, 'scripts'));
      scripts.sweep();
      this.attempts = new Attempts({
        spool: this.spool,
        workRoot: this.workRoot,
        scripts,
        log: this.log,
        logJobs: options.logJobs ?? false,
        spawner: jobSpawner(options.spawner),
        live: () => this.live(),
        killGraceMs: () => this.killGraceMs,
        refusing: () => this.draining || this.stopped,
        changed: () => this.checkDone(),
      });
      this.attempts.loadSpool();
      this.raises = new RaiseSpool(this.spool.dir);
      this.watcher = new FileWatcher({
        roots: (options.watchRoots ?? []).map((r) => resolve(r)),
        spool: this.raises,
        log: this.log,
        send: (message) => {
          const live = this.live();
          if (live) void live.send(message);
          return live !== null;
        },
      });
    } catch (err) {
      this.releaseLock();
      throw err;
    }
  }

  start(): void {
    this.log(
      `instance ${this.instance} for process server ${this.options.processServer} in ${this.dataDir}, ` +
        `server ${this.servers.map((u) => agentUrl(u).href).join(', ')}`,
    );
    this.timers.every(this.options.pollMs ?? 250, () => this.attempts.shipOutput());
    this.timers.every(RESEND_MIN_MS, () => {
      this.attempts.resendUnacknowledged(this.resendMs);
      this.watcher.resend(this.resendMs);
    });
    const parent = this.options.parentPid;
    // When the parent is our own parent, being re-parented also tells it is gone (even if it lingers as a zombie).
    const direct = parent === process.ppid;
    if (parent !== undefined)
      this.timers.every(1000, () => {
        if (!isAlive(parent) || (direct && process.ppid !== parent))
          this.onParentGone(`parent process ${parent} is gone`);
      });
    if (this.options.parentPipe !== undefined)
      this.parentLink = new ParentLink(this.options.parentPipe, () =>
        this.onParentGone(`the parent process${parent === undefined ? '' : ` ${parent}`} stopped or is gone`),
      );
    void keepConnected(
      {
        servers: this.servers,
        processServer: this.options.processServer,
        secret: this.options.secret,
        instance: this.instance,
        ...(this.options.tls ? { tls: this.options.tls } : {}),
      },
      {
        stopped: () => this.stopped,
        sleep: (ms) => this.timers.sleep(ms),
        log: this.log,
        session: (socket, head) => this.runSession(socket, head),
      },
    );
  }

  // ─── start-up ────────────────────────────────────────────────────────────────────────────────────

  // ─── connection ──────────────────────────────────────────────────────────────────────────────────

  /** Runs one connection; resolves, once it is closed, with how long it was up after `welcome` (ms). */
  private runSession(socket: Socket, head: Buffer): Promise<number> {
    return new Promise((done) => {
      const session: Session = new Session(
        socket,
        head,
        (message) => this.onMessage(session, message),
        (why) => {
          clearTimeout(welcomeTimer);
          if (this.session === session) {
            this.session = null;
            if (this.heartbeat) clearInterval(this.heartbeat);
            this.heartbeat = undefined;
          }
          if (!this.stopped) this.log(`disconnected: ${why}`);
          this.checkDone();
          done(session.welcomedAt ? Date.now() - session.welcomedAt : 0);
        },
      );
      this.session = session;
      const welcomeTimer = setTimeout(() => {
        if (!session.welcomedAt) session.close('no welcome from the server');
      }, WELCOME_TIMEOUT_MS);
      this.log('connected');
      void session.send({
        type: 'hello',
        agent: `millrace-agent ${this.options.version ?? '(version unknown)'} on ${hostname()} pid ${process.pid}`,
        slots: this.options.slots ?? availableParallelism(),
        known: this.attempts.known(),
      });
      if (this.draining) void session.send({ type: 'draining' });
    });
  }

  /** The connection, once welcomed: reports and output go only there. */
  private live(): Session | null {
    const s = this.session;
    return s && !s.closed && s.welcomedAt > 0 ? s : null;
  }

  private onMessage(session: Session, raw: unknown): void {
    const m = toServerMessage(raw);
    if (typeof m === 'string') {
      this.log(`ignored a message from the server: ${m}`);
      return;
    }
    switch (m.type) {
      case 'welcome':
        this.onWelcome(session, m.killGraceMs, m.heartbeatMs);
        return;
      case 'run':
        this.attempts.onRun(m);
        return;
      case 'kill':
        this.attempts.onKill(m.jobId, m.attempt);
        return;
      case 'abandon':
        this.attempts.onAbandon(m.jobId, m.attempt);
        return;
      case 'ack':
        this.attempts.onAck(m.jobId, m.attempt);
        return;
      case 'pong':
        return;
      case 'watch':
        this.watcher.update(m.watches);
        return;
      case 'raised':
        this.watcher.acknowledged(m.id);
        return;
      case 'heartbeat':
        if (session !== this.session || session.welcomedAt === 0) return;
        this.beat(session, m.heartbeatMs);
        void session.send({ type: 'ping' });
        this.log(`heartbeat now every ${this.heartbeatEvery} ms (the process server's AgentTimeout changed)`);
        return;
    }
  }

  private onWelcome(session: Session, killGraceMs: number, heartbeatMs: number): void {
    this.killGraceMs = killGraceMs;
    if (session.welcomedAt > 0 || session !== this.session) return;
    session.welcomedAt = Date.now();
    this.beat(session, heartbeatMs);
    this.log(`welcomed (kill grace ${killGraceMs} ms, heartbeat ${this.heartbeatEvery} ms)`);
    // Everything not yet acknowledged is reported again; running jobs' logs ship again from offset 0.
    this.attempts.reportAll(session);
    this.watcher.resend();
    this.checkDone();
  }

  /** Pings the server every `heartbeatMs` (as the server asked: welcome, heartbeat) on this session. */
  private beat(session: Session, heartbeatMs: number): void {
    const every = Math.max(heartbeatMs || DEFAULT_HEARTBEAT_MS, 100);
    this.resendMs = Math.max(RESEND_HEARTBEATS * every, RESEND_MIN_MS);
    this.heartbeatEvery = every;
    // No answer (any message, `pong` included) for three heartbeats: the connection is dead.
    const silentMs = Math.max(3 * every, 5000);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      if (Date.now() - session.lastReceived > silentMs) session.close(`no message from the server for ${silentMs} ms`);
      else void session.send({ type: 'ping' });
    }, every);
  }

  // ─── stopping ────────────────────────────────────────────────────────────────────────────────────

  /** Orphaned: stop once no job runs; while some do, say so on the parent link (the parent need not wait). */
  private onParentGone(why: string): void {
    if (this.parentGone || this.stopped) return;
    this.parentGone = true;
    this.log(why);
    const running = this.attempts.runningCount();
    if (running > 0) {
      this.log(`staying until ${running === 1 ? 'its job ends' : `its ${running} jobs end`}`);
      this.parentLink?.staying();
    }
    this.checkDone();
  }

  drain(): Promise<void> {
    if (!this.draining && !this.stopped) {
      this.draining = true;
      this.log('draining: no more runs; waiting for the running jobs');
      if (this.session && !this.session.closed) void this.session.send({ type: 'draining' });
      this.checkDone();
    }
    return this.closed.then(() => {});
  }

  /** Stops when draining (or orphaned) and nothing runs any more. */
  private checkDone(): void {
    if (this.stopped) return;
    if (this.attempts.runningCount() > 0) return;
    if (this.parentGone) {
      this.shutdown('the parent process is gone and no job runs');
      return;
    }
    if (!this.draining) return;
    if (this.attempts.size === 0) this.shutdown('drained');
    else if (!this.live()) this.shutdown('drained; reports not yet acknowledged stay in the spool');
    else if (!this.ackWait)
      this.ackWait = this.timers.after(ACK_WAIT_MS, () =>
        this.shutdown('drained; reports not acknowledged in time stay in the spool'),
      );
  }

  shutdown(why: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.timers.clear();
    this.watcher.stop();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.session?.close('agent stopping', true);
    this.parentLink?.close();
    this.attempts.close();
    this.log(`stopped: ${why}`);
    // Spool entries still being synced to disk are finished first (the pid file goes last: no second agent before).
    void this.spool.flushed().finally(() => {
      this.raises.close();
      this.releaseLock();
      this.resolveClosed(why);
    });
  }
}
