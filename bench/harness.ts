/**
 * Shared pieces of the B1 and B5 benchmarks (the method of perf-reliability.md §6, as in get-object.ts): child
 * processes in their own process groups that are always cleaned up, pinning with taskset, /proc sampling, a
 * `millrace serve` launcher, autocannon in its own pinned process, and report formatting.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** How a run was started, for its `--json` result file. */
export interface RunInfo {
  command: string;
  startedAt: Date;
  loadStart: number[];
}

/** Writes a `--json` result file (when asked): the run's envelope, then the benchmark's own results. */
export function writeResults(
  path: string | undefined,
  run: RunInfo,
  options: unknown,
  results: Record<string, unknown>,
): void {
  if (!path) return;
  const envelope = {
    startedAt: run.startedAt.toISOString(),
    command: run.command,
    node: process.version,
    options,
    loadavgStart: run.loadStart,
    loadavgEnd: loadavg(),
  };
  writeFileSync(path, `${JSON.stringify({ ...envelope, ...results }, null, 2)}\n`);
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

/** utime + stime of a process, in seconds. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

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
  /** From spawn until the "Millrace serving" log line, ms. */
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
 * Starts `node bin/millrace serve --data DIR --port N [--database URL]` pinned to `core` (when `pin`), with the admin
 * API key of a first start and MILLRACE_LOG_LEVEL=warn (so nothing is logged in the measured windows). At warn the
 * "serving" line is not printed, so readiness is the first 200 answer to an authenticated GET (polled every
 * 10 ms); `startupMs` runs from the spawn until then. The server listens only after the engine has started.
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
  /** Further MILLRACE_* settings (limits) for this server. */
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
  const env: NodeJS.ProcessEnv = { ...process.env, MILLRACE_ADMIN_API_KEY: opts.apiKey, MILLRACE_LOG_LEVEL: 'warn' };
  for (const k of Object.keys(env))
    if (k.startsWith('MILLRACE_') && k !== 'MILLRACE_ADMIN_API_KEY' && k !== 'MILLRACE_LOG_LEVEL') delete env[k];
  Object.assign(env, opts.env ?? {});
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
  return { proc, origin, base, startupMs: performance.now() - t0 };
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
  const proc = launch('autocannon', cmd, full, { keepStdout: true });
  const code = await proc.exited;
  const json = proc.stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !json.startsWith('{'))
    throw new Error(`autocannon failed (exit ${code}):\n${proc.tail.join('\n')}`);
  return JSON.parse(json) as AutocannonResult;
}

// ---------------------------------------------------------------------------------------------------------------
// Report.

/** A numeric option from its flag, else from the environment variable `env`, else `fallback`; at least `min`. */
export function numberOption(flag: string | undefined, env: string | undefined, fallback: number, min: number): number {
  const text = flag ?? (env ? process.env[env] : undefined);
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min) throw new Error(`invalid value "${text}": expected a number >= ${min}`);
  return n;
}

export const median = (xs: number[]): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** The q-quantile (0..1) of `xs` by nearest rank. */
export const quantile = (xs: number[], q: number): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
};

export const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
export const fixed = (n: number, d = 1): string => (Number.isFinite(n) ? n.toFixed(d) : '-');
export const pct = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(1)} %` : '-');

export function row(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
}

/** `npm run <script> -- <args>` as this run was started, for the report. */
export function commandLine(script: string): string {
  return `npm run ${script}${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
}
