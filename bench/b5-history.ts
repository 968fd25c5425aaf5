/**
 * Benchmark B5 (method in bench/README.md): what a large job history costs the server. The same `millrace serve`
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
 * time with 1M jobs, database size.
 */
import { cpSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  autocannon,
  memoryOf,
  NoisyReps,
  processCpuSeconds,
  type RepInfo,
  startServe,
  stop,
  submitModelJob,
} from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { amount, count, shared, type Values } from './lib/options.ts';
import { fixed, int, medians, pct, say, Table } from './lib/report.ts';

const TARGET_RSS_MIB = 50;
const TARGET_P99_RATIO = 1.2;
const DAY_MS = 24 * 3600 * 1000;

const OPTIONS = {
  jobs: count(1_000_000, 'finished jobs to insert', { env: 'BENCH_JOBS' }),
  duration: amount(5, 'seconds per GET measurement', { min: 1, env: 'BENCH_DURATION' }),
  reps: count(3, 'repetitions of each database, interleaved', { env: 'BENCH_REPS' }),
  warmup: amount(2, 'autocannon warm-up seconds after each start, before RSS is read', { min: 1, env: 'BENCH_WARMUP' }),
  connections: count(50, 'autocannon connections', { env: 'BENCH_CONNECTIONS' }),
  maxBackground: shared.maxBackground,
};
type Options = Values<typeof OPTIONS> & { pin: boolean };

// ---------------------------------------------------------------------------------------------------------------
// The model job and the generated history.

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

