/**
 * What the benchmarks share for running things (the method of bench/README.md): child processes in their own
 * process groups that are always cleaned up, pinning with taskset, /proc sampling, noisy repetitions, a
 * `millrace serve` launcher, and autocannon in its own pinned process. Options and reports live in lib/.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer as createNetServer } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DEFAULTS, interfacePaths } from '../src/config/config.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const JSON_BASE = interfacePaths(DEFAULTS).jsonBase;

// ---------------------------------------------------------------------------------------------------------------
// Child processes: each in its own process group, all killed on the way out whatever happens.

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Last lines of stdout and stderr, for error messages. */
  tail: string[];
  /** All of stdout when `keepStdout` was asked for. */
  stdout: string;
  exited: Promise<number | null>;
  exitCode: number | null | undefined;
  onLine: Array<(line: string) => void>;
}

const live = new Set<Proc>();
/** Temporary folders to delete on the way out (also after a signal). */
export const scratch = new Set<string>();
/** Synchronous clean-ups run on the way out (after the processes are killed), e.g. stopping a PG cluster. */
export const finalizers = new Map<string, () => void>();

export function launch(
  name: string,
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; keepStdout?: boolean } = {},
): Proc {
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (child.pid === undefined) throw new Error(`could not start ${name}: ${cmd} ${args.join(' ')}`);
  const proc: Proc = {
    name,
    child,
    pid: child.pid,
    tail: [],
    stdout: '',
    exitCode: undefined,
    onLine: [],
    exited: new Promise((res) => {
      child.once('error', () => res(null));
      child.once('exit', (code, signal) => res(code ?? (signal ? null : 0)));
    }),
  };
  void proc.exited.then((code) => {
    proc.exitCode = code;
    live.delete(proc);
  });
  live.add(proc);
  const reader = (stream: NodeJS.ReadableStream | null, isStdout: boolean) => {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      if (isStdout && opts.keepStdout) proc.stdout += chunk;
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        proc.tail.push(line);
        if (proc.tail.length > 40) proc.tail.shift();
        for (const f of proc.onLine) f(line);
      }
    });
  };
  reader(child.stdout, true);
  reader(child.stderr, false);
  return proc;
}

/** `taskset -c <cores> cmd args…` (taskset execs cmd, so the pid is the command's own). */
export function pinned(pin: boolean, cores: number | string, cmd: string, args: string[]): [string, string[]] {
  return pin ? ['taskset', ['-c', String(cores), cmd, ...args]] : [cmd, args];
}

/** Whether taskset exists and there are at least 2 CPUs; warns and returns false otherwise. */
export function canPin(): boolean {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
  } catch {
    process.stderr.write('warning: taskset missing; running unpinned\n');
    return false;
  }
  if (availableParallelism() < 2) {
    process.stderr.write('warning: fewer than 2 CPUs; running unpinned\n');
    return false;
  }
  return true;
}

/** Pins this process (all its threads) to `core`: the harness is then the load generator of that core. */
export function pinSelf(core: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' });
}

/** Every CPU (`0-N`), to give a child back the whole machine when the harness itself is pinned. */
export const ALL_CPUS = `0-${availableParallelism() - 1}`;

export function killGroup(proc: Proc, signal: NodeJS.Signals): void {
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // Already gone.
  }
}

/** SIGTERM to the process group, then SIGKILL after `graceMs`. */
export async function stop(proc: Proc, graceMs = 10_000): Promise<void> {
  if (proc.exitCode !== undefined) return;
  killGroup(proc, 'SIGTERM');
  const done = await Promise.race([proc.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) {
    killGroup(proc, 'SIGKILL');
    await proc.exited;
  }
}

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => stop(p, 5000)));
  runFinalizers();
}

