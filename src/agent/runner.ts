import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { badParameter, jobEnvironment } from './environment.ts';
import { type Log, reason } from './log.ts';
import { copyMasked, type MaskedCopy } from './masked-output.ts';
import type { ProcessEnd } from './process-end.ts';
import type { FinishedMessage, RunMessage } from './protocol.ts';
import { startRequest } from './request-job.ts';
import type { ScriptFiles } from './script-files.ts';
import { type Launch, prepareLaunch, type WorkPaths } from './scripts.ts';
import type { Spawner } from './spawner.ts';
import type { WorkFolders } from './work-folders.ts';

/** One attempt the agent knows: running here, finished (report not yet acknowledged) or lost (agent restarted). */
export class Attempt {
  readonly jobId: number;
  readonly attempt: number;
  readonly paths: WorkPaths;
  state: 'running' | 'finished' | 'lost';
  /** HTTP and SQL (run inside the agent): aborts the request or cancels the query, instead of a signal. */
  cancel?: () => void;
  /** Present for an attempt started by this agent process. */
  run?: RunMessage;
  child?: ChildProcess;
  pid?: number;
  startTime?: number;
  report?: FinishedMessage;
  killRequested = false;
  killTimer?: NodeJS.Timeout;
  /** Acknowledged or abandoned: forgotten, its remaining events are ignored. */
  gone = false;
  /** Reports and output of this attempt are sent one after another, in this chain. */
  chain: Promise<void> = Promise.resolve();
  /** The connection `offsets` belong to: a new connection ships every file again from offset 0. */
  shipSession: unknown = null;
  offsets = new Map<string, number>();
  tickQueued = false;
  /** When its final report (`finished` or `lost`) was last sent, and on which connection. */
  reportSent?: { session: unknown; at: number };
  resendQueued = false;

  constructor(jobId: number, attempt: number, paths: WorkPaths, state: Attempt['state']) {
    this.jobId = jobId;
    this.attempt = attempt;
    this.paths = paths;
    this.state = state;
  }

  /**
   * Runs `task` after the attempt's earlier ones (so its output always precedes its report); skipped once the
   * attempt is gone unless `always`. A failure is logged.
   */
  queue(task: () => Promise<unknown>, log: Log, always = false): void {
    this.chain = this.chain
      .then(async () => {
        if (always || !this.gone) await task();
      })
      .catch((err: unknown) => log(`${this.jobId}.${this.attempt}: ${reason(err)}`));
  }
}

/**
 * A spawn: started, failed at once, failing (spawn reported an error; `on.ended` will tell it), or spawning (the
 * spawner will tell `on.started`, then `on.ended`).
 */
export type Spawned =
  | { kind: 'started'; child: ChildProcess; pid: number; startTime: number }
  | { kind: 'failed'; error: string }
  | { kind: 'failing' }
  | { kind: 'spawning' }
  | { kind: 'inProcess'; cancel: () => void; startTime: number };

let ownEnvironment: NodeJS.ProcessEnv | undefined;

/**
 * The agent's environment, copied once: it does not change while the agent runs, and every read of `process.env`
 * goes through the C library (copying it whole for every job was a large part of a spawn's JavaScript).
 */
function agentEnvironment(): NodeJS.ProcessEnv {
  ownEnvironment ??= { ...process.env };
  return ownEnvironment;
}

/**
 * After a masked job's process exits, how long its pipes may stay open (a background process it left holds them)
 * before the agent stops reading and completes the log files.
 */
const PIPE_GRACE_MS = 2000;

/** What a spawn reports: the process started (`started`, when it did not start in `spawnAttempt` itself), its end. */
export interface SpawnEvents {
  started(pid: number, startTime: number): void;
  ended(end: ProcessEnd): void;
}

/**
 * Prepares the work folder (a spare one when there is one, work-folders.ts) and starts the attempt's process in its
 * own process group, stdin ignored: through `spawner` (spawner.ts) when there is one and the output is not masked,
 * else forked by this process. `on.ended` is called once with how it ended (also when it could not be started); a
 * process started through the spawner is announced later by `on.started`. The caller has written the spool entry.
 *
 * stdout/stderr: without `mask` values the process writes straight into the work folder's log files (no copy, and
 * the job outlives its agent). With them the agent reads them through pipes and writes them masked
 * (masked-output.ts); `on.ended` then waits until the files are complete, so the report's sizes cover every byte.
 * Such a job depends on its agent: when the agent stops or crashes, the job's next write to stdout or stderr gets
 * SIGPIPE (it ends, usually), and whatever it writes is never stored unmasked. Its attempt is reported `lost` by the
 * next agent, as every attempt running when its agent stopped is.
 */
