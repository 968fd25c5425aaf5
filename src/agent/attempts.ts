/**
 * The attempts this agent knows, from `run` to `ack` (docs/architecture.md §7): spawning, the spool entries, final
 * reports, kills and abandons, and the output and reports that go out on the live connection. Apart from the
 * agent's connection and stopping (agent.ts), which reach it only through `AttemptsDeps`.
 */
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Session } from './connection.ts';
import { type Log, reason } from './log.ts';
import type { KnownAttempt, RunMessage } from './protocol.ts';
import { finalReport } from './reports.ts';
import type { ProcessEnd } from './process-end.ts';
import { Attempt, killGroup, spawnAttempt } from './runner.ts';
import type { ScriptFiles } from './script-files.ts';
import { workPaths } from './scripts.ts';
import { sendReport, shipLogs } from './shipper.ts';
import type { Spawner } from './spawner.ts';
import { attemptKey, type Spool } from './spool.ts';
import { WorkFolders } from './work-folders.ts';

export interface AttemptsDeps {
  spool: Spool;
  /** The folder holding one work folder per attempt. */
  workRoot: string;
  /** The BASH and SH script files, shared by content. */
  scripts: ScriptFiles;
  log: Log;
  /** Log every job's start and end (AgentOptions.logJobs). */
  logJobs: boolean;
  /** The connection, once welcomed: reports and output go only there. */
  live(): Session | null;
  /** The kill grace the server last gave in `welcome` (ms). */
  killGraceMs(): number;
  /** True while draining or stopped: a `run` is refused. */
  refusing(): boolean;
  /** What forks the job processes (spawner.ts); none: this process does. */
  spawner?: Spawner | undefined;
  /** Called when an attempt ended or was dropped: the agent may be done. */
  changed(): void;
}

export class Attempts {
  private readonly byKey = new Map<string, Attempt>();
  private readonly deps: AttemptsDeps;
  private readonly folders: WorkFolders;

  constructor(deps: AttemptsDeps) {
    this.deps = deps;
    this.folders = new WorkFolders(deps.workRoot);
  }

  get size(): number {
    return this.byKey.size;
  }

  runningCount(): number {
    return [...this.byKey.values()].filter((attempt) => attempt.state === 'running').length;
  }

  /** What `hello` tells the server about every attempt still known. */
  known(): KnownAttempt[] {
    return [...this.byKey.values()].map((attempt) => {
      const known: KnownAttempt = {
        jobId: attempt.jobId,
        attempt: attempt.attempt,
        state: attempt.state === 'finished' ? 'finished' : 'running',
      };
      if (attempt.startTime !== undefined) known.startTime = attempt.startTime;
      if (attempt.pid !== undefined) known.pid = attempt.pid;
      return known;
    });
  }

  /** Attempts from the spool: finished ones still to report, and running ones, which this process did not start. */
  loadSpool(): void {
    const log = this.deps.log;
    for (const loaded of this.deps.spool.load()) {
      if (!loaded.ok) {
        log(`spool entry ${attemptKey(loaded.jobId, loaded.attempt)} is unreadable (${loaded.error}): lost`);
        const a = new Attempt(loaded.jobId, loaded.attempt, this.paths(loaded.jobId, loaded.attempt), 'lost');
        this.byKey.set(attemptKey(a.jobId, a.attempt), a);
        continue;
      }
      const entry = loaded.entry;
      const a = new Attempt(
        entry.jobId,
        entry.attempt,
        this.paths(entry.jobId, entry.attempt),
        entry.state === 'finished' ? 'finished' : 'lost',
      );
      a.startTime = entry.startTime;
      a.pid = entry.pid;
      a.report = entry.finished;
      if (a.state === 'lost') log(`${attemptKey(a.jobId, a.attempt)} was running when the agent stopped: lost`);
      this.byKey.set(attemptKey(a.jobId, a.attempt), a);
    }
    // Work folders without a spool entry belong to acknowledged or abandoned attempts, or are spares
    // (work-folders.ts) of an earlier agent process.
    const workRoot = this.deps.workRoot;
    for (const name of readdirSync(workRoot))
      if (!this.byKey.has(name)) void rm(join(workRoot, name), { recursive: true, force: true }).catch(() => {});
  }

