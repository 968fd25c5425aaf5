/**
 * Benchmark B1 (perf-reliability.md §6): submit → complete throughput of in-server no-op jobs, against
 * graphile-worker draining the same number of no-op jobs on local PostgreSQL, both measured in the same run.
 *
 *   npm run bench:b1                                  # SQLite; 2 reps × 20,000 jobs; graphile-worker anchor
 *   npm run bench:b1 -- --pg auto                     # ours on PostgreSQL too (a throwaway cluster)
 *   npm run bench:b1 -- --pg postgres://u@h:5432/db   # ours and the anchor on an existing server
 *   npm run bench:b1 -- --reps 1 --profile            # plus a CPU profile of our server under the same load
 *
 * Ours: `millrace serve` on core 0 (`taskset -c 0`), a fresh data folder (or database) per repetition. The
 * harness pins itself to core 1 and is the load generator: N × `POST …/Job/GLOBAL.System_Sleep` with
 * MilliSeconds 0 over keep-alive HTTP at concurrency C, while it counts Completed jobs in the database every
 * 50 ms (better-sqlite3 read-only, or `pg`). Submit req/s = N ÷ (first submit → last answer); drain jobs/s =
 * N ÷ (first submit → the poll that sees all N Completed).
 * Anchor: graphile-worker 0.17.3, default settings, concurrency 10, one no-op task, in its own process on core 0;
 * the harness adds the N jobs with `addJobs` in batches of 1000 and polls its jobs table until it is empty.
 * Ours first drains --warmup-jobs untimed jobs; the anchor none by default (see --anchor-warmup-jobs).
 * Repetitions are interleaved ours, anchor, ours…; medians and the ratio ours ÷ anchor are reported. Exit status: 0 done, 1 failure, 2 target missed with --check.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { Logger, makeWorkerUtils } from 'graphile-worker';
import pg from 'pg';
import { type CpuProfile, formatProfileSummary, summarizeCpuProfile } from './cpuprofile-summary.ts';
import {
  ALL_CPUS,
  backgroundBusy,
  canPin,
  commandLine,
  coreTimes,
  coreUse,
  finalizers,
  fixed,
  int,
  launch,
  median,
  memoryOf,
  numberOption,
  pct,
  pinned,
  pinSelf,
  processCpuSeconds,
  quantile,
  ROOT,
  row,
  runBenchmark,
  type Serve,
  scratch,
  startServe,
  stop,
  stopAll,
  waitForLine,
  writeResults,
} from './harness.ts';

const TARGET_SQLITE = 2000;
const TARGET_PG = 1000;
const DEFINITION = 'GLOBAL.System_Sleep';
const BODY = Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }));
const BATCH = 1000;

// ---------------------------------------------------------------------------------------------------------------
// Options

interface Options {
  jobs: number;
  concurrency: number;
  reps: number;
  warmupJobs: number;
  anchorWarmupJobs: number;
  anchorConcurrency: number;
  /** `auto` (a throwaway cluster) or a postgres:// URL: ours runs on PostgreSQL. */
  pg?: string;
  /** The anchor's PostgreSQL server (default: --pg's URL, else a throwaway cluster). */
  anchorPg?: string;
  anchor: boolean;
  pin: boolean;
  maxBackground: number;
  pollMs: number;
  timeoutS: number;
  profile: boolean;
  profileDir?: string;
  json?: string;
  check: boolean;
  /** Builds of ours measured beside it (issue 14): `loader` (sources through tsx), `no-metrics` (compiled, --no-metrics). */
  builds: Array<'loader' | 'no-metrics'>;
}

