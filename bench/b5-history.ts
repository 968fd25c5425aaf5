/**
 * Benchmark B5 (perf-reliability.md §6): what a large job history costs the server. The same `millrace serve`
 * is measured on an empty database and on the same database holding 1,000,000 finished jobs: RSS, GET
 * /Job/<id> latency, startup time, and the database file's size.
 *
 *   npm run bench:b5                                  # defaults: 1,000,000 jobs, 3 reps × 5 s, 2 s warm-up
 *   npm run bench:b5 -- --jobs 100000 --reps 1        # quick run
 *
 * 1. `millrace serve` starts on a fresh data folder (SQLite) and one System_Sleep job (MilliSeconds 0) is
 *    submitted and run: it is the GET target on the empty database, and the model of every generated row.
 *    The server is stopped and its data folder copied: the copy is the "empty" database.
 * 2. N finished jobs are inserted into the original database with better-sqlite3 (prepared INSERT, big
 *    transactions): rows exactly as the server wrote the model job (same columns, definition, queue, process
 *    server and data JSON) with their own ids, MilliSeconds values and times. Status Completed, run_end spread
 *    over the last 7 days (the default retention is 30), and the id sequences moved past them.
 * 3. Repetitions, interleaved empty, 1M, empty, 1M…: start the server (startup = spawn → first answer), warm
 *    it up with autocannon on GET /Job/<id>, read its RSS (VmRSS), measure GET /Job/<id> with autocannon
 *    (c=50, pinned as in get-object.ts: server on core 0, autocannon on core 1), stop it. On the 1M database the
 *    job read is the one in the middle of the history.
 * Reported: RSS(1M) − RSS(empty) (target <= 50 MiB), GET p99 ratio 1M ÷ empty (target <= 1.2), startup
 * time with 1M jobs, database size. Exit status: 0 done, 1 failure, 2 target missed with --check.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import {
  autocannon,
  backgroundBusy,
  canPin,
  commandLine,
  fixed,
  int,
  median,
  memoryOf,
  numberOption,
  pct,
  processCpuSeconds,
  row,
  runBenchmark,
  type Serve,
  scratch,
  startServe,
  stop,
  stopAll,
} from './harness.ts';

const TARGET_RSS_MIB = 50;
const TARGET_P99_RATIO = 1.2;
const DAY_MS = 24 * 3600 * 1000;

// ---------------------------------------------------------------------------------------------------------------
// Options

interface Options {
  jobs: number;
  duration: number;
  reps: number;
  warmup: number;
  connections: number;
  maxBackground: number;
  pin: boolean;
  keep: boolean;
  json?: string;
  check: boolean;
}

const USAGE = `usage: npm run bench:b5 -- [options]
  --jobs N             finished jobs to insert (env BENCH_JOBS, default 1000000)
  --duration S         seconds per GET measurement (env BENCH_DURATION, default 5)
  --reps N             repetitions of each database, interleaved (env BENCH_REPS, default 3)
  --warmup S           autocannon warm-up seconds after each start, before RSS is read (env BENCH_WARMUP, default 2)
  --connections N      autocannon connections (env BENCH_CONNECTIONS, default 50)
  --max-background P   a repetition is noisy when other processes use more than P % of the machine just before
                       it (env BENCH_MAX_BACKGROUND, default 25)
  --no-pin             do not use taskset (results are then not comparable with pinned ones)
  --keep               keep the data folders (their path is printed)
  --json FILE          also write every measurement as JSON
  --check              exit with status 2 when a target is missed (RSS delta <= ${TARGET_RSS_MIB} MiB, p99 ratio <= ${TARGET_P99_RATIO})`;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      jobs: { type: 'string' },
      duration: { type: 'string' },
      reps: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'max-background': { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      json: { type: 'string' },
      check: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const num = numberOption;
  return {
    jobs: Math.floor(num(values.jobs, 'BENCH_JOBS', 1_000_000, 1)),
    duration: num(values.duration, 'BENCH_DURATION', 5, 1),
    reps: Math.floor(num(values.reps, 'BENCH_REPS', 3, 1)),
    warmup: num(values.warmup, 'BENCH_WARMUP', 2, 1),
    connections: Math.floor(num(values.connections, 'BENCH_CONNECTIONS', 50, 1)),
    maxBackground: num(values['max-background'], 'BENCH_MAX_BACKGROUND', 25, 0),
    pin: !values['no-pin'],
    keep: values.keep,
    ...(values.json !== undefined ? { json: resolve(values.json) } : {}),
    check: values.check,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The model job and the generated history.

async function submitModelJob(serve: Serve, apiKey: string): Promise<number> {
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

type Row = Record<string, unknown>;

interface Generated {
  firstId: number;
  lastId: number;
  seconds: number;
  dbBytes: number;
}

/**
 * Inserts `n` finished jobs shaped like `modelId`'s row into the (stopped) server's SQLite file: same columns and
 * constant fields, own job_id/unique_id (continuing the sequences), MilliSeconds 0..9999 and times spread over
 * the last 7 days. Rollback journal with synchronous=OFF during the load (nothing else has the file open), then
 * WAL again as the server sets it.
 */