export function spawnAttempt(
  run: RunMessage,
  paths: WorkPaths,
  scripts: ScriptFiles,
  folders: WorkFolders,
  on: SpawnEvents,
  spawner?: Spawner,
): Spawned {
  const bad = badParameter(run.env);
  if (bad) return { kind: 'failed', error: bad };
  if (run.scriptType === 'HTTP' || run.scriptType === 'SQL') return startRequest(run, paths, on.ended);
  const mask = (run.mask ?? []).filter((v) => v.length > 0);
  let launch: ReturnType<typeof prepareLaunch>;
  let env: NodeJS.ProcessEnv;
  try {
    folders.prepare(paths);
    launch = prepareLaunch(run.scriptType, run.script, run.outNames, paths, scripts);
    env = jobEnvironment(agentEnvironment(), run.env, {
      ...launch.env,
      MILLRACE_JOB_ID: String(run.jobId),
      MILLRACE_ATTEMPT: String(run.attempt),
      MILLRACE_FILES: paths.files,
      MILLRACE_OUT: paths.out,
    });
  } catch (err) {
    return { kind: 'failed', error: `cannot start the job: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (spawner && mask.length === 0 && spawner.usable()) {
    const startTime = Date.now();
    spawner.start(
      { command: launch.command, args: launch.args, cwd: paths.dir, stdout: paths.stdout, stderr: paths.stderr, env },
      { started: (pid) => on.started(pid, startTime), ended: on.ended },
    );
    return { kind: 'spawning' };
  }
  return forkAttempt(launch, env, paths, mask, on.ended);
}

/** The attempt's process forked by this process (the agent), its output masked through pipes when `mask` is set. */
function forkAttempt(
  launch: Launch,
  env: NodeJS.ProcessEnv,
  paths: WorkPaths,
  mask: readonly string[],
  onEnd: (end: ProcessEnd) => void,
): Spawned {
  let stdout: number | undefined;
  let stderr: number | undefined;
  try {
    stdout = openSync(paths.stdout, 'w', 0o644);
    stderr = openSync(paths.stderr, 'w', 0o644);
    const startTime = Date.now();
    const child = spawn(launch.command, launch.args, {
      cwd: paths.dir,
      env,
      detached: true,
      stdio: mask.length > 0 ? ['ignore', 'pipe', 'pipe'] : ['ignore', stdout, stderr],
    });
    const copies: MaskedCopy[] = [];
    if (mask.length > 0 && child.stdout && child.stderr) {
      // The copies own the fds from here on (they close them once the files are complete).
      copies.push(copyMasked(child.stdout, stdout, mask), copyMasked(child.stderr, stderr, mask));
      stdout = undefined;
      stderr = undefined;
    }
    let ended = false;
    const end = (e: ProcessEnd) => {
      if (ended) return;
      ended = true;
      if (copies.length === 0) {
        onEnd(e);
        return;
      }
      const complete = Promise.all(copies.map((c) => c.done));
      const grace = setTimeout(() => {
        for (const c of copies) c.cut();
      }, PIPE_GRACE_MS);
      void complete.then(() => {
        clearTimeout(grace);
        onEnd(e);
      });
    };
    if (child.pid === undefined) {
      child.once('error', (err) => {
        for (const c of copies) c.cut();
        end({
          endTime: Date.now(),
          returnCode: null,
          signal: null,
          error: `cannot start ${launch.command}: ${err.message}`,
        });
      });
      return { kind: 'failing' };
    }
    child.on('error', () => {
      // a failed kill of an already gone process; the exit event reports the end
    });
    child.once('exit', (code, signal) => end({ endTime: Date.now(), returnCode: code, signal }));
    return { kind: 'started', child, pid: child.pid, startTime };
  } catch (err) {
    return { kind: 'failed', error: `cannot start the job: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    if (stdout !== undefined) closeSync(stdout);
    if (stderr !== undefined) closeSync(stderr);
  }
}

/** TERM to the attempt's whole process group now, KILL to the group after the grace period; HTTP and SQL cancel. */
export function killGroup(a: Attempt, graceMs: number): void {
  if (a.cancel) {
    a.cancel();
    return;
  }
  const pid = a.pid;
  if (pid === undefined) return;
  signalGroup(pid, 'SIGTERM');
  if (a.killTimer) clearTimeout(a.killTimer);
  a.killTimer = setTimeout(() => {
    a.killTimer = undefined;
    signalGroup(pid, 'SIGKILL');
  }, graceMs);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}