const USAGE = `usage: npm run bench:b1 -- [options]
  --jobs N               jobs per measurement (env BENCH_JOBS, default 20000)
  --concurrency C        HTTP submits in flight (env BENCH_CONCURRENCY, default 50)
  --reps N               repetitions of ours and the anchor, interleaved (env BENCH_REPS, default 2)
  --warmup-jobs N        untimed jobs our server drains first in every repetition (default 1000; 0 = none)
  --anchor-warmup-jobs N the same for graphile-worker (default 0, as in perf-reliability.md §2(e): after a
                         drained warm-up the next 20,000 drained about 5 times slower here, with PostgreSQL's
                         backends CPU-bound, most likely on a get_job plan made while the table was tiny)
  --pg URL|auto          run ours on PostgreSQL: a server URL (a database is created and dropped per repetition)
                         or "auto" for a throwaway cluster (scripts/pg-cluster.sh)
  --anchor-pg URL        PostgreSQL server for graphile-worker (default: --pg's URL, else a throwaway cluster)
  --anchor-concurrency N graphile-worker concurrency (default 10)
  --no-anchor            measure ours only
  --poll-ms MS           how often Completed jobs are counted (default 50)
  --timeout S            give up on a drain after S seconds (default 300)
  --max-background P     a repetition is noisy when other processes use more than P % of the machine just before
                         it (env BENCH_MAX_BACKGROUND, default 25)
  --no-pin               do not use taskset (results are then not comparable with pinned ones)
  --profile              afterwards, run ours once more under node --cpu-prof and summarise the profile
  --profile-dir DIR      where the .cpuprofile goes (default: a new folder in the temp dir, kept)
  --json FILE            also write every measurement as JSON
  --check                exit with status 2 when the target is missed (SQLite >= ${TARGET_SQLITE} jobs/s, PG >= ${TARGET_PG})
  --builds LIST          also measure these builds of ours, interleaved: loader (the sources through tsx),
                         no-metrics (compiled, serve --no-metrics); ours is then dist/ explicitly`;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      jobs: { type: 'string' },
      concurrency: { type: 'string' },
      reps: { type: 'string' },
      'warmup-jobs': { type: 'string' },
      'anchor-warmup-jobs': { type: 'string' },
      'anchor-concurrency': { type: 'string' },
      pg: { type: 'string' },
      'anchor-pg': { type: 'string' },
      'no-anchor': { type: 'boolean', default: false },
      'poll-ms': { type: 'string' },
      timeout: { type: 'string' },
      'max-background': { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'profile-dir': { type: 'string' },
      json: { type: 'string' },
      check: { type: 'boolean', default: false },
      builds: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const num = numberOption;
  const pgUrl = (v: string | undefined, flag: string) => {
    if (v !== undefined && v !== 'auto' && !/^postgres(ql)?:\/\//.test(v))
      throw new Error(`${flag}: expected a postgres:// URL${flag === '--pg' ? ' or "auto"' : ''}, got "${v}"`);
    return v;
  };
  const pgOpt = pgUrl(values.pg, '--pg');
  const anchorPg = pgUrl(values['anchor-pg'], '--anchor-pg');
  return {
    jobs: Math.floor(num(values.jobs, 'BENCH_JOBS', 20_000, 1)),
    concurrency: Math.floor(num(values.concurrency, 'BENCH_CONCURRENCY', 50, 1)),
    reps: Math.floor(num(values.reps, 'BENCH_REPS', 2, 1)),
    warmupJobs: Math.floor(num(values['warmup-jobs'], undefined, 1000, 0)),
    anchorWarmupJobs: Math.floor(num(values['anchor-warmup-jobs'], undefined, 0, 0)),
    anchorConcurrency: Math.floor(num(values['anchor-concurrency'], undefined, 10, 1)),
    ...(pgOpt !== undefined ? { pg: pgOpt } : {}),
    ...(anchorPg !== undefined ? { anchorPg } : {}),
    anchor: !values['no-anchor'],
    pin: !values['no-pin'],
    maxBackground: num(values['max-background'], 'BENCH_MAX_BACKGROUND', 25, 0),
    pollMs: num(values['poll-ms'], undefined, 50, 1),
    timeoutS: num(values.timeout, undefined, 300, 1),
    profile: values.profile || values['profile-dir'] !== undefined,
    ...(values['profile-dir'] !== undefined ? { profileDir: resolve(values['profile-dir']) } : {}),
    ...(values.json !== undefined ? { json: resolve(values.json) } : {}),
    check: values.check,
    builds: (values.builds ?? '')
      .split(',')
      .filter((b) => b !== '')
      .map((b) => {
        if (b !== 'loader' && b !== 'no-metrics') throw new Error(`--builds: loader or no-metrics, got "${b}"`);
        return b;
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL: a throwaway cluster, and one database per measurement.

function startCluster(pin: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'millrace-b1-pg-'));
  const script = join(ROOT, 'scripts/pg-cluster.sh');
  finalizers.set('pg-cluster', () => execFileSync('bash', [script, 'stop', dir], { stdio: 'ignore' }));
  // The harness is pinned to core 1; the cluster gets every core back (children inherit the affinity).
  const [cmd, args] = pinned(pin, ALL_CPUS, 'bash', [script, 'start', dir]);
  const out = execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const url = out.trim().split('\n').pop() ?? '';
  if (!url.startsWith('postgres://')) throw new Error(`pg-cluster.sh printed no URL: ${out}`);
  return url;
}

const withDatabase = (url: string, name: string): string => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function createDatabase(adminUrl: string, name: string): Promise<string> {
  await adminQuery(adminUrl, `drop database if exists "${name}" with (force)`);
  await adminQuery(adminUrl, `create database "${name}"`);
  return withDatabase(adminUrl, name);
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await adminQuery(adminUrl, `drop database if exists "${name}" with (force)`).catch((err: unknown) => {
    process.stderr.write(`warning: could not drop database ${name}: ${String(err)}\n`);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Counting finished jobs: a cheap query on the database, every --poll-ms.

interface Counter {
  /** Jobs of ours in status Completed, or graphile-worker jobs still in its table. */
  count(): Promise<number>;
  /** Jobs by status at the end (ours), for the consistency check. */
  statuses(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

function sqliteCounter(file: string): Counter {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  const completed = db.prepare("select count(*) from jobs where status = 'Completed'").pluck();
  const byStatus = db.prepare('select status, count(*) as n from jobs group by status');
  return {
    count: async () => completed.get() as number,
    statuses: async () =>
      Object.fromEntries((byStatus.all() as Array<{ status: string; n: number }>).map((r) => [r.status, r.n])),
    close: async () => {
      db.close();
    },
  };
}

async function pgCounter(url: string, countSql: string): Promise<Counter> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    count: async () => Number((await client.query<{ n: string }>(countSql)).rows[0]?.n ?? 0),
    statuses: async () => {
      const r = await client.query<{ status: string; n: string }>(
        'select status, count(*) as n from jobs group by status',
      );
      return Object.fromEntries(r.rows.map((x) => [x.status, Number(x.n)]));
    },
    close: () => client.end(),
  };
}

/** Resolves with performance.now() of the poll that first sees `done(count)`; rejects after `timeoutS`. */
async function waitUntil(
  counter: Counter,
  done: (n: number) => boolean,
  pollMs: number,
  timeoutS: number,
  abort: { failed?: unknown },
): Promise<number> {
  const deadline = performance.now() + timeoutS * 1000;
  for (;;) {
    if (abort.failed) throw abort.failed;
    const n = await counter.count();
    const now = performance.now();
    if (done(n)) return now;
    if (now > deadline) throw new Error(`not drained after ${timeoutS} s (count ${n})`);
    await sleep(pollMs);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The load generator: N POSTs over keep-alive HTTP, C in flight.

function post(url: URL, headers: Record<string, string>, agent: Agent): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers },
      (resp) => {
        const chunks: Buffer[] = [];
        resp.on('data', (c: Buffer) => chunks.push(c));
        resp.on('end', () => res({ status: resp.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        resp.on('error', rej);
      },
    );
    req.on('error', rej);
    req.end(BODY);
  });
}

interface Submitted {
  /** performance.now() of the last answer. */
  lastAt: number;
  latenciesMs: number[];
}

async function submitJobs(
  base: string,
  apiKey: string,
  n: number,
  concurrency: number,
  abort: { failed?: unknown },
): Promise<Submitted> {
  const url = new URL(`${base}/Job/${DEFINITION}`);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const headers = {
    'X-API-Key': apiKey,
    'Content-Type': 'application/json',
    'Content-Length': String(BODY.length),
  };
  const latenciesMs: number[] = [];
  let next = 0;
  let lastAt = 0;
  const worker = async () => {
    while (next < n && !abort.failed) {
      next++;
      const t = performance.now();
      const r = await post(url, headers, agent);
      lastAt = performance.now();
      latenciesMs.push(lastAt - t);
      if (r.status !== 201) throw new Error(`POST ${url.pathname}: ${r.status} ${r.body.slice(0, 300)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  } catch (err) {
    abort.failed ??= err;
    throw err;
  } finally {
    agent.destroy();
  }
  return { lastAt, latenciesMs };
}

// ---------------------------------------------------------------------------------------------------------------
// One measurement of each target.

type Target = 'ours' | 'graphile' | 'loader' | 'no-metrics';

interface Measurement {
  target: Target;
  rep: number;
  jobs: number;
  /** Ours: POST req/s; anchor: jobs added per second (addJobs of 1000). */
  submitPerSec: number;
  /** Submit latency per request (ours) or per batch of 1000 (anchor), ms. */
  submitP50: number;
  submitP99: number;
  drainPerSec: number;
  drainS: number;
  /** From the last submit answer until the last job was seen done, s. */
  tailS: number;
  /** CPU of the server (ours) or of the worker process (anchor), % of one core, over the drain. */
  procCpu: number;
  procCpuUsPerJob: number;
  core0Busy: number;
  core1Busy: number;
  steal: number;
  rssMiB: number;
  statuses?: Record<string, number>;
  /** CLOCK_MONOTONIC µs around the drain (for cutting the profile). */
  startUs: number;
  endUs: number;
}

const monoUs = () => Number(process.hrtime.bigint() / 1000n);

interface OursSetup {
  opts: Options;
  work: string;
  apiKey: string;
  /** PostgreSQL server for ours (admin URL), when ours runs on PostgreSQL. */
  pgAdmin?: string;
}

async function measureOurs(
  s: OursSetup,
  rep: number,
  nodeFlags: string[] = [],
  build: 'ours' | 'loader' | 'no-metrics' = 'ours',
): Promise<Measurement> {
  const { opts } = s;
  const dataDir = join(s.work, `${build}-${rep}`);
  const dbName = `millrace_b1_${process.pid}_${rep}_${build.replace('-', '_')}`;
  const database = s.pgAdmin ? await createDatabase(s.pgAdmin, dbName) : undefined;
  let serve: Serve | undefined;
  let counter: Counter | undefined;
  try {
    // With --database the server does not create its data folder, but still keeps its secret key there.
    mkdirSync(dataDir, { recursive: true });
    serve = await startServe({
      pin: opts.pin,
      dataDir,
      apiKey: s.apiKey,
      ...(database ? { database } : {}),
      nodeFlags,
      // With --builds, ours is dist/ named explicitly (not bin/millrace, which may fall back to the sources).
      ...(opts.builds.length > 0 ? { entry: build === 'loader' ? ('loader' as const) : ('compiled' as const) } : {}),
      ...(build === 'no-metrics' ? { serveArgs: ['--no-metrics'] } : {}),
    });
    counter = database
      ? await pgCounter(database, "select count(*) as n from jobs where status = 'Completed'")
      : sqliteCounter(join(dataDir, 'millrace.sqlite'));
    const c = counter;
    const abort: { failed?: unknown } = {};
    if (opts.warmupJobs > 0) {
      await submitJobs(serve.base, s.apiKey, opts.warmupJobs, opts.concurrency, abort);
      await waitUntil(c, (n) => n >= opts.warmupJobs, opts.pollMs, opts.timeoutS, abort);
    }
    const target = opts.warmupJobs + opts.jobs;
    const cpu0 = processCpuSeconds(serve.proc.pid);
    const cores0 = coreTimes();
    const startUs = monoUs();
    const t0 = performance.now();
    const [sub, t1] = await Promise.all([
      submitJobs(serve.base, s.apiKey, opts.jobs, opts.concurrency, abort),
      waitUntil(c, (n) => n >= target, opts.pollMs, opts.timeoutS, abort),
    ]);
    const endUs = monoUs();
    const cpu1 = processCpuSeconds(serve.proc.pid);
    const cores1 = coreTimes();
    const statuses = await c.statuses();
    if (statuses.Completed !== target || Object.keys(statuses).length !== 1)
      throw new Error(
        `rep ${rep}: expected ${target} Completed jobs and nothing else, found ${JSON.stringify(statuses)}`,
      );
    const drainS = (t1 - t0) / 1000;
    return {
      target: build,
      rep,
      jobs: opts.jobs,
      submitPerSec: opts.jobs / ((sub.lastAt - t0) / 1000),
      submitP50: quantile(sub.latenciesMs, 0.5),
      submitP99: quantile(sub.latenciesMs, 0.99),
      drainPerSec: opts.jobs / drainS,
      drainS,
      tailS: (t1 - sub.lastAt) / 1000,
      procCpu: (100 * (cpu1 - cpu0)) / drainS,
      procCpuUsPerJob: (1e6 * (cpu1 - cpu0)) / opts.jobs,
      core0Busy: coreUse(cores0, cores1, 'cpu0').busy,
      core1Busy: coreUse(cores0, cores1, 'cpu1').busy,
      steal: coreUse(cores0, cores1, 'cpu').steal,
      rssMiB: memoryOf(serve.proc.pid).rssMiB,
      statuses,
      startUs,
      endUs,
    };
  } finally {
    await counter?.close();
    if (serve) await stop(serve.proc, nodeFlags.length > 0 ? 30_000 : 10_000);
    rmSync(dataDir, { recursive: true, force: true });
    if (s.pgAdmin) await dropDatabase(s.pgAdmin, dbName);
  }
}

const quietLogger = new Logger(() => (level, message) => {
  if (level === 'error') process.stderr.write(`graphile-worker (harness) error: ${message}\n`);
});

async function measureGraphile(opts: Options, adminUrl: string, rep: number): Promise<Measurement> {
  const dbName = `b1_gw_${process.pid}_${rep}`;
  const url = await createDatabase(adminUrl, dbName);
  const [cmd, args] = pinned(opts.pin, 0, process.execPath, [
    join(ROOT, 'bench/anchor-graphile.mjs'),
    url,
    String(opts.anchorConcurrency),
  ]);
  const proc = launch('graphile-worker', cmd, args);
  let ran: number | undefined;
  proc.onLine.push((line) => {
    const m = /^\{"ran":(\d+)\}$/.exec(line);
    if (m) ran = Number(m[1]);
  });
  let utils: Awaited<ReturnType<typeof makeWorkerUtils>> | undefined;
  let counter: Counter | undefined;
  try {
    await waitForLine(proc, (line) => (line.includes('"ready":true') ? true : undefined), 60_000);
    utils = await makeWorkerUtils({ connectionString: url, logger: quietLogger });
    const u = utils;
    counter = await pgCounter(url, 'select count(*) as n from graphile_worker._private_jobs');
    const c = counter;
    const abort: { failed?: unknown } = {};
    const add = async (n: number, latencies: number[]) => {
      for (let done = 0; done < n; done += BATCH) {
        const specs = Array.from({ length: Math.min(BATCH, n - done) }, () => ({ identifier: 'noop', payload: {} }));
        const t = performance.now();
        await u.addJobs(specs);
        latencies.push(performance.now() - t);
      }
      return performance.now();
    };
    if (opts.anchorWarmupJobs > 0) {
      await add(opts.anchorWarmupJobs, []);
      await waitUntil(c, (n) => n === 0, opts.pollMs, opts.timeoutS, abort);
    }
    const latencies: number[] = [];
    const cpu0 = processCpuSeconds(proc.pid);
    const cores0 = coreTimes();
    const startUs = monoUs();
    const t0 = performance.now();
    const addedAt = await add(opts.jobs, latencies);
    const t1 = await waitUntil(c, (n) => n === 0, opts.pollMs, opts.timeoutS, abort);
    const endUs = monoUs();
    const cpu1 = processCpuSeconds(proc.pid);
    const cores1 = coreTimes();
    const rssMiB = memoryOf(proc.pid).rssMiB;
    await stop(proc);
    const expected = opts.anchorWarmupJobs + opts.jobs;
    if (ran !== expected) throw new Error(`graphile-worker ran ${ran ?? '?'} tasks, expected ${expected}`);
    const drainS = (t1 - t0) / 1000;
    return {
      target: 'graphile',
      rep,
      jobs: opts.jobs,
      submitPerSec: opts.jobs / ((addedAt - t0) / 1000),
      submitP50: quantile(latencies, 0.5),
      submitP99: quantile(latencies, 0.99),
      drainPerSec: opts.jobs / drainS,
      drainS,
      tailS: (t1 - addedAt) / 1000,
      procCpu: (100 * (cpu1 - cpu0)) / drainS,
      procCpuUsPerJob: (1e6 * (cpu1 - cpu0)) / opts.jobs,
      core0Busy: coreUse(cores0, cores1, 'cpu0').busy,
      core1Busy: coreUse(cores0, cores1, 'cpu1').busy,
      steal: coreUse(cores0, cores1, 'cpu').steal,
      rssMiB,
      startUs,
      endUs,
    };
  } finally {
    await counter?.close();
    await utils?.release();
    await stop(proc);
    await dropDatabase(adminUrl, dbName);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Main

interface RepInfo {
  rep: number;
  loadavg1: number;
  background: number;
  noisy: boolean;
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const command = commandLine('bench:b1');
  const cpus = availableParallelism(); // before pinning: it counts the CPUs this process may use
  if (opts.pin) opts.pin = canPin();
  if (opts.pin) pinSelf(1);
  const work = mkdtempSync(join(tmpdir(), 'millrace-b1-'));
  scratch.add(work);
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const startedAt = new Date();
  const loadStart = loadavg();
  const store = opts.pg ? 'PostgreSQL' : 'SQLite';
  try {
    process.stdout.write(
      `Millrace B1 no-op job throughput, ${startedAt.toISOString()}, node ${process.version}, ` +
        `${cpus} CPUs, loadavg ${loadStart.map((x) => x.toFixed(2)).join(' ')}\n` +
        `command: ${command}\n`,
    );
    let cluster: string | undefined;
    const needCluster = opts.pg === 'auto' || (opts.anchor && !opts.anchorPg && (!opts.pg || opts.pg === 'auto'));
    if (needCluster) {
      const t = performance.now();
      cluster = startCluster(opts.pin);
      process.stdout.write(
        `PostgreSQL: throwaway cluster (scripts/pg-cluster.sh: fsync=off, synchronous_commit=off) at ${cluster}, ` +
          `started in ${fixed((performance.now() - t) / 1000)} s, on all cores\n`,
      );
    }
    const pgAdmin = opts.pg === 'auto' ? cluster : opts.pg;
    const anchorAdmin = opts.anchorPg ?? (opts.pg && opts.pg !== 'auto' ? opts.pg : cluster);
    const pgVersion = anchorAdmin ?? pgAdmin;
    if (pgVersion) {
      const client = new pg.Client({ connectionString: pgVersion });
      await client.connect();
      const v = (await client.query<{ server_version: string }>('show server_version')).rows[0]?.server_version;
      await client.end();
      process.stdout.write(`PostgreSQL server version ${v}\n`);
    }
    const gwVersion = (
      JSON.parse(readFileSync(join(ROOT, 'node_modules/graphile-worker/package.json'), 'utf8')) as { version: string }
    ).version;
    process.stdout.write(
      `ours:    millrace serve (${store}), ${int(opts.jobs)} × POST /Job/${DEFINITION} (MilliSeconds 0), ` +
        `${opts.concurrency} in flight over keep-alive HTTP; Completed counted every ${opts.pollMs} ms\n` +
        (opts.anchor
          ? `anchor:  graphile-worker ${gwVersion}, defaults, concurrency ${opts.anchorConcurrency}, no-op task; ` +
            `${int(opts.jobs)} jobs added with addJobs in ${BATCH}s\n`
          : '') +
        `warm-up: ${int(opts.warmupJobs)} jobs for ours, ${int(opts.anchorWarmupJobs)} for the anchor (untimed); ` +
        `${opts.reps} rep(s), interleaved; ` +
        (opts.pin ? 'server / worker on core 0, load generator (this process) on core 1\n\n' : 'UNPINNED\n\n'),
    );

    const all: Measurement[] = [];
    const reps: RepInfo[] = [];
    const widths = [14, 5, 4, 8, 6, 6, 8, 6, 6, 8, 7, 6, 6, 6];
    process.stdout.write(
      `${row(['rep target', 'load1', 'bg%', 'submit/s', 'p50', 'p99', 'drain/s', 'drain', 'tail', 'proc CPU', 'µs/job', 'core0', 'core1', 'steal'], widths)}\n`,
    );
    const setup: OursSetup = { opts, work, apiKey, ...(pgAdmin ? { pgAdmin } : {}) };
    for (let rep = 1; rep <= opts.reps; rep++) {
      const background = await backgroundBusy();
      const info: RepInfo = {
        rep,
        loadavg1: loadavg()[0] ?? Number.NaN,
        background,
        noisy: background > opts.maxBackground,
      };
      reps.push(info);
      const targets: Array<() => Promise<Measurement>> = [() => measureOurs(setup, rep)];
      for (const build of opts.builds) targets.push(() => measureOurs(setup, rep, [], build));
      if (opts.anchor && anchorAdmin) targets.push(() => measureGraphile(opts, anchorAdmin, rep));
      for (const run of targets) {
        const m = await run();
        all.push(m);
        process.stdout.write(
          `${row(
            [
              `${rep} ${m.target}${info.noisy ? ' *' : ''}`,
              fixed(info.loadavg1, 2),
              fixed(info.background, 0),
              int(m.submitPerSec),
              fixed(m.submitP50, 1),
              fixed(m.submitP99, 1),
              int(m.drainPerSec),
              `${fixed(m.drainS, 2)}s`,
              `${fixed(m.tailS, 2)}s`,
              `${fixed(m.procCpu, 0)}%`,
              fixed(m.procCpuUsPerJob, 0),
              `${fixed(m.core0Busy, 0)}%`,
              `${fixed(m.core1Busy, 0)}%`,
              `${fixed(m.steal, 1)}%`,
            ],
            widths,
          )}\n`,
        );
      }
    }

    const clean = reps.filter((r) => !r.noisy).map((r) => r.rep);
    const usedReps = clean.length > 0 ? clean : reps.map((r) => r.rep);
    const stats = (t: Target) => {
      const ms = all.filter((m) => m.target === t && usedReps.includes(m.rep));
      return {
        submitPerSec: median(ms.map((m) => m.submitPerSec)),
        submitP50: median(ms.map((m) => m.submitP50)),
        submitP99: median(ms.map((m) => m.submitP99)),
        drainPerSec: median(ms.map((m) => m.drainPerSec)),
        procCpu: median(ms.map((m) => m.procCpu)),
        procCpuUsPerJob: median(ms.map((m) => m.procCpuUsPerJob)),
        rssMiB: median(ms.map((m) => m.rssMiB)),
      };
    };
    const o = stats('ours');
    const a = opts.anchor ? stats('graphile') : undefined;
    const ratio = a ? o.drainPerSec / a.drainPerSec : Number.NaN;
    const perRep = usedReps.map((rep) => {
      const x = all.find((m) => m.rep === rep && m.target === 'ours');
      const y = all.find((m) => m.rep === rep && m.target === 'graphile');
      return x && y ? x.drainPerSec / y.drainPerSec : Number.NaN;
    });
    const target = opts.pg ? TARGET_PG : TARGET_SQLITE;
    const meets = o.drainPerSec >= target;
    const w2 = [30, 9, 7, 7, 9, 9, 7];
    const line = (name: string, x: ReturnType<typeof stats>) =>
      `${row([name, int(x.submitPerSec), fixed(x.submitP50, 1), fixed(x.submitP99, 1), int(x.drainPerSec), `${fixed(x.procCpu, 0)}%`, fixed(x.procCpuUsPerJob, 0)], w2)}\n`;
    const noisyNote = reps.some((r) => r.noisy)
      ? `* noisy: more than ${opts.maxBackground} % background CPU just before the repetition; ${clean.length ? 'left out of the medians' : 'every repetition was noisy, so all are used'}\n`
      : '';
    process.stdout.write(
      `\n${noisyNote}` +
        `(submit/s: ours = POST answers per second, anchor = jobs added per second in addJobs batches of ${BATCH};\n` +
        ` p50/p99: ms per POST (ours) or per addJobs batch (anchor); drain = first submit → all ${int(opts.jobs)} done;\n` +
        ` tail = last submit answer → all done; proc CPU = our server process or the graphile-worker process, % of\n` +
        ` one core (PostgreSQL's own processes are not included); core0/core1 busy; steal = hypervisor, machine)\n\n` +
        `${row([`median of ${usedReps.length} rep(s)`, 'submit/s', 'p50 ms', 'p99 ms', 'drain/s', 'proc CPU', 'µs/job'], w2)}\n` +
        line(`ours (Millrace, ${store})`, o) +
        (a ? line(`anchor (graphile-worker c=${opts.anchorConcurrency})`, a) : '') +
        opts.builds
          .map((b) => {
            const x = stats(b);
            const vsOurs = x.drainPerSec / o.drainPerSec;
            return (
              line(b === 'loader' ? 'ours, sources through tsx' : 'ours, --no-metrics', x) +
              (a
                ? `${row([`ratio ${b} / anchor (drain)`, '', '', '', pct((100 * x.drainPerSec) / a.drainPerSec), '', ''], w2)}\n`
                : '') +
              (b === 'no-metrics'
                ? `metrics cost: ${pct(100 * (1 - o.drainPerSec / x.drainPerSec))} of the drain rate, ` +
                  `${pct(100 * (o.procCpuUsPerJob / x.procCpuUsPerJob - 1))} more server CPU per job (negative: within noise)\n`
                : `compiled / loader (drain): ${pct(100 / vsOurs)}, server CPU per job ${pct((100 * o.procCpuUsPerJob) / x.procCpuUsPerJob)}\n`)
            );
          })
          .join('') +
        (a
          ? `${row(['ratio ours / anchor (drain)', '', '', '', pct(100 * ratio), '', ''], w2)}\n` +
            `per-repetition ratios ours / anchor: ${perRep.map((r) => pct(100 * r)).join(', ')}\n`
          : '') +
        `our server's RSS at the end of a drain (median): ${fixed(o.rssMiB)} MiB; loadavg at the end ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}\n`,
    );

    let profileReport: string | undefined;
    if (opts.profile) profileReport = await profileOurs(setup);

    const summary =
      `SUMMARY B1 ${int(opts.jobs)} no-op jobs, ${store}, c=${opts.concurrency} (${usedReps.length} rep(s)): ` +
      `ours submit ${int(o.submitPerSec)} req/s, drain ${int(o.drainPerSec)} jobs/s` +
      (a ? ` | graphile-worker drain ${int(a.drainPerSec)} jobs/s | ratio ${pct(100 * ratio)}` : '') +
      ` (target >= ${int(target)} jobs/s): ${meets ? 'MEETS TARGET' : 'BELOW TARGET'}`;
    if (profileReport) process.stdout.write(`\n${profileReport}\n`);
    process.stdout.write(`\n${summary}\n`);
    writeResults(opts.json, { command, startedAt, loadStart }, opts, {
      reps,
      measurements: all,
      medians: { ours: o, ...(a ? { anchor: a } : {}), ratio },
      meetsTarget: meets,
    });
    return opts.check && !meets ? 2 : 0;
  } finally {
    await stopAll();
    rmSync(work, { recursive: true, force: true });
    scratch.delete(work);
  }
}

/** One more run of ours under `node --cpu-prof`; the profile is summarised over the timed drain only. */
async function profileOurs(setup: OursSetup): Promise<string> {
  const dir = setup.opts.profileDir ?? mkdtempSync(join(tmpdir(), 'millrace-b1-profile-'));
  mkdirSync(dir, { recursive: true });
  const before = new Set(readdirSync(dir));
  const m = await measureOurs(setup, 0, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread (tsx's loader has its own).
  const file = readdirSync(dir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f) && !before.has(f));
  if (!file) return `(no .cpuprofile was written to ${dir})`;
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const summary = summarizeCpuProfile(profile, { window: { startUs: m.startUs, endUs: m.endUs }, root: ROOT });
  return (
    `CPU profile of our server over one drain (node --cpu-prof; ${int(m.drainPerSec)} jobs/s, ` +
    `submit ${int(m.submitPerSec)} req/s while profiled): ${join(dir, file)}\n` +
    `(per-request figures below are per job: each job is one POST plus its dispatch and completion)\n\n` +
    formatProfileSummary(summary, m.jobs)
  );
}

runBenchmark(main);