  private paths(jobId: number, attempt: number) {
    return workPaths(this.deps.workRoot, jobId, attempt);
  }

  /** On `welcome`: everything not yet acknowledged is reported again. */
  reportAll(session: Session): void {
    for (const a of this.byKey.values())
      if (a.state !== 'running') a.queue(() => sendReport(a, session), this.deps.log);
  }

  onRun(run: RunMessage): void {
    const { spool, log } = this.deps;
    const key = attemptKey(run.jobId, run.attempt);
    if (this.byKey.has(key)) {
      log(`run ${key}: already known, ignored`);
      return;
    }
    const a = new Attempt(run.jobId, run.attempt, this.paths(run.jobId, run.attempt), 'running');
    a.run = run;
    this.byKey.set(key, a);
    const now = Date.now();
    if (this.deps.refusing()) {
      this.onEnd(a, { endTime: now, returnCode: null, signal: null, error: 'agent is shutting down' });
      return;
    }
    try {
      // Written before the spawn: an attempt missing from the spool was never started.
      spool.write({ jobId: run.jobId, attempt: run.attempt, state: 'running' });
    } catch (err) {
      this.onEnd(a, { endTime: now, returnCode: null, signal: null, error: `cannot write the spool: ${reason(err)}` });
      return;
    }
    const spawned = spawnAttempt(
      run,
      a.paths,
      this.deps.scripts,
      this.folders,
      { started: (pid, startTime) => this.onStarted(a, pid, startTime), ended: (end) => this.onEnd(a, end) },
      this.deps.spawner,
    );
    if (spawned.kind === 'failed') {
      this.onEnd(a, { endTime: Date.now(), returnCode: null, signal: null, error: spawned.error });
      return;
    }
    if (spawned.kind === 'failing' || spawned.kind === 'spawning') return;
    if (spawned.kind === 'inProcess') {
      // It runs in this process: the agent's pid is the one reported (never signalled, see killGroup).
      a.cancel = spawned.cancel;
      this.onStarted(a, process.pid, spawned.startTime);
    } else {
      a.child = spawned.child;
      this.onStarted(a, spawned.pid, spawned.startTime);
    }
  }

  /** The process exists: its pid goes into the spool entry, and `started` to the server. */
  private onStarted(a: Attempt, pid: number, startTime: number): void {
    // Abandoned while its spawner forked it: left alone, as an abandoned running process is.
    if (a.gone || a.state !== 'running') return;
    const key = attemptKey(a.jobId, a.attempt);
    a.pid = pid;
    a.startTime = startTime;
    try {
      this.deps.spool.write({ jobId: a.jobId, attempt: a.attempt, state: 'running', pid, startTime }, false);
    } catch (err) {
      this.deps.log(`${key}: cannot update the spool entry: ${reason(err)}`);
    }
    if (this.deps.logJobs) this.deps.log(`${key} started (${a.run?.scriptType}, pid ${pid})`);
    void this.deps.live()?.send({ type: 'started', jobId: a.jobId, attempt: a.attempt, pid, startTime });
    // A kill that came while the spawner forked it.
    if (a.killRequested) killGroup(a, this.deps.killGraceMs());
  }

  /** The process ended (or never started): spool the final report, then send it after the rest of the output. */
  private onEnd(a: Attempt, end: ProcessEnd): void {
    if (a.gone || a.state !== 'running') return;
    const log = this.deps.log;
    const key = attemptKey(a.jobId, a.attempt);
    const report = finalReport(a, end, log);
    a.report = report;
    a.state = 'finished';
    a.child = undefined;
    try {
      this.deps.spool.write({
        jobId: a.jobId,
        attempt: a.attempt,
        state: 'finished',
        startTime: report.startTime,
        pid: a.pid,
        finished: report,
      });
    } catch (err) {
      log(`${key}: cannot spool the final report: ${reason(err)}`);
    }
    if (this.deps.logJobs || end.error !== undefined || end.signal || a.killRequested) {
      const how = end.error ?? (end.signal ? `signal ${end.signal}` : `return code ${end.returnCode}`);
      log(`${key} finished: ${how}${a.killRequested ? ' (killed)' : ''}`);
    }
    const session = this.deps.live();
    if (session) a.queue(() => sendReport(a, session), log);
    this.deps.changed();
  }

