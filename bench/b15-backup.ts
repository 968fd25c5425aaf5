/**
 * Benchmark B15 (method in bench/README.md): online backup and the move to PostgreSQL.
 *
 *   npm run bench:b15                                 # 1 GiB database, 2 reps × 20,000 jobs, PostgreSQL "auto"
 *   npm run bench:b15 -- --db-mib 100 --jobs 5000 --reps 1 --pg none     # quick run, no migration
 *
 * 1. `millrace serve` (core 0) runs one System_Sleep job, stops; its row is the model of --db-mib of finished jobs
 *    inserted with better-sqlite3 (as B5 does), and the server starts again on that database.
 * 2. Each repetition drains --jobs no-op System jobs as B1 does (this process, core 1, submits at --concurrency and
 *    counts Completed rows): once alone, once while `millrace backup` (core 1) copies the database; meanwhile a GET
 *    probe (20/s, a worker thread) times GET /Job/<id>, and the server's statistics file gives its event-loop delay.
 *    Reported: drain jobs/s with ÷ without (target >= 80 %), the backup's time and size, GET p99 and the loop's
 *    worst p99 during the backup against the drain alone.
 * 3. Migration rate: a fresh server with --migrate-jobs finished jobs (the same generator), stopped, then
 *    `millrace migrate --to` a new database of the PostgreSQL server (--pg URL, "auto" a throwaway cluster, "none"
 *    skips it); rows per second as the command prints them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { JobsReader, loopDelay, pollUntil, statsBetween, submitMany, submitter } from './agent-harness.ts';
import { ALL_CPUS, finalizers, launch, NoisyReps, pinned, ROOT, startServe, stop, submitModelJob } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { startProbe } from './lib/get-probe.ts';
import { count, shared, text, type Values } from './lib/options.ts';
import { dist, fixed, int, median, pct, say } from './lib/report.ts';

const TARGET = 0.8;
const OPTIONS = {
  dbMib: count(1024, 'size of the database backed up, MiB', { env: 'BENCH_DB_MIB' }),
  jobs: count(20_000, 'no-op jobs drained per measurement', { env: 'BENCH_JOBS' }),
  concurrency: count(32, 'submits in flight', { env: 'BENCH_CONCURRENCY' }),
  reps: count(2, 'repetitions (without, then with the backup)', { env: 'BENCH_REPS' }),
  migrateJobs: count(10_000, 'finished jobs of the migration data set', { env: 'BENCH_MIGRATE_JOBS' }),
  pg: text('auto', 'PostgreSQL for the migration: a server URL, "auto" (scripts/pg-cluster.sh) or "none"', {
    arg: 'URL|auto|none',
  }),
  maxBackground: shared.maxBackground,
};
type Options = Values<typeof OPTIONS> & { pin: boolean };
const NOOP = Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }));

/** Finished jobs copied from the model row until the file holds `mib` MiB or `rows` rows; answers the rows made. */
function grow(file: string, modelId: number, limit: { mib?: number; rows?: number }): number {
  const db = new BetterSqlite3(file);
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = OFF');
    const model = db.prepare('select * from jobs where job_id = ?').get(modelId) as Record<string, unknown>;
    const columns = Object.keys(model);
    const insert = db.prepare(`insert into jobs (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
    const seq = (name: string) => db.prepare('select value from sequences where name = ?').pluck().get(name) as number;
    let [jobId, uniqueId] = [seq('job_id'), seq('unique_id')];
    const history = db.prepare(
      "insert into job_history (job_id, time, from_status, to_status, user_name, cause, detail) values (?, ?, 'Running', 'Completed', null, 'finished', null)",
    );
    const batch = db.transaction((n: number) => {
      for (let i = 0; i < n; i++) {
        insert.run(columns.map((c) => (c === 'job_id' ? ++jobId : c === 'unique_id' ? ++uniqueId : model[c])));
        history.run(jobId, model.run_end);
      }
    });
    let made = 0;
    const enough = () =>
      (limit.rows !== undefined && made >= limit.rows) ||
      (limit.mib !== undefined && statSync(file).size >= limit.mib * 2 ** 20);
    while (!enough()) {
      const n = Math.min(50_000, (limit.rows ?? Number.POSITIVE_INFINITY) - made);
      batch(n);
      made += n;
    }
    db.prepare("update sequences set value = ? where name = 'job_id'").run(jobId);
    db.prepare("update sequences set value = ? where name = 'unique_id'").run(uniqueId);
    db.pragma('journal_mode = WAL');
    return made;
  } finally {
    db.close();
  }
}

/** A server whose database holds the generated history; answers its data folder and the model job. */
async function preparedData(opts: Options, dir: string, apiKey: string, limit: { mib?: number; rows?: number }) {
  const first = await startServe({ pin: opts.pin, dataDir: dir, apiKey });
  const modelId = await submitModelJob(first, apiKey);
  await stop(first.proc);
  const t0 = performance.now();
  const rows = grow(join(dir, 'millrace.sqlite'), modelId, limit);
  return { modelId, rows, seconds: (performance.now() - t0) / 1000 };
}

interface Drain {
  rep: number;
  backup: boolean;
  jobsPerSec: number;
  backupSeconds: number;
  archiveMiB: number;
  getP99: number;
  loopP99: number;
}

/** Drains `opts.jobs` no-op jobs, with a backup running beside when `backupTo` is given. */
async function drain(
  opts: Options,
  serve: Awaited<ReturnType<typeof startServe>>,
  apiKey: string,
  rep: number,
  backupTo?: string,
): Promise<Drain> {
  const reader = new JobsReader(serve.dataDir);
  const http = submitter(serve.base, apiKey, opts.concurrency);
  const after = reader.maxJobId();
  const probe = startProbe(`${serve.base}/Job/${after}`, apiKey, 20);
  const wall0 = Date.now();
  const t0 = performance.now();
  let backupSeconds = Number.NaN;
  const backup = backupTo
    ? (async () => {
        const [cmd, args] = pinned(opts.pin, 1, process.execPath, [
          join(ROOT, 'bin/millrace'),
          'backup',
          '--data',
          serve.dataDir,
          '--to',
          backupTo,
        ]);
        const proc = launch('backup', cmd, args, {});
        while (proc.exitCode === undefined) await new Promise((r) => setTimeout(r, 20));
        if (proc.exitCode !== 0) throw new Error(`millrace backup exited ${proc.exitCode}\n${proc.tail.join('\n')}`);
        backupSeconds = (performance.now() - t0) / 1000;
      })()
    : undefined;
  try {
    await submitMany(http, 'GLOBAL.System_Sleep', NOOP, opts.jobs, opts.concurrency);
    const done = await pollUntil(
      () => reader.completed(after) >= opts.jobs,
      50,
      600,
      () => `${reader.completed(after)} of ${opts.jobs} Completed`,
    );
    await backup;
    const samples = await probe.stop();
    const until = backupTo ? t0 + backupSeconds * 1000 : done;
    const window = samples.filter((s) => s.at <= wall0 + (until - t0));
    const loop = loopDelay(statsBetween(serve.statsFile, wall0, wall0 + (until - t0)));
    return {
      rep,
      backup: backupTo !== undefined,
      jobsPerSec: opts.jobs / ((done - t0) / 1000),
      backupSeconds,
      archiveMiB: backupTo ? statSync(backupTo).size / 2 ** 20 : Number.NaN,
      getP99: dist(window.map((s) => s.ms)).p99,
      loopP99: loop.worstP99,
    };
  } finally {
    http.close();
    reader.close();
  }
}

/** `millrace migrate` of a --migrate-jobs data set into a new database; answers the command's rows per second. */
async function migrationRate(
  opts: Options,
  work: string,
  apiKey: string,
): Promise<{ rows: number; rowsPerSec: number } | undefined> {
  if (opts.pg === 'none') return undefined;
  let admin = opts.pg;
  if (admin === 'auto') {
    const dir = mkdtempSync(join(tmpdir(), 'millrace-b15-pg-'));
    const script = join(ROOT, 'scripts/pg-cluster.sh');
    finalizers.set('pg-cluster', () => execFileSync('bash', [script, 'stop', dir], { stdio: 'ignore' }));
    const [cmd, args] = pinned(opts.pin, ALL_CPUS, 'bash', [script, 'start', dir]);
    admin = execFileSync(cmd, args, { encoding: 'utf8' }).trim().split('\n').pop() ?? '';
  }
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query('create database millrace_b15');
  await client.end();
  const url = new URL(admin);
  url.pathname = '/millrace_b15';
  const dir = join(work, 'migrate');
  await preparedData(opts, dir, apiKey, { rows: opts.migrateJobs });
  const out = execFileSync(
    process.execPath,
    [join(ROOT, 'bin/millrace'), 'migrate', '--from', dir, '--to', url.toString()],
    { encoding: 'utf8' },
  );
  const m = /^counts match: (\d+) rows in [\d.]+ s \((\d+) rows\/s\)$/m.exec(out);
  if (!m) throw new Error(`millrace migrate did not report matching counts:\n${out}`);
  return { rows: Number(m[1]), rowsPerSec: Number(m[2]) };
}

benchmark({
  script: 'bench:b15',
  title: 'B15 online backup and migration',
  about:
    'B15: no-op jobs drained while millrace backup copies a large SQLite database, against the same drain alone ' +
    '(target: at least 80 %), the backup time, GET p99 and loop delay meanwhile; and millrace migrate rows/s.',
  options: OPTIONS,
  pin: 'self',
  keep: true,
  target: `the drain with the backup is below ${TARGET * 100} % of the drain alone`,
  async run({ opts, work, apiKey }) {
    const dataDir = join(work, 'data');
    const made = await preparedData(opts, dataDir, apiKey, { mib: opts.dbMib });
    const dbMiB = statSync(join(dataDir, 'millrace.sqlite')).size / 2 ** 20;
    say(
      `database: ${int(made.rows)} finished jobs with history, ${fixed(dbMiB, 0)} MiB, made in ${fixed(made.seconds, 0)} s`,
      '',
    );
    const serve = await startServe({ pin: opts.pin, dataDir, apiKey, statsFile: join(work, 'stats.jsonl') });
    const all: Drain[] = [];
    const noise = new NoisyReps(opts.maxBackground);
    try {
      say('rep  backup  jobs/s  backup s  archive MiB  GET p99 ms  loop p99 ms');
      for (let rep = 1; rep <= opts.reps; rep++) {
        await noise.begin(rep);
        for (const backupTo of [undefined, join(work, `backup-${rep}.zip`)]) {
          const d = await drain(opts, serve, apiKey, rep, backupTo);
          all.push(d);
          say(
            `${String(rep).padStart(3)}  ${(d.backup ? 'yes' : 'no').padEnd(6)}  ${int(d.jobsPerSec).padStart(6)}  ${fixed(d.backupSeconds, 1).padStart(8)}  ${fixed(d.archiveMiB, 0).padStart(11)}  ${fixed(d.getP99, 0).padStart(10)}  ${fixed(d.loopP99, 0).padStart(11)}`,
          );
        }
      }
    } finally {
      await stop(serve.proc);
    }
    const pick = (backup: boolean, f: (d: Drain) => number) => median(all.filter((d) => d.backup === backup).map(f));
    const share = pick(true, (d) => d.jobsPerSec) / pick(false, (d) => d.jobsPerSec);
    const migration = await migrationRate(opts, work, apiKey);
    if (migration)
      say(
        '',
        `migration: ${int(migration.rows)} rows of ${int(opts.migrateJobs)} jobs at ${int(migration.rowsPerSec)} rows/s`,
      );
    const results = {
      dbMiB,
      drains: all,
      drainShare: share,
      backupSeconds: pick(true, (d) => d.backupSeconds),
      getP99Backup: pick(true, (d) => d.getP99),
      getP99Alone: pick(false, (d) => d.getP99),
      loopP99Backup: pick(true, (d) => d.loopP99),
      ...(migration ? { migrationRowsPerSec: migration.rowsPerSec, migrationRows: migration.rows } : {}),
    };
    return {
      results,
      meets: share >= TARGET,
      summary:
        `drain with backup ${pct(100 * share)} of alone (target >= ${TARGET * 100} %), backup of ${fixed(dbMiB, 0)} MiB ` +
        `${fixed(results.backupSeconds, 1)} s, GET p99 ${fixed(results.getP99Backup, 0)} ms (alone ${fixed(results.getP99Alone, 0)} ms), ` +
        `loop p99 ${fixed(results.loopP99Backup, 0)} ms` +
        (migration ? `, migration ${int(migration.rowsPerSec)} rows/s` : ''),
    };
  },
});