interface Measurement extends RepInfo {
  target: Target;
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
  info: RepInfo,
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
        `${target}, repetition ${info.rep}: ${r.requests.total} requests, ${r.non2xx} non-2xx, ${r.errors} errors, ` +
          `${r.timeouts} timeouts (status codes ${JSON.stringify(r.statusCodeStats)}); every answer must be 2xx`,
      );
    return {
      ...info,
      target,
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

const perRep = new Table<Measurement>([
  ['rep target', 13, (m) => `${m.rep} ${m.target}${m.noisy ? ' *' : ''}`],
  ['load1', 5, (m) => fixed(m.loadavg1, 2)],
  ['bg%', 4, (m) => fixed(m.background, 0)],
  ['startup', 8, (m) => `${int(m.startupMs)}ms`],
  ['RSS rdy', 7, (m) => fixed(m.rssReadyMiB)],
  ['RSS', 7, (m) => fixed(m.rssMiB)],
  ['RSS end', 7, (m) => fixed(m.rssAfterMiB)],
  ['peak', 7, (m) => fixed(m.peakMiB)],
  ['req/s', 8, (m) => int(m.reqPerSec)],
  ['p50', 4, (m) => String(m.p50)],
  ['p99', 4, (m) => String(m.p99)],
  ['mean', 6, (m) => fixed(m.mean, 2)],
  ['µs/req', 7, (m) => fixed(m.cpuUsPerReq, 0)],
]);

const FIGURES = [
  'startupMs',
  'rssReadyMiB',
  'rssMiB',
  'rssAfterMiB',
  'peakMiB',
  'reqPerSec',
  'p50',
  'p99',
  'mean',
  'cpuUsPerReq',
] as const;
type Figures = Record<(typeof FIGURES)[number], number>;

const mediansTable = new Table<Figures>([
  ['', 26, () => ''],
  ['startup', 9, (x) => `${int(x.startupMs)}ms`],
  ['RSS rdy', 8, (x) => fixed(x.rssReadyMiB)],
  ['RSS', 7, (x) => fixed(x.rssMiB)],
  ['RSS end', 8, (x) => fixed(x.rssAfterMiB)],
  ['peak', 7, (x) => fixed(x.peakMiB)],
  ['req/s', 9, (x) => int(x.reqPerSec)],
  ['p50', 6, (x) => fixed(x.p50, 0)],
  ['p99', 6, (x) => fixed(x.p99, 0)],
  ['mean', 7, (x) => fixed(x.mean, 2)],
  ['µs/req', 7, (x) => fixed(x.cpuUsPerReq, 0)],
]);

benchmark({
  script: 'bench:b5',
  title: 'B5 history cost',
  about:
    'B5: what a history of finished jobs costs the server (RSS, GET /Job/<id> latency, startup, file size): the same ' +
    'millrace serve on an empty database and on one holding the history, interleaved in the same run.',
  options: OPTIONS,
  pin: 'servers',
  keep: true,
  target: `a target is missed (RSS delta <= ${TARGET_RSS_MIB} MiB, p99 ratio <= ${TARGET_P99_RATIO})`,
  async run({ opts, work, apiKey }) {
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
    say(
      `history: ${int(opts.jobs)} Completed GLOBAL.System_Sleep jobs (ids ${int(gen.firstId)}–${int(gen.lastId)}) ` +
        `inserted in ${fixed(gen.seconds, 1)} s (${int(opts.jobs / gen.seconds)} rows/s); database ` +
        `${fixed(gen.dbBytes / 2 ** 20, 1)} MiB (empty: ${fixed(emptyBytes / 2 ** 20, 2)} MiB)`,
      `GET:     /Job/${modelId} on the empty database, /Job/${middleId} on the history; autocannon ` +
        `${opts.connections} connections, ${opts.warmup} s warm-up then ${opts.duration} s; ${opts.reps} rep(s) ` +
        `interleaved, a fresh start each; ` +
        (opts.pin ? 'server on core 0, autocannon on core 1' : 'UNPINNED'),
      '',
      perRep.header(),
    );

    // 3. Interleaved measurements.
    const all: Measurement[] = [];
    const noise = new NoisyReps(opts.maxBackground);
    for (let rep = 1; rep <= opts.reps; rep++) {
      const info = await noise.begin(rep);
      for (const [target, dir, id] of [
        ['empty', emptyDir, modelId],
        ['history', historyDir, middleId],
      ] as const) {
        const m = await measure(opts, target, info, dir, apiKey, id);
        all.push(m);
        say(perRep.line(m));
      }
    }
    const historyBytes = statSync(dbFile).size;

    const used = noise.used();
    const of = (t: Target) => all.filter((m) => m.target === t && used.includes(m.rep));
    const e = medians(of('empty'), FIGURES);
    const h = medians(of('history'), FIGURES);
    const rssDelta = h.rssMiB - e.rssMiB;
    const p99Ratio = h.p99 / e.p99;
    const byRep = (f: (x: Measurement, y: Measurement) => string) =>
      of('history')
        .map((x) => {
          const y = of('empty').find((m) => m.rep === x.rep);
          return y ? f(x, y) : '-';
        })
        .join(', ');
    say(
      '',
      `${noise.note()}(RSS in MiB: rdy = when the server first answered, RSS = after the warm-up (the compared figure), end = after`,
      " the measurement, peak = VmHWM; latencies in ms at autocannon's whole-ms resolution, mean unrounded)",
      '',
      mediansTable.header(`median of ${used.length} rep(s)`),
      mediansTable.line(e, 'empty database'),
      mediansTable.line(h, `${int(opts.jobs)} jobs of history`),
      '',
      `RSS(history) − RSS(empty): ${fixed(rssDelta)} MiB (target <= ${TARGET_RSS_MIB}); per rep ${byRep((x, y) => fixed(x.rssMiB - y.rssMiB))}`,
      `GET p99 history ÷ empty: ${fixed(p99Ratio, 2)} (target <= ${TARGET_P99_RATIO}); per rep ${byRep((x, y) => fixed(x.p99 / y.p99, 2))}; ` +
        `req/s ratio per rep ${byRep((x, y) => pct((100 * x.reqPerSec) / y.reqPerSec))}`,
      `startup with ${int(opts.jobs)} jobs: ${int(h.startupMs)} ms (empty: ${int(e.startupMs)} ms)`,
      `database file: ${fixed(historyBytes / 2 ** 20, 1)} MiB with ${int(opts.jobs)} jobs ` +
        `(${int(historyBytes / opts.jobs)} bytes per job), ${fixed(emptyBytes / 2 ** 20, 2)} MiB empty; generated in ` +
        `${fixed(gen.seconds, 1)} s`,
    );
    return {
      summary:
        `B5 ${int(opts.jobs)} finished jobs, SQLite (${used.length} rep(s)): RSS +${fixed(rssDelta)} MiB ` +
        `(${fixed(e.rssMiB)} → ${fixed(h.rssMiB)}), GET /Job p99 ${fixed(e.p99, 0)} → ${fixed(h.p99, 0)} ms ` +
        `(×${fixed(p99Ratio, 2)}), startup ${int(h.startupMs)} ms, DB ${fixed(historyBytes / 2 ** 20, 0)} MiB`,
      meets: rssDelta <= TARGET_RSS_MIB && p99Ratio <= TARGET_P99_RATIO,
      results: {
        generation: gen,
        historyBytes,
        emptyBytes,
        reps: noise.reps,
        measurements: all,
        medians: { empty: e, history: h, rssDelta, p99Ratio },
      },
    };
  },
});