function generateHistory(file: string, modelId: number, n: number): Generated {
  const t0 = performance.now();
  const db = new BetterSqlite3(file);
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144'); // 256 MiB: the index pages being appended to stay in memory
    const model = db.prepare('select * from jobs where job_id = ?').get(modelId) as Row | undefined;
    if (!model) throw new Error(`model job ${modelId} not found`);
    if (model.status !== 'Completed') throw new Error(`model job ${modelId} is ${String(model.status)}`);
    const seq = (name: string) =>
      (db.prepare('select value from sequences where name = ?').pluck().get(name) as number | undefined) ?? 0;
    const firstId = seq('job_id') + 1;
    const firstUnique = seq('unique_id') + 1;
    const columns = Object.keys(model);
    const insert = db.prepare(`insert into jobs (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
    const data = JSON.parse(model.data as string) as {
      parameters: Array<{ Name: string; InValueNumber: number | null }>;
    };
    const param = data.parameters.find((p) => p.Name === 'MilliSeconds');
    if (!param) throw new Error('model job has no MilliSeconds parameter');
    const runtime = Number(model.run_end) - Number(model.run_start);
    const now = Date.now();
    const span = 7 * DAY_MS;
    const start = now - span - 60_000;
    const values = columns.map((c) => model[c]);
    const at = (c: string) => columns.indexOf(c);
    const ix = {
      job_id: at('job_id'),
      unique_id: at('unique_id'),
      requested_start: at('requested_start'),
      scheduled_start: at('scheduled_start'),
      run_start: at('run_start'),
      run_end: at('run_end'),
      top_start: at('top_start'),
      data: at('data'),
      creation_time: at('creation_time'),
      modification_time: at('modification_time'),
    };
    const insertMany = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const submitted = Math.floor(start + (i * span) / n);
        const ms = i % 10_000;
        param.InValueNumber = ms;
        const runStart = submitted + 2;
        const runEnd = runStart + ms + runtime;
        values[ix.job_id] = firstId + i;
        values[ix.unique_id] = firstUnique + i;
        values[ix.requested_start] = submitted;
        values[ix.top_start] = submitted;
        values[ix.creation_time] = submitted;
        values[ix.scheduled_start] = runStart;
        values[ix.run_start] = runStart;
        values[ix.run_end] = runEnd;
        values[ix.modification_time] = runEnd;
        values[ix.data] = JSON.stringify(data);
        insert.run(values);
      }
    });
    const chunk = 100_000;
    for (let from = 0; from < n; from += chunk) insertMany(from, Math.min(n, from + chunk));
    const setSeq = db.prepare('update sequences set value = ? where name = ?');
    setSeq.run(firstId + n - 1, 'job_id');
    setSeq.run(firstUnique + n - 1, 'unique_id');
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  const check = new BetterSqlite3(file, { readonly: true });
  try {
    const r = check.prepare('select min(job_id) as lo, max(job_id) as hi, count(*) as n from jobs').get() as {
      lo: number;
      hi: number;
      n: number;
    };
    if (r.n !== n + 1) throw new Error(`expected ${n + 1} jobs after the load, found ${r.n}`);
    return { firstId: r.lo + 1, lastId: r.hi, seconds, dbBytes: statSync(file).size };
  } finally {
    check.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Measurements.

type Target = 'empty' | 'history';

interface Measurement {
  target: Target;
  rep: number;
  startupMs: number;
  /** VmRSS when the server first answered, and after the warm-up. */
  rssReadyMiB: number;
  rssMiB: number;
  rssAfterMiB: number;
  peakMiB: number;
  reqPerSec: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
  cpuUsPerReq: number;
  non2xx: number;
}

async function measure(
  opts: Options,
  target: Target,
  rep: number,
  dataDir: string,
  apiKey: string,
  jobId: number,
): Promise<Measurement> {
  const serve = await startServe({ pin: opts.pin, dataDir, apiKey });
  try {
    const rssReady = memoryOf(serve.proc.pid).rssMiB;
    const url = `${serve.base}/Job/${jobId}`;
    const headers = { 'X-API-Key': apiKey };
    const w = await autocannon(opts.pin, url, headers, opts.warmup, opts.connections);
    if (w.non2xx > 0 || w.errors > 0 || w.requests.total === 0)
      throw new Error(`warm-up of ${target}: ${w.non2xx} non-2xx, ${w.errors} errors`);
    const rss = memoryOf(serve.proc.pid).rssMiB;
    const cpu0 = processCpuSeconds(serve.proc.pid);
    const r = await autocannon(opts.pin, url, headers, opts.duration, opts.connections);
    const cpu1 = processCpuSeconds(serve.proc.pid);
    const after = memoryOf(serve.proc.pid);
    if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0 || r.requests.total === 0)
      throw new Error(
        `${target}, repetition ${rep}: ${r.requests.total} requests, ${r.non2xx} non-2xx, ${r.errors} errors, ` +
          `${r.timeouts} timeouts (status codes ${JSON.stringify(r.statusCodeStats)}); every answer must be 2xx`,
      );
    return {
      target,
      rep,
      startupMs: serve.startupMs,
      rssReadyMiB: rssReady,
      rssMiB: rss,
      rssAfterMiB: after.rssMiB,
      peakMiB: after.peakMiB,
      reqPerSec: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      mean: r.latency.average,
      max: r.latency.max,
      cpuUsPerReq: (1e6 * (cpu1 - cpu0)) / Math.max(r.requests.total, 1),
      non2xx: r.non2xx,
    };
  } finally {
    await stop(serve.proc);
  }
}

interface RepInfo {
  rep: number;
  loadavg1: number;
  background: number;
  noisy: boolean;
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const command = commandLine('bench:b5');
  if (opts.pin) opts.pin = canPin();
  const work = mkdtempSync(join(tmpdir(), 'millrace-b5-'));
  if (!opts.keep) scratch.add(work);
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const startedAt = new Date();
  const loadStart = loadavg();
  try {
    process.stdout.write(
      `Millrace B5 history cost, ${startedAt.toISOString()}, node ${process.version}, ${availableParallelism()} CPUs, ` +
        `loadavg ${loadStart.map((x) => x.toFixed(2)).join(' ')}\ncommand: ${command}\n` +
        (opts.keep ? `data folders kept in ${work}\n` : ''),
    );
    // 1. The model job, on a fresh database.
    const historyDir = join(work, 'history');
    const emptyDir = join(work, 'empty');
    const first = await startServe({ pin: opts.pin, dataDir: historyDir, apiKey });
    const modelId = await submitModelJob(first, apiKey);
    await stop(first.proc);
    if (first.proc.exitCode !== 0) throw new Error(`the first server exited with ${first.proc.exitCode}`);
    if (existsSync(join(historyDir, 'millrace.sqlite-wal')))
      throw new Error('the stopped server left a WAL file: the database was not closed cleanly');
    cpSync(historyDir, emptyDir, { recursive: true });
    const emptyBytes = statSync(join(emptyDir, 'millrace.sqlite')).size;

    // 2. The history.
    const dbFile = join(historyDir, 'millrace.sqlite');
    const gen = generateHistory(dbFile, modelId, opts.jobs);
    const middleId = gen.firstId + Math.floor(opts.jobs / 2);
    process.stdout.write(
      `history: ${int(opts.jobs)} Completed GLOBAL.System_Sleep jobs (ids ${int(gen.firstId)}–${int(gen.lastId)}) ` +
        `inserted in ${fixed(gen.seconds, 1)} s (${int(opts.jobs / gen.seconds)} rows/s); database ` +
        `${fixed(gen.dbBytes / 2 ** 20, 1)} MiB (empty: ${fixed(emptyBytes / 2 ** 20, 2)} MiB)\n` +
        `GET:     /Job/${modelId} on the empty database, /Job/${middleId} on the history; autocannon ` +
        `${opts.connections} connections, ${opts.warmup} s warm-up then ${opts.duration} s; ${opts.reps} rep(s) ` +
        `interleaved, a fresh start each; ` +
        (opts.pin ? 'server on core 0, autocannon on core 1\n\n' : 'UNPINNED\n\n'),
    );

    // 3. Interleaved measurements.
    const all: Measurement[] = [];
    const reps: RepInfo[] = [];
    const widths = [13, 5, 4, 8, 7, 7, 7, 7, 8, 4, 4, 6, 7];
    process.stdout.write(
      `${row(['rep target', 'load1', 'bg%', 'startup', 'RSS rdy', 'RSS', 'RSS end', 'peak', 'req/s', 'p50', 'p99', 'mean', 'µs/req'], widths)}\n`,
    );
    for (let rep = 1; rep <= opts.reps; rep++) {
      const background = await backgroundBusy();
      const info: RepInfo = {
        rep,
        loadavg1: loadavg()[0] ?? Number.NaN,
        background,
        noisy: background > opts.maxBackground,
      };
      reps.push(info);
      for (const [target, dir, id] of [
        ['empty', emptyDir, modelId],
        ['history', historyDir, middleId],
      ] as const) {
        const m = await measure(opts, target, rep, dir, apiKey, id);
        all.push(m);
        process.stdout.write(
          `${row(
            [
              `${rep} ${target}${info.noisy ? ' *' : ''}`,
              fixed(info.loadavg1, 2),
              fixed(info.background, 0),
              `${int(m.startupMs)}ms`,
              fixed(m.rssReadyMiB),
              fixed(m.rssMiB),
              fixed(m.rssAfterMiB),
              fixed(m.peakMiB),
              int(m.reqPerSec),
              String(m.p50),
              String(m.p99),
              fixed(m.mean, 2),
              fixed(m.cpuUsPerReq, 0),
            ],
            widths,
          )}\n`,
        );
      }
    }
    const historyBytes = statSync(dbFile).size;

    const clean = reps.filter((r) => !r.noisy).map((r) => r.rep);
    const usedReps = clean.length > 0 ? clean : reps.map((r) => r.rep);
    const stats = (t: Target) => {
      const ms = all.filter((m) => m.target === t && usedReps.includes(m.rep));
      const med = (f: (m: Measurement) => number) => median(ms.map(f));
      return {
        startupMs: med((m) => m.startupMs),
        rssReadyMiB: med((m) => m.rssReadyMiB),
        rssMiB: med((m) => m.rssMiB),
        rssAfterMiB: med((m) => m.rssAfterMiB),
        peakMiB: med((m) => m.peakMiB),
        reqPerSec: med((m) => m.reqPerSec),
        p50: med((m) => m.p50),
        p99: med((m) => m.p99),
        mean: med((m) => m.mean),
        cpuUsPerReq: med((m) => m.cpuUsPerReq),
      };
    };
    const e = stats('empty');
    const h = stats('history');
    const rssDelta = h.rssMiB - e.rssMiB;
    const p99Ratio = h.p99 / e.p99;
    const perRep = usedReps.map((rep) => {
      const x = all.find((m) => m.rep === rep && m.target === 'history');
      const y = all.find((m) => m.rep === rep && m.target === 'empty');
      return x && y ? { rss: x.rssMiB - y.rssMiB, p99: x.p99 / y.p99, rps: x.reqPerSec / y.reqPerSec } : undefined;
    });
    const meets = rssDelta <= TARGET_RSS_MIB && p99Ratio <= TARGET_P99_RATIO;
    const w2 = [26, 9, 8, 7, 8, 7, 9, 6, 6, 7, 7];
    const line = (name: string, x: ReturnType<typeof stats>) =>
      `${row([name, `${int(x.startupMs)}ms`, fixed(x.rssReadyMiB), fixed(x.rssMiB), fixed(x.rssAfterMiB), fixed(x.peakMiB), int(x.reqPerSec), fixed(x.p50, 0), fixed(x.p99, 0), fixed(x.mean, 2), fixed(x.cpuUsPerReq, 0)], w2)}\n`;
    const noisyNote = reps.some((r) => r.noisy)
      ? `* noisy: more than ${opts.maxBackground} % background CPU just before the repetition; ${clean.length ? 'left out of the medians' : 'every repetition was noisy, so all are used'}\n`
      : '';
    process.stdout.write(
      `\n${noisyNote}` +
        `(RSS in MiB: rdy = when the server first answered, RSS = after the warm-up (the compared figure), end = after\n` +
        ` the measurement, peak = VmHWM; latencies in ms at autocannon's whole-ms resolution, mean unrounded)\n\n` +
        `${row([`median of ${usedReps.length} rep(s)`, 'startup', 'RSS rdy', 'RSS', 'RSS end', 'peak', 'req/s', 'p50', 'p99', 'mean', 'µs/req'], w2)}\n` +
        line('empty database', e) +
        line(`${int(opts.jobs)} jobs of history`, h) +
        `\nRSS(history) − RSS(empty): ${fixed(rssDelta)} MiB (target <= ${TARGET_RSS_MIB}); per rep ${perRep
          .map((p) => fixed(p?.rss ?? Number.NaN))
          .join(', ')}\n` +
        `GET p99 history ÷ empty: ${fixed(p99Ratio, 2)} (target <= ${TARGET_P99_RATIO}); per rep ${perRep
          .map((p) => fixed(p?.p99 ?? Number.NaN, 2))
          .join(', ')}; req/s ratio per rep ${perRep.map((p) => pct(100 * (p?.rps ?? Number.NaN))).join(', ')}\n` +
        `startup with ${int(opts.jobs)} jobs: ${int(h.startupMs)} ms (empty: ${int(e.startupMs)} ms)\n` +
        `database file: ${fixed(historyBytes / 2 ** 20, 1)} MiB with ${int(opts.jobs)} jobs ` +
        `(${int(historyBytes / opts.jobs)} bytes per job), ${fixed(emptyBytes / 2 ** 20, 2)} MiB empty; generated in ` +
        `${fixed(gen.seconds, 1)} s\n`,
    );
    const summary =
      `SUMMARY B5 ${int(opts.jobs)} finished jobs, SQLite (${usedReps.length} rep(s)): RSS +${fixed(rssDelta)} MiB ` +
      `(${fixed(e.rssMiB)} → ${fixed(h.rssMiB)}), GET /Job p99 ${fixed(e.p99, 0)} → ${fixed(h.p99, 0)} ms ` +
      `(×${fixed(p99Ratio, 2)}), startup ${int(h.startupMs)} ms, DB ${fixed(historyBytes / 2 ** 20, 0)} MiB: ` +
      `${meets ? 'MEETS TARGET' : 'BELOW TARGET'}`;
    process.stdout.write(`\n${summary}\n`);
    if (opts.json)
      writeFileSync(
        opts.json,
        `${JSON.stringify(
          {
            startedAt: startedAt.toISOString(),
            command,
            node: process.version,
            options: opts,
            generation: gen,
            historyBytes,
            emptyBytes,
            reps,
            measurements: all,
            medians: { empty: e, history: h, rssDelta, p99Ratio },
            meetsTarget: meets,
          },
          null,
          2,
        )}\n`,
      );
    return opts.check && !meets ? 2 : 0;
  } finally {
    await stopAll();
    if (!opts.keep) {
      rmSync(work, { recursive: true, force: true });
      scratch.delete(work);
    }
  }
}

runBenchmark(main);
