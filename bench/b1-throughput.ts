/**
 * Benchmark B1 (method in bench/README.md): submit → complete throughput of in-server no-op jobs, against
 * graphile-worker draining the same number of no-op jobs on local PostgreSQL, both measured in the same run.
 *
 *   npm run bench:b1                                  # SQLite; 2 reps × 20,000 jobs; graphile-worker anchor
 *   npm run bench:b1 -- --pg auto                     # ours on PostgreSQL too (a throwaway cluster)
 *   npm run bench:b1 -- --pg postgres://u@h:5432/db   # ours and the anchor on an existing server
 *   npm run bench:b1 -- --reps 1 --profile            # plus a CPU profile of our server under the same load
 *
 * Ours: `millrace serve` on core 0 (`taskset -c 0`), a fresh data folder (or database) per repetition. The
 * harness pins itself to core 1 and is the load generator: N × `POST …/Job/GLOBAL.System_Sleep` with
 * MilliSeconds 0 over keep-alive HTTP at concurrency C; once every submit is answered it counts the jobs not yet
 * Completed in the database every 50 ms (better-sqlite3 read-only, or `pg`). Submit req/s = N ÷ (first submit →
 * last answer); drain jobs/s = N ÷ (first submit → the first poll that finds none left).
 * Anchor: graphile-worker 0.17.3, default settings, concurrency 10, one no-op task, in its own process on core 0;
 * the harness adds the N jobs with `addJobs` in batches of 1000 and polls its jobs table until it is empty.
 * Ours first drains --warmup-jobs untimed jobs on each node; the anchor none by default (see --anchor-warmup-jobs).
 * Repetitions are interleaved (ours, the other builds, the anchor; every other repetition in reverse order); medians and
 * the ratio ours ÷ anchor are reported. With --nodes N the server CPU per job of N nodes is compared with one node's,
 * and with --shared-node also with one node that gets a core's Nth as each of the N nodes on core 0 does (beside
 * busy loops that, with --busy-mib, evict the core's caches at their turns as the other nodes do).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger, makeWorkerUtils } from 'graphile-worker';
import pg from 'pg';
import { JobsReader, submitMany, submitter, UNFINISHED_SQL } from './agent-harness.ts';
import {
  ALL_CPUS,
  commOf,
  coreTimes,
  coreUse,
  finalizers,
  launch,
  memoryOf,
  monoUs,
  NoisyReps,
  pinned,
  type Proc,
  mainThreadCpuSeconds,
  processCpuSeconds,
  type RepInfo,
  ROOT,
  type Serve,
  startServe,
  stop,
  waitForLine,
} from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { amount, count, flag, list, shared, text, type Values } from './lib/options.ts';
import { profileRun } from './lib/profile.ts';
import { fixed, int, medians, pct, quantile, ratio, ratiosByRep, say, Table } from './lib/report.ts';

const TARGET_SQLITE = 2000;
const TARGET_PG = 1000;
const DEFINITION = 'GLOBAL.System_Sleep';
const BODY = Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }));
const BATCH = 1000;

const OPTIONS = {
  jobs: count(20_000, 'jobs per measurement', { env: 'BENCH_JOBS' }),
  concurrency: count(50, 'HTTP submits in flight', { env: 'BENCH_CONCURRENCY' }),
  reps: count(2, 'repetitions of ours and the anchor, interleaved', { env: 'BENCH_REPS' }),
  warmupJobs: count(1000, 'untimed jobs each of our nodes drains first in every repetition (0 = none)', {
    min: 0,
  }),
  anchorWarmupJobs: count(
    0,
    'the same for graphile-worker (after a drained warm-up the next 20,000 drained ' +
      "about 5 times slower here, with PostgreSQL's backends CPU-bound, most likely on a get_job plan made while the " +
      'table was tiny)',
    { min: 0 },
  ),
  pg: text(
    undefined,
    'run ours on PostgreSQL: a server URL (a database is created and dropped per repetition) or "auto" for a ' +
      'throwaway cluster (scripts/pg-cluster.sh)',
    { arg: 'URL|auto', pattern: /^(auto$|postgres(ql)?:\/\/)/, expected: 'a postgres:// URL or "auto"' },
  ),
  anchorPg: text(undefined, "PostgreSQL server for graphile-worker (default: --pg's URL, else a throwaway cluster)", {
    arg: 'URL',
    pattern: /^postgres(ql)?:\/\//,
    expected: 'a postgres:// URL',
  }),
  anchorConcurrency: count(10, 'graphile-worker concurrency'),
  pgCores: text(
    undefined,
    'with a throwaway cluster: the cores PostgreSQL runs on (taskset list, e.g. "1"; default all). "1" models a ' +
      'database on its own machine: its backends then no longer share core 0 with the server or the worker',
    { arg: 'CORES', pattern: /^[0-9]+([-,][0-9]+)*$/, expected: 'a taskset core list' },
  ),
  pgSocket: flag(
    "with a throwaway cluster: ours and the anchor connect through the cluster's Unix socket, not TCP on 127.0.0.1 " +
      '(over loopback TCP the sender also pays the receiving side of the TCP stack)',
  ),
  nodes: count(
    1,
    'with --pg and N > 1: also measure ours as N server nodes on the one database (each a `millrace serve`, the ' +
      'submits spread evenly over them), interleaved with one node',
  ),
  spreadNodes: flag(
    'with --nodes: node i on core i mod 2 (node 0, and the load generator, stay where they are), to set what ' +
      'sharing one core costs apart from what the nodes cost each other',
  ),
  sharedNode: flag(
    'with --nodes N: also measure one node beside N-1 busy loops on its core (each its own process and session, as ' +
      'each node is), so that it gets the share of the core each of N nodes gets: nodes sharing one core each run ' +
      "at a fraction of one node's rate, and a server at a lower rate shares its batches among fewer jobs; this " +
      'one node tells that cost apart from what the nodes cost one another',
  ),
  busyMib: count(
    0,
    'with --shared-node: each busy loop writes one byte of every 64 (a cache line) of an array of N MiB, again and ' +
      "again, as a node's heap and code would evict the core's caches when it takes its turn; 0: a shell loop that " +
      'touches next to no memory',
    { min: 0, arg: 'N' },
  ),
  submitToFirst: flag(
    'with --nodes: every submit goes to the first node; the others only dispatch and run jobs, to show what they ' +
      'cost one another apart from sharing the HTTP load',
  ),
  anchor: flag('measure ours only', { default: true }),
  pollMs: amount(50, 'how often the jobs left are counted', { arg: 'MS', min: 1 }),
  timeout: amount(300, 'give up on a drain after S seconds', { min: 1 }),
  maxBackground: shared.maxBackground,
  builds: list(
    ['loader', 'no-metrics'],
    'also measure these builds of ours, interleaved: loader (the sources through tsx), no-metrics (compiled, ' +
      'serve --no-metrics); ours is then dist/ explicitly',
  ),
};
type Options = Values<typeof OPTIONS>;

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL: a throwaway cluster, and one database per measurement.

function startCluster(pin: boolean, cores: string, socket: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'millrace-b1-pg-'));
  const script = join(ROOT, 'scripts/pg-cluster.sh');
  finalizers.set('pg-cluster', () => execFileSync('bash', [script, 'stop', dir], { stdio: 'ignore' }));
  // The harness is pinned to core 1; the cluster gets its cores back (its backends inherit the affinity).
  const [cmd, args] = pinned(pin, cores, 'bash', [script, 'start', dir]);
  const out = execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const url = out.trim().split('\n').pop() ?? '';
  if (!url.startsWith('postgres://')) throw new Error(`pg-cluster.sh printed no URL: ${out}`);
  if (!socket) return url;
  const u = new URL(url);
  u.searchParams.set('host', dir); // pg-cluster.sh puts the socket in DIR; `host` in the query wins over the URL's
  return u.toString();
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
  /** Jobs of ours not yet Completed, or graphile-worker jobs still in its table: both shrink to 0 as they drain. */
  count(): Promise<number>;
  /** Jobs by status at the end (ours), for the consistency check. */
  statuses(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

function sqliteCounter(dataDir: string): Counter {
  const reader = new JobsReader(dataDir);
  return {
    count: async () => reader.unfinished(),
    statuses: async () => reader.statuses(),
    close: async () => reader.close(),
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

/**
 * Resolves with performance.now() of the first poll that finds no job left; rejects after `timeoutS`. It polls only
 * once every job was added (`added.all`; a job's answer comes after its commit), as for the anchor: until then the
 * drain cannot be over, and a count would only load the database both measure.
 */
async function waitUntilDrained(
  counter: Counter,
  added: { all: boolean },
  opts: Options,
  abort: { failed?: unknown },
): Promise<number> {
  const deadline = performance.now() + opts.timeout * 1000;
  for (;;) {
    if (abort.failed) throw abort.failed;
    const n = added.all ? await counter.count() : Number.NaN;
    const now = performance.now();
    if (n === 0) return now;
    if (now > deadline) throw new Error(`not drained after ${opts.timeout} s (count ${n})`);
    await sleep(opts.pollMs);
  }
}

/** N POSTs over a fresh keep-alive agent, C in flight. */
async function submitJobs(base: string, apiKey: string, n: number, opts: Options, abort: { failed?: unknown }) {
  const http = submitter(base, apiKey, opts.concurrency);
  try {
    return await submitMany(http, DEFINITION, BODY, n, opts.concurrency, { abort });
  } finally {
    http.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// One measurement of each target.

type Target = 'ours' | 'graphile' | 'loader' | 'no-metrics' | 'nodes' | 'shared';

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
  /** Of procCpuUsPerJob, the main thread's (the event loop); the rest is V8's compiler and GC helper threads. */
  mainCpuUsPerJob: number;
  /** CPU of every `postgres` process of the machine over the drain, µs per job (NaN on SQLite). */
  pgCpuUsPerJob: number;
  core0Busy: number;
  core1Busy: number;
  steal: number;
  rssMiB: number;
  /** Ours on PostgreSQL: statements sent (each a round trip) and transactions committed per job, every node. */
  roundTripsPerJob: number;
  commitsPerJob: number;
  statuses?: Record<string, number>;
  /** CLOCK_MONOTONIC µs around the drain (for cutting the profile). */
  startUs: number;
  endUs: number;
}

interface OursSetup {
  opts: Options & { pin: boolean };
  work: string;
  apiKey: string;
  /** PostgreSQL server for ours (admin URL), when ours runs on PostgreSQL. */
  pgAdmin?: string;
}

/** CPU seconds of server processes (or the anchor's worker): all their threads', and their main threads'. */
interface ProcCpu {
  all: number;
  main: number;
}

const procCpuOf = (pids: readonly number[]): ProcCpu => ({
  all: pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0),
  main: pids.reduce((sum, pid) => sum + mainThreadCpuSeconds(pid), 0),
});

/** The figures common to ours and the anchor, from the samples around a drain that began at `t0`. */
function drained(
  target: Target,
  rep: number,
  jobs: number,
  t: { t0: number; submittedAt: number; doneAt: number; latencies: number[] },
  cpu: { before: ProcCpu; after: ProcCpu },
  cores: { before: ReturnType<typeof coreTimes>; after: ReturnType<typeof coreTimes> },
  pgCpu?: { before: number; after: number },
) {
  const drainS = (t.doneAt - t.t0) / 1000;
  return {
    target,
    rep,
    jobs,
    submitPerSec: jobs / ((t.submittedAt - t.t0) / 1000),
    submitP50: quantile(t.latencies, 0.5),
    submitP99: quantile(t.latencies, 0.99),
    drainPerSec: jobs / drainS,
    drainS,
    tailS: (t.doneAt - t.submittedAt) / 1000,
    procCpu: (100 * (cpu.after.all - cpu.before.all)) / drainS,
    procCpuUsPerJob: (1e6 * (cpu.after.all - cpu.before.all)) / jobs,
    mainCpuUsPerJob: (1e6 * (cpu.after.main - cpu.before.main)) / jobs,
    pgCpuUsPerJob: pgCpu ? (1e6 * (pgCpu.after - pgCpu.before)) / jobs : Number.NaN,
    core0Busy: coreUse(cores.before, cores.after, 'cpu0').busy,
    core1Busy: coreUse(cores.before, cores.after, 'cpu1').busy,
    steal: coreUse(cores.before, cores.after, 'cpu').steal,
  };
}

/**
 * CPU seconds of every `postgres` process of this machine: the backends of B1's own cluster (on a cluster elsewhere,
 * none). The connections of ours and of graphile-worker stay open over a drain, so none of its CPU leaves with an
 * exited process; the harness's own count of done jobs every --poll-ms is in it, for both alike.
 */
function postgresCpuSeconds(): number {
  let sum = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || commOf(Number(name)) !== 'postgres') continue;
    // NaN: it ended between the two reads, taking its CPU with it
    const cpu = processCpuSeconds(Number(name));
    if (!Number.isNaN(cpu)) sum += cpu;
  }
  return sum;
}

/** Round trips and commits a server counted so far (its metrics; the counter exists only on PostgreSQL). */
async function dbCounts(origin: string): Promise<{ roundTrips: number; commits: number }> {
  const text = await fetch(`${origin}/metrics`).then((r) => r.text());
  const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? Number.NaN);
  return {
    roundTrips: value(/^millrace_db_round_trips_total (\S+)$/m),
    commits: value(/^millrace_db_transaction_duration_seconds_count\{outcome="commit"\} (\S+)$/m),
  };
}

