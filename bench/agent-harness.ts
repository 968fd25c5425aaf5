/**
 * What the job benchmarks share (B1, B2, B4, B6, B7, B10…): the local agent's pid and CPU affinity, waiting for a
 * quiet machine, the server's statistics file (MILLRACE_STATS_FILE: event-loop delay and RSS once a second), the
 * spawn anchor (bench/anchor-spawn.mjs), job submission over keep-alive HTTP, and read-only access to the jobs table.
 * Processes and the server launcher come from harness.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { JOB_STATUS_NAMES } from '../src/domain/job-status.ts';
import { launch, pinned, ROOT, type Serve, startServe, stop } from './harness.ts';
import { quantile } from './lib/report.ts';

// ---------------------------------------------------------------------------------------------------------------
// Waiting for a quiet machine: no other benchmark running and the 1-minute loadavg below a limit.

/** Other benchmarks that share this machine; none may run while we measure. */
export const OTHER_BENCHMARKS = 'bench/b1|bench/b5|bench/get-object';

/** This process and its ancestors (`npm run`'s shell names this benchmark too, and `bench/b1` matches b10, b11…). */
function selfAndAncestors(): Set<number> {
  const out = new Set<number>();
  for (let pid = process.pid; pid > 1 && !out.has(pid); ) {
    out.add(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return out;
}

function otherBenchmarks(): string[] {
  try {
    const out = execFileSync('pgrep', ['-af', OTHER_BENCHMARKS], { encoding: 'utf8' });
    const mine = selfAndAncestors();
    return out
      .trim()
      .split('\n')
      .filter((l) => l && !mine.has(Number.parseInt(l, 10)));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

export interface QuietWait {
  /** Seconds spent waiting. */
  waitedS: number;
  /** 1-minute loadavg when the wait ended. */
  loadavg1: number;
  /** What was waited for (empty when the machine was quiet at once). */
  waitedFor: string[];
}

/**
 * Waits until `pgrep -f OTHER_BENCHMARKS` finds nothing and the 1-minute loadavg is below `maxLoad`, printing what
 * it waits for (at most every 15 s). Gives up after `timeoutS` and measures anyway (the caller marks the rep).
 */
export async function waitForQuiet(label: string, maxLoad: number, timeoutS: number): Promise<QuietWait> {
  const t0 = performance.now();
  const waitedFor = new Set<string>();
  let lastPrint = -Infinity;
  for (;;) {
    const others = otherBenchmarks();
    const load1 = loadavg()[0] ?? 0;
    const reasons: string[] = [];
    if (others.length > 0) reasons.push(`other benchmark running (${others.map((o) => o.slice(0, 80)).join('; ')})`);
    if (load1 >= maxLoad) reasons.push(`loadavg1 ${load1.toFixed(2)} >= ${maxLoad}`);
    const waitedS = (performance.now() - t0) / 1000;
    if (reasons.length === 0 || waitedS > timeoutS) {
      if (waitedFor.size > 0 || reasons.length > 0)
        process.stdout.write(
          `  [${label}] ${reasons.length ? `GAVE UP waiting after ${waitedS.toFixed(0)} s: ${reasons.join(', ')}` : `quiet after ${waitedS.toFixed(0)} s (loadavg1 ${load1.toFixed(2)})`}\n`,
        );
      return { waitedS, loadavg1: load1, waitedFor: [...waitedFor] };
    }
    for (const r of reasons) waitedFor.add(r.replace(/ \d+\.\d+ >=/, ' >='));
    if (performance.now() - lastPrint > 15_000) {
      process.stdout.write(`  [${label}] waiting: ${reasons.join(', ')}\n`);
      lastPrint = performance.now();
    }
    await sleep(2000);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The local agent and the server's statistics file.

/** The local agent's pid from `<data>/agents/GLOBAL.Local/agent.pid`, once it is there and alive. */
export async function localAgentPid(dataDir: string, timeoutMs = 60_000): Promise<number> {
  const file = join(dataDir, 'agents', 'GLOBAL.Local', 'agent.pid');
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (existsSync(file)) {
      const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
      if (Number.isSafeInteger(pid) && existsSync(`/proc/${pid}`)) return pid;
    }
    if (performance.now() > deadline) throw new Error(`no live local agent (${file}) after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** `taskset -p PID`'s answer: the CPU affinity list of a process, e.g. "0". */
export function affinity(pid: number): string {
  try {
    const out = execFileSync('taskset', ['-cp', String(pid)], { encoding: 'utf8' });
    return out.trim().split(':').pop()?.trim() ?? '?';
  } catch {
    return '?';
  }
}

/** VmRSS of a process in bytes (NaN when gone). */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Samples VmRSS of `pid` every `everyMs`; `stop()` returns the largest value seen (bytes) and the sample count. */
export function sampleRss(pid: number, everyMs = 100): { stop(): { maxBytes: number; samples: number } } {
  let maxBytes = rssBytes(pid);
  let samples = 1;
  const timer = setInterval(() => {
    const v = rssBytes(pid);
    if (Number.isFinite(v)) {
      maxBytes = Math.max(maxBytes, v);
      samples++;
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { maxBytes, samples };
    },
  };
}

export interface StatsLine {
  time: number;
  rssBytes: number;
  eventLoopDelayP50Ms: number;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
}

/** The lines of the server's statistics file for the seconds that ended within [fromMs, toMs + 1000]. */
export function statsBetween(file: string | undefined, fromMs: number, toMs: number): StatsLine[] {
  if (!file || !existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as StatsLine)
    .filter((s) => s.time > fromMs && s.time <= toMs + 1000);
}

/** Event-loop delay over a run from the per-second lines: the worst second's p99, the median second's p99, the max. */
export function loopDelay(lines: StatsLine[]): {
  worstP99: number;
  medianP99: number;
  max: number;
  seconds: number;
  /** The p99 of each second, in order. */
  p99s: number[];
} {
  const p99s = lines.map((l) => l.eventLoopDelayP99Ms);
  return {
    worstP99: p99s.length ? Math.max(...p99s) : Number.NaN,
    medianP99: quantile(p99s, 0.5),
    max: lines.length ? Math.max(...lines.map((l) => l.eventLoopDelayMaxMs)) : Number.NaN,
    seconds: lines.length,
    p99s,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The spawn anchor, in its own small process.

export interface AnchorResult {
  n: number;
  concurrency: number;
  program: string;
  seconds: number;
  perSec: number;
  startMs: { p50: number; p99: number; max: number };
  exitMs: { p50: number; p99: number; max: number };
  failed: number;
  rssBytes: number;
}

/** Runs `node bench/anchor-spawn.mjs N C [program args…]` on core 0 (with `env` added) and returns its JSON line. */
export async function runSpawnAnchor(
  pin: boolean,
  n: number,
  concurrency: number,
  program: string[] = [],
  env?: NodeJS.ProcessEnv,
): Promise<AnchorResult> {
  const [cmd, args] = pinned(pin, 0, process.execPath, [
    join(ROOT, 'bench/anchor-spawn.mjs'),
    String(n),
    String(concurrency),
    ...program,
  ]);
  const proc = launch('anchor-spawn', cmd, args, {
    keepStdout: true,
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  const code = await proc.exited;
  const json = proc.stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !json.startsWith('{'))
    throw new Error(`anchor-spawn failed (exit ${code}):\n${proc.tail.join('\n')}`);
  const r = JSON.parse(json) as AnchorResult;
  if (r.failed > 0) throw new Error(`anchor-spawn: ${r.failed} of ${r.n} spawns failed`);
  return r;
}

// ---------------------------------------------------------------------------------------------------------------
// Submitting jobs.

export interface Submitter {
  /** POSTs `{base}/Job/<definition>` (a query may follow) with `body`; resolves with the answer's status and body. */
  submit(definition: string, body: Buffer): Promise<{ status: number; body: string }>;
  close(): void;
}

export function submitter(base: string, apiKey: string, maxSockets: number): Submitter {
  const agent = new Agent({ keepAlive: true, maxSockets });
  return {
    submit(definition, body) {
      const url = new URL(`${base}/Job/${definition}`);
      const send = (retry: boolean) =>
        new Promise<{ status: number; body: string }>((res, rej) => {
          const req = httpRequest(
            {
              host: url.hostname,
              port: url.port,
              path: `${url.pathname}${url.search}`,
              method: 'POST',
              agent,
              headers: {
                'X-API-Key': apiKey,
                'Content-Type': 'application/json',
                'Content-Length': String(body.length),
              },
            },
            (resp) => {
              const chunks: Buffer[] = [];
              resp.on('data', (c: Buffer) => chunks.push(c));
              resp.on('end', () => res({ status: resp.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
              resp.on('error', rej);
            },
          );
          // A kept-alive socket that idled past the server's keep-alive timeout (5 s, e.g. between two phases) can be
          // closed just as it is reused: the request never reached the server, so it is sent once more (as the
          // node:http documentation advises for req.reusedSocket).
          req.on('error', (err: NodeJS.ErrnoException) =>
            retry && req.reusedSocket && err.code === 'ECONNRESET' ? send(false).then(res, rej) : rej(err),
          );
          req.end(body);
        });
      return send(true);
    },
    close: () => agent.destroy(),
  };
}

export interface Submitted {
  /** performance.now() of the last answer. */
  lastAt: number;
  /** Answer time of each POST, ms. */
  latenciesMs: number[];
  /** The new jobs' ids, when asked for (parsing every answer costs the load generator). */
  ids: number[];
}

/**
 * POSTs `n` jobs of `definition`, `concurrency` in flight (each worker sends its next one when its answer is in);
 * every answer must be 201. A failure is also put in `opts.abort`, and a failure already there stops the workers, so
 * that a poller running beside them and the submits end together.
 */
export async function submitMany(
  http: Submitter,
  definition: string,
  body: Buffer,
  n: number,
  concurrency: number,
  opts: { abort?: { failed?: unknown }; ids?: boolean } = {},
): Promise<Submitted> {
  const abort = opts.abort ?? {};
  const out: Submitted = { lastAt: 0, latenciesMs: [], ids: [] };
  let next = 0;
  const worker = async () => {
    while (next < n && !abort.failed) {
      next++;
      const t = performance.now();
      const r = await http.submit(definition, body);
      out.lastAt = performance.now();
      out.latenciesMs.push(out.lastAt - t);
      if (r.status !== 201) throw new Error(`POST Job/${definition}: ${r.status} ${r.body.slice(0, 300)}`);
      if (opts.ids) out.ids.push((JSON.parse(r.body) as { jobId: number }).jobId);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  } catch (err) {
    abort.failed ??= err;
    throw err;
  }
  return out;
}

/** Creates `GLOBAL.<name>` as a BASH definition running `script`. */
export async function createBashDefinition(base: string, apiKey: string, name: string, script: string): Promise<void> {
  const r = await fetch(`${base}/JobDefinition/GLOBAL.${name}`, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ JobDefinitionType: 'BASH', Script: script }),
  });
  const text = await r.text();
  if (r.status !== 201 && r.status !== 200)
    throw new Error(`POST JobDefinition/GLOBAL.${name}: ${r.status} ${text.slice(0, 300)}`);
}

// ---------------------------------------------------------------------------------------------------------------
// The jobs table, read-only.

export interface JobRow {
  job_id: number;
  definition: string;
  status: string;
  creation_time: number;
  scheduled_start: number | null;
  run_start: number | null;
  run_end: number | null;
  modification_time: number;
}

/**
 * Jobs in any status but Completed, counted: like B1's count of graphile-worker's table, it falls to 0 as they
 * drain. The statuses are named, not `<> 'Completed'`, so that both databases can read index jobs_list_status.
 */
export const UNFINISHED_SQL = `select count(*) as n from jobs where status in (${JOB_STATUS_NAMES.filter(
  (s) => s !== 'Completed',
)
  .map((s) => `'${s}'`)
  .join(', ')})`;

export class JobsReader {
  private readonly db: BetterSqlite3.Database;
  private readonly countStmt: BetterSqlite3.Statement;
  private readonly rowsStmt: BetterSqlite3.Statement;
  private readonly statusStmt: BetterSqlite3.Statement;
  private unfinishedStmt: BetterSqlite3.Statement | undefined;

  constructor(dataDir: string) {
    this.db = new BetterSqlite3(join(dataDir, 'millrace.sqlite'), { readonly: true, fileMustExist: true });
    this.countStmt = this.db.prepare("select count(*) from jobs where status = 'Completed' and job_id > ?").pluck();
    this.rowsStmt = this.db.prepare(
      'select job_id, definition, status, creation_time, scheduled_start, run_start, run_end, modification_time ' +
        'from jobs where job_id > ? order by job_id',
    );
    this.statusStmt = this.db.prepare('select status, count(*) as n from jobs where job_id > ? group by status');
  }

  /** Completed jobs with an id above `afterId`. */
  completed(afterId = 0): number {
    return this.countStmt.get(afterId) as number;
  }

  /** Jobs not (yet) Completed (UNFINISHED_SQL). */
  unfinished(): number {
    this.unfinishedStmt ??= this.db.prepare(UNFINISHED_SQL).pluck();
    return this.unfinishedStmt.get() as number;
  }

  rows(afterId = 0): JobRow[] {
    return this.rowsStmt.all(afterId) as JobRow[];
  }

  statuses(afterId = 0): Record<string, number> {
    return Object.fromEntries(
      (this.statusStmt.all(afterId) as Array<{ status: string; n: number }>).map((r) => [r.status, r.n]),
    );
  }

  /** Final statuses with their return codes (`Completed 0`, `Killed -`…) of the jobs with an id above `afterId`. */
  outcomes(afterId = 0): Record<string, number> {
    const rows = this.db
      .prepare(
        'select status, return_code as rc, count(*) as n from jobs where job_id > ? group by status, return_code',
      )
      .all(afterId) as Array<{ status: string; rc: number | null; n: number }>;
    return Object.fromEntries(rows.map((r) => [`${r.status} ${r.rc ?? '-'}`, r.n]));
  }

  maxJobId(): number {
    return (this.db.prepare('select coalesce(max(job_id), 0) from jobs').pluck().get() as number) ?? 0;
  }

  close(): void {
    this.db.close();
  }
}

/** Polls until `done()`; resolves with performance.now() of the poll that saw it. */
export async function pollUntil(
  done: () => boolean,
  pollMs: number,
  timeoutS: number,
  what: () => string,
): Promise<number> {
  const deadline = performance.now() + timeoutS * 1000;
  for (;;) {
    if (done()) return performance.now();
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutS} s: ${what()}`);
    await sleep(pollMs);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A fresh server per repetition.

export interface JobServer {
  serve: Serve;
  dataDir: string;
  /** The local agent's pid: waited for, so that its start is not part of a measurement. */
  agentPid: number;
  reader: JobsReader;
  http: Submitter;
  /** Closes the client and the reader, stops the server (which writes its profile as it exits) and deletes its data. */
  close(): Promise<void>;
}

/**
 * `millrace serve` on `<work>/ours-<name>` with its statistics file, its local agent running, the BASH definition
 * GLOBAL.True (script `true`), a jobs reader and a keep-alive submitter with `concurrency` sockets.
 */
export async function startJobServer(o: {
  pin: boolean;
  work: string;
  name: string;
  apiKey: string;
  concurrency: number;
  nodeFlags?: string[];
  env?: Record<string, string>;
}): Promise<JobServer> {
  const dataDir = join(o.work, `ours-${o.name}`);
  const serve = await startServe({
    pin: o.pin,
    dataDir,
    apiKey: o.apiKey,
    statsFile: join(o.work, `stats-${o.name}.ndjson`),
    ...(o.nodeFlags ? { nodeFlags: o.nodeFlags } : {}),
    ...(o.env ? { env: o.env } : {}),
  });
  const agentPid = await localAgentPid(dataDir);
  await createBashDefinition(serve.base, o.apiKey, 'True', 'true');
  const reader = new JobsReader(dataDir);
  const http = submitter(serve.base, o.apiKey, o.concurrency);
  return {
    serve,
    dataDir,
    agentPid,
    reader,
    http,
    async close() {
      http.close();
      reader.close();
      await stop(serve.proc, o.nodeFlags?.length ? 30_000 : 10_000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
