import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { availableParallelism, hostname } from 'node:os';
import type { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { agentUrl, keepConnected, Session } from './connection.ts';
import { type Log, reason, stderrLog } from './log.ts';
import { ParentLink } from './parent-link.ts';
import { isAlive, lockDataDir } from './pidfile.ts';
import type { KnownAttempt, RunMessage } from './protocol.ts';
import { finalReport } from './reports.ts';
import { Attempt, killGroup, type ProcessEnd, spawnAttempt } from './runner.ts';
import { workPaths } from './scripts.ts';
import { toServerMessage } from './server-messages.ts';
import { serverList } from './servers.ts';
import { sendReport, shipLogs } from './shipper.ts';
import { attemptKey, Spool } from './spool.ts';
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
   * Log every job's start and end. Default: only ends the job record cannot tell (no start, a signal, a kill);
   * two lines per job were a write to stderr each, which the local agent shares with the server.
   */
  logJobs?: boolean;
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
  private readonly attempts = new Map<string, Attempt>();
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
      this.loadSpool();
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
    this.timers.every(this.options.pollMs ?? 250, () => this.tick());
    this.timers.every(RESEND_MIN_MS, () => this.resendUnacknowledged());
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

  /** Attempts from the spool: finished ones still to report, and running ones, which this process did not start. */
  private loadSpool(): void {
    for (const loaded of this.spool.load()) {
      if (!loaded.ok) {
        this.log(`spool entry ${attemptKey(loaded.jobId, loaded.attempt)} is unreadable (${loaded.error}): lost`);
        const a = new Attempt(loaded.jobId, loaded.attempt, this.paths(loaded.jobId, loaded.attempt), 'lost');
        this.attempts.set(attemptKey(a.jobId, a.attempt), a);
        continue;
      }
      const e = loaded.entry;
      const a = new Attempt(
        e.jobId,
        e.attempt,
        this.paths(e.jobId, e.attempt),
        e.state === 'finished' ? 'finished' : 'lost',
      );
      a.startTime = e.startTime;
      a.pid = e.pid;
      a.report = e.finished;
      if (a.state === 'lost') this.log(`${attemptKey(a.jobId, a.attempt)} was running when the agent stopped: lost`);
      this.attempts.set(attemptKey(a.jobId, a.attempt), a);
    }
    // Work folders without a spool entry belong to acknowledged or abandoned attempts.
    for (const name of readdirSync(this.workRoot))
      if (!this.attempts.has(name))
        void rm(join(this.workRoot, name), { recursive: true, force: true }).catch(() => {});
  }

  private paths(jobId: number, attempt: number) {
    return workPaths(this.workRoot, jobId, attempt);
  }

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
      const known: KnownAttempt[] = [...this.attempts.values()].map((a) => {
        const k: KnownAttempt = {
          jobId: a.jobId,
          attempt: a.attempt,
          state: a.state === 'finished' ? 'finished' : 'running',
        };
        if (a.startTime !== undefined) k.startTime = a.startTime;
        if (a.pid !== undefined) k.pid = a.pid;
        return k;
      });
      void session.send({
        type: 'hello',
        agent: `millrace-agent ${this.options.version ?? '(version unknown)'} on ${hostname()} pid ${process.pid}`,
        slots: this.options.slots ?? availableParallelism(),
        known,
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
        this.onRun(m);
        return;
      case 'kill':
        this.onKill(m.jobId, m.attempt);
        return;
      case 'abandon':
        this.onAbandon(m.jobId, m.attempt);
        return;
      case 'ack':
        this.onAck(m.jobId, m.attempt);
        return;
      case 'pong':
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
    for (const a of this.attempts.values()) if (a.state !== 'running') a.queue(() => sendReport(a, session), this.log);
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

  // ─── jobs ────────────────────────────────────────────────────────────────────────────────────────

  private onRun(run: RunMessage): void {
    const key = attemptKey(run.jobId, run.attempt);
    if (this.attempts.has(key)) {
      this.log(`run ${key}: already known, ignored`);
      return;
    }
    const a = new Attempt(run.jobId, run.attempt, this.paths(run.jobId, run.attempt), 'running');
    a.run = run;
    this.attempts.set(key, a);
    const now = Date.now();
    if (this.draining || this.stopped) {
      this.onEnd(a, { endTime: now, returnCode: null, signal: null, error: 'agent is shutting down' });
      return;
    }
    try {
      // Written before the spawn: an attempt missing from the spool was never started.
      this.spool.write({ jobId: run.jobId, attempt: run.attempt, state: 'running' });
    } catch (err) {
      this.onEnd(a, { endTime: now, returnCode: null, signal: null, error: `cannot write the spool: ${reason(err)}` });
      return;
    }
    const spawned = spawnAttempt(run, a.paths, (end) => this.onEnd(a, end));
    if (spawned.kind === 'failed') {
      this.onEnd(a, { endTime: Date.now(), returnCode: null, signal: null, error: spawned.error });
      return;
    }
    if (spawned.kind === 'failing') return;
    a.child = spawned.child;
    a.pid = spawned.pid;
    a.startTime = spawned.startTime;
    try {
      this.spool.write(
        { jobId: a.jobId, attempt: a.attempt, state: 'running', pid: a.pid, startTime: a.startTime },
        false,
      );
    } catch (err) {
      this.log(`${key}: cannot update the spool entry: ${reason(err)}`);
    }
    if (this.options.logJobs) this.log(`${key} started (${run.scriptType}, pid ${a.pid})`);
    void this.live()?.send({ type: 'started', jobId: a.jobId, attempt: a.attempt, pid: a.pid, startTime: a.startTime });
  }

  /** The process ended (or never started): spool the final report, then send it after the rest of the output. */
  private onEnd(a: Attempt, end: ProcessEnd): void {
    if (a.gone || a.state !== 'running') return;
    const key = attemptKey(a.jobId, a.attempt);
    const report = finalReport(a, end, this.log);
    a.report = report;
    a.state = 'finished';
    a.child = undefined;
    try {
      this.spool.write({
        jobId: a.jobId,
        attempt: a.attempt,
        state: 'finished',
        startTime: report.startTime,
        pid: a.pid,
        finished: report,
      });
    } catch (err) {
      this.log(`${key}: cannot spool the final report: ${reason(err)}`);
    }
    if (this.options.logJobs || end.error !== undefined || end.signal || a.killRequested) {
      const how = end.error ?? (end.signal ? `signal ${end.signal}` : `return code ${end.returnCode}`);
      this.log(`${key} finished: ${how}${a.killRequested ? ' (killed)' : ''}`);
    }
    const s = this.live();
    if (s) a.queue(() => sendReport(a, s), this.log);
    this.checkDone();
  }

  private onKill(jobId: number, attempt: number): void {
    const a = this.attempts.get(attemptKey(jobId, attempt));
    if (a?.state !== 'running' || a.pid === undefined) {
      this.log(`kill ${attemptKey(jobId, attempt)}: not running here, ignored`);
      return;
    }
    a.killRequested = true;
    this.log(`kill ${attemptKey(jobId, attempt)}: TERM to process group ${a.pid}, KILL after ${this.killGraceMs} ms`);
    killGroup(a, this.killGraceMs);
  }

  private onAbandon(jobId: number, attempt: number): void {
    const key = attemptKey(jobId, attempt);
    const a = this.attempts.get(key);
    if (!a) {
      this.log(`abandon ${key}: unknown, ignored`);
      return;
    }
    this.forget(a);
    a.child?.unref();
    if (a.killTimer) clearTimeout(a.killTimer);
    this.log(`abandoned ${key}${a.state === 'running' ? ` (its process ${a.pid ?? '?'} is left alone)` : ''}`);
    this.checkDone();
  }

  private onAck(jobId: number, attempt: number): void {
    const a = this.attempts.get(attemptKey(jobId, attempt));
    if (!a || a.state === 'running') return;
    this.forget(a);
    this.checkDone();
  }

  /** Drops an attempt: spool entry now, work folder once its pending sends are over. */
  private forget(a: Attempt): void {
    a.gone = true;
    this.attempts.delete(attemptKey(a.jobId, a.attempt));
    try {
      this.spool.remove(a.jobId, a.attempt);
    } catch (err) {
      this.log(`${attemptKey(a.jobId, a.attempt)}: cannot delete the spool entry: ${reason(err)}`);
    }
    const dir = a.paths.dir;
    a.queue(() => rm(dir, { recursive: true, force: true }), this.log, true);
  }

  /** Every poll: new bytes of running jobs' stdout/stderr go out. */
  private tick(): void {
    const s = this.live();
    if (!s) return;
    for (const a of this.attempts.values()) {
      if (a.state !== 'running' || a.tickQueued || a.pid === undefined) continue;
      a.tickQueued = true;
      a.queue(async () => {
        a.tickQueued = false;
        await shipLogs(a, s);
      }, this.log);
    }
  }

  /** Final reports sent on this connection and not acknowledged in time go again (RESEND_HEARTBEATS). */
  private resendUnacknowledged(): void {
    const s = this.live();
    if (!s) return;
    const now = Date.now();
    for (const a of this.attempts.values()) {
      const sent = a.reportSent;
      if (a.state === 'running' || a.resendQueued || sent?.session !== s || now - sent.at < this.resendMs) continue;
      a.resendQueued = true;
      this.log(`${attemptKey(a.jobId, a.attempt)}: report not acknowledged within ${this.resendMs} ms; sent again`);
      a.queue(async () => {
        a.resendQueued = false;
        await sendReport(a, s);
      }, this.log);
    }
  }

  // ─── stopping ────────────────────────────────────────────────────────────────────────────────────

  /** Orphaned: stop once no job runs; while some do, say so on the parent link (the parent need not wait). */
  private onParentGone(why: string): void {
    if (this.parentGone || this.stopped) return;
    this.parentGone = true;
    this.log(why);
    const running = [...this.attempts.values()].filter((a) => a.state === 'running').length;
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
    const running = [...this.attempts.values()].some((a) => a.state === 'running');
    if (running) return;
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
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.session?.close('agent stopping', true);
    this.parentLink?.close();
    this.log(`stopped: ${why}`);
    // Spool entries still being synced to disk are finished first (the pid file goes last: no second agent before).
    void this.spool.flushed().finally(() => {
      this.releaseLock();
      this.resolveClosed(why);
    });
  }
}