/** The sum of every server's counts. */
async function dbCountsOf(origins: string[]): Promise<{ roundTrips: number; commits: number }> {
  const each = await Promise.all(origins.map(dbCounts));
  return {
    roundTrips: each.reduce((n, c) => n + c.roundTrips, 0),
    commits: each.reduce((n, c) => n + c.commits, 0),
  };
}

/**
 * A busy loop for --shared-node: the command and its arguments. With `mib` > 0 it writes one byte of every 64 of an
 * array that size, the stride of a cache line, so that at each of its turns on the core it evicts what the node
 * beside it had cached, as another node would (the caches: `lscpu`).
 */
function busyLoop(mib: number): [string, string[]] {
  if (mib === 0) return ['sh', ['-c', 'while :; do :; done']];
  const walk = `const a = new Uint8Array(${mib} * 1048576); for (;;) for (let i = 0; i < a.length; i += 64) a[i]++;`;
  return [process.execPath, ['-e', walk]];
}

async function measureOurs(
  s: OursSetup,
  rep: number,
  nodeFlags: string[] = [],
  build: 'ours' | 'loader' | 'no-metrics' | 'nodes' | 'shared' = 'ours',
): Promise<Measurement> {
  const { opts } = s;
  const extraNodes = build === 'nodes' ? opts.nodes - 1 : 0;
  const others: Serve[] = [];
  const loops: Proc[] = [];
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
    // More nodes on the same database (no local agent: no-op jobs need none), each on the server's core.
    for (let i = 1; i <= extraNodes; i++) {
      const nodeDir = `${dataDir}-node${i}`;
      mkdirSync(nodeDir, { recursive: true });
      others.push(
        await startServe({
          pin: opts.pin,
          dataDir: nodeDir,
          apiKey: s.apiKey,
          database: database as string,
          nodeFlags,
          ...(opts.spreadNodes ? { core: i % 2 } : {}),
          serveArgs: ['--no-local-agent'],
        }),
      );
    }
    // A busy loop is a process of its own in a session of its own (launch detaches it), as a node is: the scheduler
    // shares a core among sessions first (autogroup), so a loop takes what a node would.
    if (build === 'shared')
      for (let i = 1; i < opts.nodes; i++)
        loops.push(launch(`busy-${i}`, ...pinned(opts.pin, 0, ...busyLoop(opts.busyMib))));
    const bases = opts.submitToFirst ? [serve.base] : [serve.base, ...others.map((o) => o.base)];
    const pids = [serve.proc.pid, ...others.map((o) => o.proc.pid)];
    const origins = [serve.origin, ...others.map((o) => o.origin)];
    // Round trips are counted on PostgreSQL only (and not at all without metrics).
    const metrics = database !== undefined && build !== 'no-metrics';
    const submitAll = async (n: number, abort: { failed?: unknown }) => {
      const parts = await Promise.all(
        bases.map((b, i) =>
          submitJobs(b, s.apiKey, Math.floor(n / bases.length) + (i < n % bases.length ? 1 : 0), opts, abort),
        ),
      );
      return { lastAt: Math.max(...parts.map((p) => p.lastAt)), latenciesMs: parts.flatMap((p) => p.latenciesMs) };
    };
    counter = database ? await pgCounter(database, UNFINISHED_SQL) : sqliteCounter(dataDir);
    const c = counter;
    const abort: { failed?: unknown } = {};
    // The warm-up is per node: each node compiles its hot paths on as many jobs as one node alone does (spread
    // over three, a warm-up of 1,000 left each node a third of it, and their compilers ran during the drain).
    const warmup = opts.warmupJobs * bases.length;
    if (warmup > 0) {
      await submitAll(warmup, abort);
      await waitUntilDrained(c, { all: true }, opts, abort);
    }
    const target = warmup + opts.jobs;
    const db0 = metrics ? await dbCountsOf(origins) : undefined;
    const cpu0 = procCpuOf(pids);
    const pg0 = database ? postgresCpuSeconds() : Number.NaN;
    const cores0 = coreTimes();
    const startUs = monoUs();
    const t0 = performance.now();
    const added = { all: false };
    const submitted = submitAll(opts.jobs, abort).then((r) => {
      added.all = true;
      return r;
    });
    const [sub, t1] = await Promise.all([submitted, waitUntilDrained(c, added, opts, abort)]);
    const endUs = monoUs();
    const cpu1 = procCpuOf(pids);
    const pg1 = database ? postgresCpuSeconds() : Number.NaN;
    const cores1 = coreTimes();
    const db1 = metrics ? await dbCountsOf(origins) : undefined;
    const statuses = await c.statuses();
    if (statuses.Completed !== target || Object.keys(statuses).length !== 1)
      throw new Error(
        `rep ${rep}: expected ${target} Completed jobs and nothing else, found ${JSON.stringify(statuses)}`,
      );
    return {
      ...drained(
        build,
        rep,
        opts.jobs,
        { t0, submittedAt: sub.lastAt, doneAt: t1, latencies: sub.latenciesMs },
        { before: cpu0, after: cpu1 },
        { before: cores0, after: cores1 },
        { before: pg0, after: pg1 },
      ),
      rssMiB: memoryOf(serve.proc.pid).rssMiB,
      // The scrapes' own statements (two reads each) are within the noise of 10,000 jobs.
      roundTripsPerJob: db0 && db1 ? (db1.roundTrips - db0.roundTrips) / opts.jobs : Number.NaN,
      commitsPerJob: db0 && db1 ? (db1.commits - db0.commits) / opts.jobs : Number.NaN,
      statuses,
      startUs,
      endUs,
    };
  } finally {
    await counter?.close();
    for (const l of loops) await stop(l, 1000);
    for (const o of others) {
      await stop(o.proc, 10_000);
      rmSync(o.dataDir, { recursive: true, force: true });
    }
    if (serve) await stop(serve.proc, nodeFlags.length > 0 ? 30_000 : 10_000);
    rmSync(dataDir, { recursive: true, force: true });
    if (s.pgAdmin) await dropDatabase(s.pgAdmin, dbName);
  }
}