  onKill(jobId: number, attempt: number): void {
    const a = this.byKey.get(attemptKey(jobId, attempt));
    if (a?.state === 'running' && a.pid === undefined && a.run) {
      // Its spawner has not said it started yet: killed once it has (onStarted).
      a.killRequested = true;
      this.deps.log(`kill ${attemptKey(jobId, attempt)}: as soon as its process has started`);
      return;
    }
    if (a?.state !== 'running' || a.pid === undefined) {
      this.deps.log(`kill ${attemptKey(jobId, attempt)}: not running here, ignored`);
      return;
    }
    a.killRequested = true;
    const killGraceMs = this.deps.killGraceMs();
    this.deps.log(
      a.cancel
        ? `kill ${attemptKey(jobId, attempt)}: its request is cancelled`
        : `kill ${attemptKey(jobId, attempt)}: TERM to process group ${a.pid}, KILL after ${killGraceMs} ms`,
    );
    killGroup(a, killGraceMs);
  }

  onAbandon(jobId: number, attempt: number): void {
    const key = attemptKey(jobId, attempt);
    const a = this.byKey.get(key);
    if (!a) {
      this.deps.log(`abandon ${key}: unknown, ignored`);
      return;
    }
    this.forget(a);
    a.child?.unref();
    if (a.killTimer) clearTimeout(a.killTimer);
    this.deps.log(`abandoned ${key}${a.state === 'running' ? ` (its process ${a.pid ?? '?'} is left alone)` : ''}`);
    this.deps.changed();
  }

  onAck(jobId: number, attempt: number): void {
    const a = this.byKey.get(attemptKey(jobId, attempt));
    if (!a || a.state === 'running') return;
    this.forget(a);
    this.deps.changed();
  }

  /** Drops an attempt: spool entry now, work folder once its pending sends are over. */
  private forget(a: Attempt): void {
    a.gone = true;
    this.byKey.delete(attemptKey(a.jobId, a.attempt));
    try {
      this.deps.spool.remove(a.jobId, a.attempt);
    } catch (err) {
      this.deps.log(`${attemptKey(a.jobId, a.attempt)}: cannot delete the spool entry: ${reason(err)}`);
    }
    // The process group its process led, for a process this agent started (not one run inside it).
    const group = a.run && a.cancel === undefined && a.pid !== process.pid ? a.pid : undefined;
    const paths = a.paths;
    a.queue(() => this.folders.release(paths, group), this.deps.log, true);
  }

  /** The agent stops: processes still running are left to run (the next agent reports them lost). */
  close(): void {
    this.deps.spawner?.close();
  }

  /** Every poll: new bytes of running jobs' stdout/stderr go out. */
  shipOutput(): void {
    const session = this.deps.live();
    if (!session) return;
    for (const a of this.byKey.values()) {
      if (a.state !== 'running' || a.tickQueued || a.pid === undefined) continue;
      a.tickQueued = true;
      a.queue(async () => {
        a.tickQueued = false;
        await shipLogs(a, session);
      }, this.deps.log);
    }
  }

  /** Final reports sent on this connection and not acknowledged within `resendMs` go again. */
  resendUnacknowledged(resendMs: number): void {
    const session = this.deps.live();
    if (!session) return;
    const now = Date.now();
    for (const a of this.byKey.values()) {
      const sent = a.reportSent;
      if (a.state === 'running' || a.resendQueued || sent?.session !== session || now - sent.at < resendMs) continue;
      a.resendQueued = true;
      this.deps.log(`${attemptKey(a.jobId, a.attempt)}: report not acknowledged within ${resendMs} ms; sent again`);
      a.queue(async () => {
        a.resendQueued = false;
        await sendReport(a, session);
      }, this.deps.log);
    }
  }
}
