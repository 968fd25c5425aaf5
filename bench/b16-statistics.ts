/**
 * Benchmark B16 (bench/README.md): what runtime statistics and estimates cost (docs/architecture.md §8b).
 *
 *   npm run bench:b16                                       # 3 reps × 10,000 jobs each way; 1,000,000 runs of history
 *   npm run bench:b16 -- --jobs 2000 --reps 1 --history 100000 --samples 100     # quick run
 *
 * 1. Drain: N × `POST …/Job/GLOBAL.System_Sleep` (MilliSeconds 0) at concurrency 50 over keep-alive HTTP into a fresh
 *    `millrace serve` (SQLite, core 0), which keeps the statistics (the default) or not (`--no-runtime-statistics`),
 *    repetitions interleaved (every other one in reverse order), each after 500 untimed jobs. Drain jobs/s = N ÷
 *    (first submit → the 50 ms poll of the jobs table that sees all N Completed), and the server's CPU time per job
 *    over the same stretch (less sensitive to a loaded machine). Reported: the medians, the cost 1 − kept ÷ not
 *    kept (target < 3 %), and the CPU per job kept ÷ not kept.
 * 2. Reads: one System_Sleep job runs as the model of a history, then H Completed copies of it are inserted through
 *    the store (transactions of 10,000), with durations spread from 0 to 10 minutes: they join the statistics as
 *    the server's own finished jobs do, in the transaction that writes them. The server starts again; sequential
 *    requests (one keep-alive connection, client on core 1) of `GET /JobDefinition/GLOBAL.System_Sleep` and of its
 *    `/statistics`, interleaved round by round after 50 of each. Reported: p50 and p99 of each, and the ratio
 *    statistics p99 ÷ definition p99 (target <= 2).
 */
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import type { JobRecord } from '../src/domain/job.ts';
import { openStore } from '../src/store/open.ts';
import { pinSelf, startServe, stop, submitModelJob } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { DRAIN_DEFINITION, drainCost } from './lib/drain-cost.ts';
import { count } from './lib/options.ts';
import { dist, fixed, int, pct, say, Table } from './lib/report.ts';

const TARGET_COST = 0.03;
const TARGET_RATIO = 2;
const CHUNK = 10_000;
const DEFINITION = DRAIN_DEFINITION;

/** Inserts `n` Completed copies of the model job through the store, durations spread over 0–10 minutes. */
async function insertHistory(dataDir: string, modelId: number, n: number): Promise<number> {
  const t0 = performance.now();
  const store = await openStore({ dataDir });
  try {
    const model = await store.jobs.get(modelId);
    if (model?.status !== 'Completed') throw new Error(`model job ${modelId} is ${model?.status}`);
    const start = Date.now() - 30 * 24 * 3600_000;
    for (let done = 0; done < n; done += CHUNK) {
      const size = Math.min(CHUNK, n - done);
      await store.transaction(async (tx) => {
        const jobIds = await tx.jobs.nextJobIds(size);
        const uniqueIds = await tx.nextUniqueIds(size);
        const jobs: JobRecord[] = [];
        for (let i = 0; i < size; i++) {
          const at = start + Math.floor(((done + i) * 29 * 24 * 3600_000) / n);
          // A spread of durations, so that the histogram holds hundreds of buckets as a real definition's would.
          const ms = ((done + i) * 7919) % 600_000;
          jobs.push({
            ...model,
            jobId: jobIds[i] as number,
            uniqueId: uniqueIds[i] as number,
            requestedStart: at,
            topStart: at,
            creationTime: at,
            scheduledStart: at,
            runStart: at,
            runEnd: at + ms,
            modificationTime: at + ms,
          });
        }
        await tx.jobs.insertMany(jobs);
      });
    }
    return (performance.now() - t0) / 1000;
  } finally {
    await store.close();
  }
}

type Stats = ReturnType<typeof dist> & { n: number; bytes: number };

const reads = new Table<Stats & { name: string }>([
  ['target', 50, (s) => s.name],
  ['n', 6, (s) => int(s.n)],
  ['p50 ms', 8, (s) => fixed(s.p50, 2)],
  ['p99 ms', 8, (s) => fixed(s.p99, 2)],
  ['bytes', 8, (s) => int(s.bytes)],
]);