const quietLogger = new Logger(() => (level, message) => {
  if (level === 'error') process.stderr.write(`graphile-worker (harness) error: ${message}\n`);
});

async function measureGraphile(opts: Options & { pin: boolean }, adminUrl: string, rep: number): Promise<Measurement> {
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
      await waitUntilDrained(c, { all: true }, opts, abort);
    }
    const latencies: number[] = [];
    const cpu0 = procCpuOf([proc.pid]);
    const pg0 = postgresCpuSeconds();
    const cores0 = coreTimes();
    const startUs = monoUs();
    const t0 = performance.now();
    const addedAt = await add(opts.jobs, latencies);
    const t1 = await waitUntilDrained(c, { all: true }, opts, abort);
    const endUs = monoUs();
    const cpu1 = procCpuOf([proc.pid]);
    const pg1 = postgresCpuSeconds();
    const cores1 = coreTimes();
    const rssMiB = memoryOf(proc.pid).rssMiB;
    await stop(proc);
    const expected = opts.anchorWarmupJobs + opts.jobs;
    if (ran !== expected) throw new Error(`graphile-worker ran ${ran ?? '?'} tasks, expected ${expected}`);
    return {
      ...drained(
        'graphile',
        rep,
        opts.jobs,
        { t0, submittedAt: addedAt, doneAt: t1, latencies },
        { before: cpu0, after: cpu1 },
        { before: cores0, after: cores1 },
        { before: pg0, after: pg1 },
      ),
      rssMiB,
      roundTripsPerJob: Number.NaN,
      commitsPerJob: Number.NaN,
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
// The report

const perRep = new Table<Measurement & RepInfo>([
  ['rep target', 14, (m) => `${m.rep} ${m.target}${m.noisy ? ' *' : ''}`],
  ['load1', 5, (m) => fixed(m.loadavg1, 2)],
  ['bg%', 4, (m) => fixed(m.background, 0)],
  ['submit/s', 8, (m) => int(m.submitPerSec)],
  ['p50', 6, (m) => fixed(m.submitP50, 1)],
  ['p99', 6, (m) => fixed(m.submitP99, 1)],
  ['drain/s', 8, (m) => int(m.drainPerSec)],
  ['drain', 6, (m) => `${fixed(m.drainS, 2)}s`],
  ['tail', 6, (m) => `${fixed(m.tailS, 2)}s`],
  ['proc CPU', 8, (m) => `${fixed(m.procCpu, 0)}%`],
  ['µs/job', 7, (m) => fixed(m.procCpuUsPerJob, 0)],
  ['main', 5, (m) => fixed(m.mainCpuUsPerJob, 0)],
  ['pg µs/job', 9, (m) => fixed(m.pgCpuUsPerJob, 0)],
  ['core0', 6, (m) => `${fixed(m.core0Busy, 0)}%`],
  ['core1', 6, (m) => `${fixed(m.core1Busy, 0)}%`],
  ['steal', 6, (m) => `${fixed(m.steal, 1)}%`],
  ['rt/job', 6, (m) => fixed(m.roundTripsPerJob, 2)],
  ['tx/job', 6, (m) => fixed(m.commitsPerJob, 2)],
]);

const FIGURES = [
  'submitPerSec',
  'submitP50',
  'submitP99',
  'drainPerSec',
  'procCpu',
  'procCpuUsPerJob',
  'mainCpuUsPerJob',
  'pgCpuUsPerJob',
  'rssMiB',
  'roundTripsPerJob',
  'commitsPerJob',
] as const;
type Figures = Record<(typeof FIGURES)[number], number>;

const mediansTable = new Table<Figures>([
  ['', 30, () => ''],
  ['submit/s', 9, (x) => int(x.submitPerSec)],
  ['p50 ms', 7, (x) => fixed(x.submitP50, 1)],
  ['p99 ms', 7, (x) => fixed(x.submitP99, 1)],
  ['drain/s', 9, (x) => int(x.drainPerSec)],
  ['proc CPU', 9, (x) => `${fixed(x.procCpu, 0)}%`],
  ['µs/job', 7, (x) => fixed(x.procCpuUsPerJob, 0)],
  ['main', 5, (x) => fixed(x.mainCpuUsPerJob, 0)],
  ['pg µs/job', 9, (x) => fixed(x.pgCpuUsPerJob, 0)],
  ['rt/job', 7, (x) => fixed(x.roundTripsPerJob, 2)],
  ['tx/job', 7, (x) => fixed(x.commitsPerJob, 2)],
]);

benchmark({
  script: 'bench:b1',
  title: 'B1 no-op job throughput',
  about:
    'B1: submit → complete throughput of in-server no-op jobs, against graphile-worker draining as many no-op jobs ' +
    'on local PostgreSQL, in the same run.',
  options: OPTIONS,
  pin: 'self',
  target: `the target is missed (SQLite >= ${TARGET_SQLITE} jobs/s, PG >= ${TARGET_PG})`,
  profile:
    'afterwards, run ours once more under node --cpu-prof and summarise the profile (with --nodes, the nodes too)',
  refuse: (opts) =>
    opts.nodes > 1 && !opts.pg
      ? '--nodes needs --pg: several nodes share a PostgreSQL database'
      : opts.nodes < 2 && (opts.spreadNodes || opts.submitToFirst || opts.sharedNode)
        ? '--spread-nodes, --submit-to-first and --shared-node need --nodes 2 or more'
        : opts.sharedNode && opts.spreadNodes
          ? '--shared-node gives one node the share of core 0 the nodes get there; not with --spread-nodes'
          : opts.busyMib > 0 && !opts.sharedNode
            ? '--busy-mib shapes the busy loops of --shared-node'
            : undefined,
  async run({ opts, work, apiKey }) {
    const store = opts.pg ? 'PostgreSQL' : 'SQLite';
    let cluster: string | undefined;
    const needCluster = opts.pg === 'auto' || (opts.anchor && !opts.anchorPg && (!opts.pg || opts.pg === 'auto'));
    if (needCluster) {
      const t = performance.now();
      cluster = startCluster(opts.pin, opts.pgCores ?? ALL_CPUS, opts.pgSocket);
      say(
        `PostgreSQL: throwaway cluster (scripts/pg-cluster.sh: fsync=off, synchronous_commit=off) at ${cluster}, ` +
          `started in ${fixed((performance.now() - t) / 1000)} s, ` +
          (opts.pgCores ? `on core(s) ${opts.pgCores}` : 'on all cores'),
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
      say(`PostgreSQL server version ${v}`);
    }
    const gwVersion = (
      JSON.parse(readFileSync(join(ROOT, 'node_modules/graphile-worker/package.json'), 'utf8')) as { version: string }
    ).version;
    say(
      `ours:    millrace serve (${store}), ${int(opts.jobs)} × POST /Job/${DEFINITION} (MilliSeconds 0), ` +
        `${opts.concurrency} in flight over keep-alive HTTP; once all are answered, the jobs left counted every ` +
        `${opts.pollMs} ms`,
      ...(opts.anchor
        ? [
            `anchor:  graphile-worker ${gwVersion}, defaults, concurrency ${opts.anchorConcurrency}, no-op task; ` +
              `${int(opts.jobs)} jobs added with addJobs in ${BATCH}s`,
          ]
        : []),
      `warm-up: ${int(opts.warmupJobs)} jobs for ours, ${int(opts.anchorWarmupJobs)} for the anchor (untimed); ` +
        `${opts.reps} rep(s), interleaved; ` +
        (opts.pin ? 'server / worker on core 0, load generator (this process) on core 1' : 'UNPINNED'),
      '',
      perRep.header(),
    );

    const all: Measurement[] = [];
    const noise = new NoisyReps(opts.maxBackground);
    const setup: OursSetup = { opts, work, apiKey, ...(pgAdmin ? { pgAdmin } : {}) };
    for (let rep = 1; rep <= opts.reps; rep++) {
      const info = await noise.begin(rep);
      const targets: Array<() => Promise<Measurement>> = [() => measureOurs(setup, rep)];
      for (const build of opts.builds) targets.push(() => measureOurs(setup, rep, [], build));
      if (opts.nodes > 1 && pgAdmin) targets.push(() => measureOurs(setup, rep, [], 'nodes'));
      if (opts.nodes > 1 && pgAdmin && opts.sharedNode) targets.push(() => measureOurs(setup, rep, [], 'shared'));
      if (opts.anchor && anchorAdmin) targets.push(() => measureGraphile(opts, anchorAdmin, rep));
      // Every other repetition runs the targets in reverse order, so that whatever drifts during a repetition (the
      // first drain of a repetition was repeatedly the slowest) does not always favour the same one.
      if (rep % 2 === 0) targets.reverse();
      for (const run of targets) {
        const m = await run();
        all.push(m);
        say(perRep.line({ ...info, ...m }));
      }
    }

    const used = noise.used();
    const of = (t: Target) => all.filter((m) => m.target === t && used.includes(m.rep));
    const o = medians(of('ours'), FIGURES);
    const a = opts.anchor ? medians(of('graphile'), FIGURES) : undefined;
    const ours2anchor = a ? o.drainPerSec / a.drainPerSec : Number.NaN;
    const target = opts.pg ? TARGET_PG : TARGET_SQLITE;
    const ratioLine = (name: string, value: string) => mediansTable.only(name, 'drain/s', value);
    say(
      '',
      `${noise.note()}(submit/s: ours = POST answers per second, anchor = jobs added per second in addJobs batches of ${BATCH};`,
      ` p50/p99: ms per POST (ours) or per addJobs batch (anchor); drain = first submit → all ${int(opts.jobs)} done;`,
      ' tail = last submit answer → all done; proc CPU = our server process or the graphile-worker process, % of',
      " one core (PostgreSQL's own processes are not included); main = of µs/job, the main threads' (the event",
      " loop), the rest being V8's helper threads (optimizing compiler, garbage collector); pg µs/job = CPU of every",
      ' postgres process of the machine per job (the cluster the benchmark started; the done-job count it polls is in',
      ' it for both alike);',
      ' core0/core1 busy; steal = hypervisor, machine;',
      ' rt/job, tx/job = statements sent to PostgreSQL (each a round trip) and commits per job, all nodes)',
      '',
      mediansTable.header(`median of ${used.length} rep(s)`),
      mediansTable.line(o, `ours (Millrace, ${store})`),
      ...(a ? [mediansTable.line(a, `anchor (graphile-worker c=${opts.anchorConcurrency})`)] : []),
      ...opts.builds.flatMap((b) => {
        const x = medians(of(b), FIGURES);
        return [
          mediansTable.line(x, b === 'loader' ? 'ours, sources through tsx' : 'ours, --no-metrics'),
          ...(a ? [ratioLine(`ratio ${b} / anchor (drain)`, ratio(x.drainPerSec, a.drainPerSec))] : []),
          b === 'no-metrics'
            ? `metrics cost: ${pct(100 * (1 - o.drainPerSec / x.drainPerSec))} of the drain rate, ` +
              `${pct(100 * (o.procCpuUsPerJob / x.procCpuUsPerJob - 1))} more server CPU per job (negative: within noise)`
            : `compiled / loader (drain): ${ratio(o.drainPerSec, x.drainPerSec)}, server CPU per job ` +
              `${ratio(o.procCpuUsPerJob, x.procCpuUsPerJob)}`,
        ];
      }),
      ...(opts.nodes > 1 && pgAdmin
        ? (() => {
            const x = medians(of('nodes'), FIGURES);
            const sh = opts.sharedNode ? medians(of('shared'), FIGURES) : undefined;
            return [
              mediansTable.line(x, `ours, ${opts.nodes} nodes`),
              ...(sh
                ? [
                    mediansTable.line(
                      sh,
                      `ours, 1 node beside ${opts.nodes - 1} busy loops` +
                        (opts.busyMib > 0 ? ` of ${opts.busyMib} MiB` : ''),
                    ),
                  ]
                : []),
              `server CPU per job, ${opts.nodes} nodes / 1 node: ${ratio(x.procCpuUsPerJob, o.procCpuUsPerJob)}` +
                ` (main threads ${ratio(x.mainCpuUsPerJob, o.mainCpuUsPerJob)})` +
                (sh ? `; / 1 node beside busy loops: ${ratio(x.procCpuUsPerJob, sh.procCpuUsPerJob)}` : ''),
              ratioLine(`ratio ${opts.nodes} nodes / 1 node (drain)`, ratio(x.drainPerSec, o.drainPerSec)),
              ...(a
                ? [ratioLine(`ratio ${opts.nodes} nodes / anchor (drain)`, pct((100 * x.drainPerSec) / a.drainPerSec))]
                : []),
            ];
          })()
        : []),
      ...(a
        ? [
            ratioLine('ratio ours / anchor (drain)', pct(100 * ours2anchor)),
            `per-repetition ratios ours / anchor: ${ratiosByRep(of('ours'), of('graphile'), (m) => m.drainPerSec)
              .map((r) => pct(100 * r))
              .join(', ')}`,
          ]
        : []),
      `our server's RSS at the end of a drain (median): ${fixed(o.rssMiB)} MiB`,
    );

    if (opts.profile)
      say(
        '',
        await profileRun(
          opts.profileDir,
          (nodeFlags) => measureOurs(setup, 0, nodeFlags),
          (m) => ({
            heading:
              `CPU profile of our server over one drain (node --cpu-prof; ${int(m.drainPerSec)} jobs/s, ` +
              `submit ${int(m.submitPerSec)} req/s while profiled)`,
            note: '(per-request figures below are per job: each job is one POST plus its dispatch and completion)',
            items: m.jobs,
          }),
        ),
        // Every node profiled over the same drain: what coordination costs each of them.
        ...(opts.nodes > 1 && pgAdmin
          ? [
              '',
              await profileRun(
                opts.profileDir,
                (nodeFlags) => measureOurs(setup, 0, nodeFlags, 'nodes'),
                (m) => ({
                  heading: `CPU profile of one of ${opts.nodes} nodes over one drain (${int(m.drainPerSec)} jobs/s in all)`,
                  note: "(per-job figures below divide one node's time by all the jobs of the drain)",
                  items: m.jobs,
                }),
              ),
            ]
          : []),
      );

    return {
      summary:
        `B1 ${int(opts.jobs)} no-op jobs, ${store}, c=${opts.concurrency} (${used.length} rep(s)): ` +
        `ours submit ${int(o.submitPerSec)} req/s, drain ${int(o.drainPerSec)} jobs/s` +
        (a ? ` | graphile-worker drain ${int(a.drainPerSec)} jobs/s | ratio ${pct(100 * ours2anchor)}` : '') +
        ` (target >= ${int(target)} jobs/s)`,
      meets: o.drainPerSec >= target,
      results: {
        reps: noise.reps,
        measurements: all,
        medians: { ours: o, ...(a ? { anchor: a } : {}), ratio: ours2anchor },
      },
    };
  },
});