function runFinalizers(): void {
  for (const [name, f] of [...finalizers]) {
    finalizers.delete(name);
    try {
      f();
    } catch (err) {
      process.stderr.write(`clean-up ${name} failed: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
}

/** Resolves with the first line matching `pick`; rejects when the process exits first or on timeout. */
export function waitForLine<T>(proc: Proc, pick: (line: string) => T | undefined, timeoutMs: number): Promise<T> {
  return new Promise<T>((res, rej) => {
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`${proc.name} not ready after ${timeoutMs} ms`)), timeoutMs);
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      rej(new Error(`${e.message}\n--- last output of ${proc.name} ---\n${proc.tail.join('\n')}`));
    };
    proc.onLine.push((line) => {
      if (settled) return;
      const v = pick(line);
      if (v !== undefined) {
        settled = true;
        clearTimeout(timer);
        res(v);
      }
    });
    void proc.exited.then((code) => fail(new Error(`${proc.name} exited (code ${code}) before it was ready`)));
  });
}

/**
 * Runs a benchmark's `main` (its result is the exit code) with the cleanup hooks installed; a failure is printed,
 * every started process stopped, and the exit code 1.
 */
export function runBenchmark(main: () => Promise<number>): void {
  installCleanup();
  main().then(
    (code) => {
      process.exitCode = code;
    },
    async (err: unknown) => {
      process.stderr.write(`\nbenchmark FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      await stopAll();
      process.exitCode = 1;
    },
  );
}

/** Ctrl-C or a kill of the harness still takes the servers and the load generators down. */
export function installCleanup(): void {
  let exiting = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => {
      if (exiting) return;
      exiting = true;
      process.stderr.write(`\n${signal}: stopping the benchmark processes\n`);
      void stopAll().finally(() => process.exit(130));
    });
  process.on('exit', () => {
    for (const p of live) killGroup(p, 'SIGKILL');
    runFinalizers();
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// /proc sampling: per-process CPU, per-core CPU, RSS.

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds of a process: user and system time, and those of its children it has reaped. */
export function processCpu(pid: number): { user: number; sys: number; children: number } {
  return cpuTimes(`/proc/${pid}/stat`);
}

/**
 * CPU seconds of a process's main thread (a Node process's event loop), user and system. The rest of the process's
 * time is its other threads': V8's helpers (the optimizing compiler, the garbage collector's parallel and concurrent
 * work) and libuv's pool.
 */
export function mainThreadCpuSeconds(pid: number): number {
  const c = cpuTimes(`/proc/${pid}/task/${pid}/stat`);
  return c.user + c.sys;
}

function cpuTimes(statFile: string): { user: number; sys: number; children: number } {
  try {
    const stat = readFileSync(statFile, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const t = (i: number) => (f[i] ?? Number.NaN) / CLK_TCK;
    return { user: t(11), sys: t(12), children: t(13) + t(14) };
  } catch {
    return { user: Number.NaN, sys: Number.NaN, children: Number.NaN };
  }
}

/**
 * An agent's CPU with its spawner's (src/agent/spawner.ts): the spawner's own time is the agent's, and the job
 * processes it reaped count as the agent's children, as they do when the agent forks them itself.
 */
export function agentCpu(agentPid: number): { user: number; sys: number; children: number } {
  const sum = processCpu(agentPid);
  for (const pid of childPids(agentPid)) {
    if (!commOf(pid)?.startsWith('python')) continue;
    const s = processCpu(pid);
    sum.user += s.user;
    sum.sys += s.sys;
    sum.children += s.children;
  }
  return sum;
}

/** A process's command name (`/proc/<pid>/comm`), or undefined once it has ended. */
export function commOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** utime + stime of a process, in seconds. */
export function processCpuSeconds(pid: number): number {
  const c = processCpu(pid);
  return c.user + c.sys;
}

/** CLOCK_MONOTONIC in µs: the clock of a .cpuprofile's timestamps on Linux, to cut a profile to a window. */
export const monoUs = (): number => Number(process.hrtime.bigint() / 1000n);

export interface CoreTimes {
  total: number;
  idle: number;
  steal: number;
}

/** Jiffies per line of /proc/stat: `cpu` (all cores), `cpu0`, `cpu1`, … */
export function coreTimes(): Map<string, CoreTimes> {
  const out = new Map<string, CoreTimes>();
  try {
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      if (!line.startsWith('cpu')) continue;
      const [name, ...rest] = line.trim().split(/\s+/);
      const v = rest.slice(0, 8).map(Number);
      const total = v.reduce((a, b) => a + b, 0);
      out.set(name as string, { total, idle: (v[3] ?? 0) + (v[4] ?? 0), steal: v[7] ?? 0 });
    }
  } catch {
    // Not Linux: no per-core figures.
  }
  return out;
}

/** Busy and steal per cent of each line between two samples. */
export function coreUse(
  a: Map<string, CoreTimes>,
  b: Map<string, CoreTimes>,
  name: string,
): { busy: number; steal: number } {
  const x = a.get(name);
  const y = b.get(name);
  if (!x || !y || y.total <= x.total) return { busy: Number.NaN, steal: Number.NaN };
  const dt = y.total - x.total;
  return { busy: (100 * (dt - (y.idle - x.idle))) / dt, steal: (100 * (y.steal - x.steal)) / dt };
}

/** Whole-machine busy % over one second: sampled before each repetition, while nothing of ours runs. */
export async function backgroundBusy(): Promise<number> {
  const b0 = coreTimes();
  await sleep(1000);
  return coreUse(b0, coreTimes(), 'cpu').busy;
}

export interface RepInfo {
  rep: number;
  loadavg1: number;
  /** Whole-machine busy % in the second before the repetition. */
  background: number;
  noisy: boolean;
}

/**
 * The usual method drops repetitions that start with loadavg > 1.5, but within one run the benchmark's own load lifts the loadavg;
 * so one second of whole-machine CPU is sampled before each repetition instead, while nothing of ours runs, and a
 * repetition that starts busier than `maxBackground` % is noisy: left out of the medians unless every one is.
 */
export class NoisyReps {
  readonly reps: RepInfo[] = [];
  private readonly maxBackground: number;
  constructor(maxBackground: number) {
    this.maxBackground = maxBackground;
  }

  async begin(rep: number): Promise<RepInfo> {
    const background = await backgroundBusy();
    const info = { rep, loadavg1: loadavg()[0] ?? Number.NaN, background, noisy: background > this.maxBackground };
    this.reps.push(info);
    return info;
  }

  /** The repetitions the medians use. */
  used(): number[] {
    const clean = this.reps.filter((r) => !r.noisy).map((r) => r.rep);
    return clean.length > 0 ? clean : this.reps.map((r) => r.rep);
  }

  /** The footnote under the table: '' when no repetition was noisy. */
  note(): string {
    if (!this.reps.some((r) => r.noisy)) return '';
    const rest = this.reps.some((r) => !r.noisy)
      ? 'left out of the medians'
      : 'every repetition was noisy, so all are used';
    return `* noisy: more than ${this.maxBackground} % background CPU just before the repetition; ${rest}\n`;
  }
}

/** VmRSS and VmHWM (peak) of a process, in MiB. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 };
  } catch {
    return { rssMiB: Number.NaN, peakMiB: Number.NaN };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Our server.

export interface Serve {
  proc: Proc;
  origin: string;
  /** The JSON interface's base URL. */
  base: string;
  dataDir: string;
  /** MILLRACE_STATS_FILE when asked for: the server writes its event-loop delay and RSS there once a second. */
  statsFile?: string;
  /** From spawn until the first answer, ms. */
  startupMs: number;
}

/** A TCP port of 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createNetServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => res(port));
    });
  });
}

export type ServeEntry = 'bin' | 'compiled' | 'loader';

/**
 * The node arguments that run `millrace` from a build: `compiled` is dist/cli/main.js (built first when stale),
 * `loader` the TypeScript sources through tsx (what `npm start` ran before the compiled build), `bin` bin/millrace.
 */
export function entryArgs(entry: ServeEntry): string[] {
  if (entry === 'loader') return ['--import', 'tsx', join(ROOT, 'src/cli/main.ts')];
  if (entry === 'bin') return [join(ROOT, 'bin/millrace')];
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--if-stale'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
  return [join(ROOT, 'dist/cli/main.js')];
}

/**
 * Starts `node [nodeFlags] bin/millrace serve --data DIR --port N [--database URL]` pinned to `core` (default 0, when
 * `pin`), with the admin API key of a first start, MILLRACE_LOG_LEVEL=warn (so nothing is logged in the measured
 * windows) and MILLRACE_STATS_FILE when `statsFile` is given; other MILLRACE_* variables of the environment are
 * dropped. Readiness is the first 200 answer to an authenticated GET (polled every 10 ms); `startupMs` runs from the
 * spawn until then. The server listens only after the engine has started.
 */
export async function startServe(opts: {
  pin: boolean;
  core?: number;
  dataDir: string;
  apiKey: string;
  database?: string;
  nodeFlags?: string[];
  /** Which build runs: bin/millrace (default), dist/ explicitly, or the sources through tsx. */
  entry?: ServeEntry;
  /** More `serve` options, e.g. `--no-metrics`. */
  serveArgs?: string[];
  statsFile?: string;
  /** More environment: MILLRACE_* settings (limits), or NODE_OPTIONS, which the local agent inherits. */
  env?: Record<string, string>;
}): Promise<Serve> {
  const port = await freePort();
  const args = [
    ...(opts.nodeFlags ?? []),
    ...entryArgs(opts.entry ?? 'bin'),
    'serve',
    ...(opts.serveArgs ?? []),
    '--data',
    opts.dataDir,
    '--port',
    String(port),
    ...(opts.database ? ['--database', opts.database] : []),
  ];
  const [cmd, full] = pinned(opts.pin, opts.core ?? 0, process.execPath, args);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('MILLRACE_')) delete env[k];
  Object.assign(env, opts.env ?? {}, {
    MILLRACE_ADMIN_API_KEY: opts.apiKey,
    MILLRACE_LOG_LEVEL: 'warn',
    ...(opts.statsFile ? { MILLRACE_STATS_FILE: opts.statsFile } : {}),
  });
  const t0 = performance.now();
  const proc = launch('millrace', cmd, full, { env });
  const origin = `http://127.0.0.1:${port}`;
  const base = `${origin}${JSON_BASE}`;
  const probe = `${base}/Queue/GLOBAL.System`;
  const deadline = t0 + 120_000;
  for (;;) {
    if (proc.exitCode !== undefined)
      throw new Error(`millrace exited (code ${proc.exitCode}) before it served\n${proc.tail.join('\n')}`);
    if (performance.now() > deadline) throw new Error(`millrace not serving after 120 s\n${proc.tail.join('\n')}`);
    const status = await fetch(probe, { headers: { 'X-API-Key': opts.apiKey } }).then(
      async (r) => {
        await r.arrayBuffer();
        return r.status;
      },
      () => 0,
    );
    if (status === 200) break;
    if (status !== 0) throw new Error(`millrace answered ${status} to GET ${probe}\n${proc.tail.join('\n')}`);
    await sleep(10);
  }
  return {
    proc,
    origin,
    base,
    dataDir: opts.dataDir,
    ...(opts.statsFile ? { statsFile: opts.statsFile } : {}),
    startupMs: performance.now() - t0,
  };
}

/** Submits one System_Sleep job (MilliSeconds 0) and waits until it is Completed: the model of a generated history. */
export async function submitModelJob(serve: Serve, apiKey: string): Promise<number> {
  const res = await fetch(`${serve.base}/Job/GLOBAL.System_Sleep`, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }),
  });
  const body = (await res.json()) as { jobId?: number };
  if (res.status !== 201 || typeof body.jobId !== 'number')
    throw new Error(`submit: ${res.status} ${JSON.stringify(body)}`);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const got = await fetch(`${serve.base}/Job/${body.jobId}`, { headers: { 'X-API-Key': apiKey } });
    const job = (await got.json()) as { Status?: string };
    if (job.Status === 'Completed') return body.jobId;
    if (Date.now() > deadline) throw new Error(`model job ${body.jobId} is ${job.Status} after 30 s`);
    await sleep(20);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Load generation: autocannon's CLI in its own process, pinned to core 1.

const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

export interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  latency: { p50: number; p90: number; p99: number; max: number; average: number };
  requests: { average: number; total: number };
  /** Added by the harness: CLOCK_MONOTONIC µs around the run (to cut a profile to it). */
  startUs: number;
  endUs: number;
}

export async function autocannon(
  pin: boolean,
  url: string,
  headers: Record<string, string>,
  seconds: number,
  connections: number,
): Promise<AutocannonResult> {
  const args = [AUTOCANNON, '-c', String(connections), '-p', '1', '-d', String(seconds), '-n', '--json'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  args.push(url);
  const [cmd, full] = pinned(pin, 1, process.execPath, args);
  const startUs = monoUs();
  const proc = launch('autocannon', cmd, full, { keepStdout: true });
  const code = await proc.exited;
  const endUs = monoUs();
  const json = proc.stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !json.startsWith('{'))
    throw new Error(`autocannon failed (exit ${code}):\n${proc.tail.join('\n')}`);
  return { ...(JSON.parse(json) as AutocannonResult), startUs, endUs };
}