benchmark({
  script: 'bench:b16',
  title: 'B16 statistics and estimates cost',
  about:
    'B16: no-op jobs drained with runtime statistics kept against not kept, and GET …/statistics of a definition ' +
    'with a long history against GET of the definition, on the same server in the same run.',
  options: {
    jobs: count(10_000, 'timed jobs per drain', { env: 'BENCH_JOBS' }),
    reps: count(3, 'drain repetitions of each way, interleaved', { env: 'BENCH_REPS' }),
    history: count(1_000_000, 'finished runs of history for the reads', { min: 1000, env: 'BENCH_HISTORY' }),
    samples: count(300, 'requests of each read per round', { min: 10, env: 'BENCH_SAMPLES' }),
    rounds: count(3, 'rounds of the reads', { env: 'BENCH_ROUNDS' }),
  },
  pin: 'servers',
  target: `drain cost >= ${pct(TARGET_COST * 100)} or statistics p99 ÷ definition p99 > ${TARGET_RATIO}`,
  async run({ opts, work, apiKey }) {
    // 1. The drain, kept against not kept.
    const {
      rates,
      cpu,
      on: kept,
      off,
      cost,
      cpuCost,
    } = await drainCost({
      opts,
      work,
      apiKey,
      offArgs: ['--no-runtime-statistics'],
      labels: { on: 'statistics kept', off: 'statistics not kept' },
      targetCost: TARGET_COST,
    });

    // 2. Reads against a long history.
    const dataDir = join(work, 'history');
    const first = await startServe({ pin: opts.pin, dataDir, apiKey, serveArgs: ['--no-local-agent'] });
    const modelId = await submitModelJob(first, apiKey);
    await stop(first.proc);
    const seconds = await insertHistory(dataDir, modelId, opts.history);
    say(
      `history: ${int(opts.history)} Completed ${DEFINITION} runs inserted through the store in ${fixed(seconds, 1)} s`,
    );
    const serve = await startServe({ pin: opts.pin, dataDir, apiKey, serveArgs: ['--no-local-agent'] });
    if (opts.pin) pinSelf(1);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<{ status: number; text: string }>((done, fail) => {
        const req = request(`${serve.base}${path}`, { agent, headers: { 'x-api-key': apiKey } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', fail);
        });
        req.on('error', fail);
        req.end();
      });
    const targets = [
      { name: `GET /JobDefinition/${DEFINITION}`, path: `/JobDefinition/${DEFINITION}` },
      { name: `GET /JobDefinition/${DEFINITION}/statistics`, path: `/JobDefinition/${DEFINITION}/statistics` },
    ];
    const sizes = new Map<string, number>();
    for (const t of targets) {
      const res = await get(t.path);
      if (res.status !== 200) throw new Error(`${t.path}: ${res.status} ${res.text.slice(0, 300)}`);
      sizes.set(t.name, Buffer.byteLength(res.text));
    }
    const stats = JSON.parse((await get(targets[1]?.path as string)).text) as { Runs: number; LastRuns: unknown[] };
    if (stats.Runs < opts.history || stats.LastRuns.length !== 100)
      throw new Error(`statistics hold ${stats.Runs} runs and ${stats.LastRuns.length} last runs`);
    const once = async (path: string) => {
      const t0 = performance.now();
      const res = await get(path);
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      return performance.now() - t0;
    };
    for (const t of targets) for (let i = 0; i < 50; i++) await once(t.path);
    const samples = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < opts.rounds; round++)
      for (const t of targets) for (let i = 0; i < opts.samples; i++) samples.get(t.name)?.push(await once(t.path));
    agent.destroy();
    await stop(serve.proc);
    const of = (name: string): Stats => {
      const xs = samples.get(name) ?? [];
      return { ...dist(xs), n: xs.length, bytes: sizes.get(name) ?? 0 };
    };
    const [definition, statistics] = targets.map((t) => of(t.name)) as [Stats, Stats];
    const ratio = statistics.p99 / definition.p99;
    say(
      `sequential requests (1 connection, keep-alive), ${opts.rounds} round(s) × ${opts.samples} of each, ` +
        (opts.pin ? 'server on core 0, client on core 1' : 'UNPINNED'),
      '',
      reads.header(),
      ...targets.map((t) => reads.line({ name: t.name, ...of(t.name) })),
      '',
      `ratio statistics p99 ÷ definition p99: ${fixed(ratio, 2)} (target <= ${TARGET_RATIO})`,
    );
    return {
      summary:
        `B16 drain kept=${int(kept)}/s off=${int(off)}/s cost=${pct(cost * 100)} cpu_cost=${pct(cpuCost * 100)} | ` +
        `history=${opts.history} ` +
        `definition_p99=${fixed(definition.p99, 2)} statistics_p99=${fixed(statistics.p99, 2)} ratio=${fixed(ratio, 2)}`,
      meets: cost < TARGET_COST && ratio <= TARGET_RATIO,
      results: { rates, cpu, kept, off, cost, cpuCost, reads: { definition, statistics }, ratio },
    };
  },
});
