/**
 * Benchmark B9: a page of `GET /Job?Limit=100` at the top of a history of 1,000,000 jobs and deep in
 * it, against `GET /Job/<id>` of one job, in the same run on the same server.
 *
 *   npm run bench:b9                          # 1,000,000 jobs; 3 rounds of 300 samples of each target
 *   npm run bench:b9 -- --jobs 100000 --samples 100 --rounds 1    # quick run
 *
 * 1. `millrace serve` starts on a fresh data folder (SQLite) and one System_Sleep job (MilliSeconds 0) is
 *    submitted and run: the model of every generated job. The server is stopped.
 * 2. N Completed jobs are inserted through the store (`openStore`, `jobs.insertMany` in transactions of 10,000), as
 *    the server itself writes jobs: copies of the model with their own ids and creation times.
 * 3. The server starts again. Targets, each answered 200 (checked): `GET /Job/<id>` of the job in the middle of
 *    the history; `GET /Job?Limit=100` (page 1); `GET /Job?Limit=100&After=<cursor>` at page N/200 (half-way
 *    down: page 5,000 of 10,000 for 1,000,000 jobs); the same deep page with `Status=Completed` (the status
 *    index). Requests are sequential (one connection, keep-alive) from this process, pinned to core 1 with the
 *    server on core 0, interleaved target by target within each round, after a warm-up of 50 of each.
 * Reported: p50 and p99 of each target (ms, over all rounds), the ratio deep page p99 ÷ single GET p99 (target
 * <= 2) and deep ÷ first page (keyset paging: the depth costs nothing).
 */
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import type { JobRecord } from '../src/domain/job.ts';
import { encodeCursor } from '../src/services/list-query.ts';
import { openStore } from '../src/store/open.ts';
import { pinSelf, startServe, stop, submitModelJob } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { count } from './lib/options.ts';
import { dist, fixed, int, say, Table } from './lib/report.ts';

const TARGET_RATIO = 2;
const CHUNK = 10_000;

/** Inserts `n` copies of the model job through the store; returns the first and last new jobId and the seconds. */
async function insertHistory(
  dataDir: string,
  modelId: number,
  n: number,
): Promise<{ first: number; last: number; seconds: number }> {
  const t0 = performance.now();
  const store = await openStore({ dataDir });
  try {
    const model = await store.jobs.get(modelId);
    if (model?.status !== 'Completed') throw new Error(`model job ${modelId} is ${model?.status}`);
    const start = Date.now() - 7 * 24 * 3600_000;
    let first = 0;
    let last = 0;
    for (let done = 0; done < n; done += CHUNK) {
      const count = Math.min(CHUNK, n - done);
      await store.transaction(async (tx) => {
        const jobIds = await tx.jobs.nextJobIds(count);
        const uniqueIds = await tx.nextUniqueIds(count);
        const jobs: JobRecord[] = [];
        for (let i = 0; i < count; i++) {
          const at = start + Math.floor(((done + i) * 7 * 24 * 3600_000) / n);
          jobs.push({
            ...model,
            jobId: jobIds[i] as number,
            uniqueId: uniqueIds[i] as number,
            requestedStart: at,
            topStart: at,
            creationTime: at,
            scheduledStart: at + 2,
            runStart: at + 2,
            runEnd: at + 3,
            modificationTime: at + 3,
          });
        }
        await tx.jobs.insertMany(jobs);
        first ||= jobIds[0] as number;
        last = jobIds[count - 1] as number;
      });
    }
    return { first, last, seconds: (performance.now() - t0) / 1000 };
  } finally {
    await store.close();
  }
}

interface Target {
  name: string;
  path: string;
  /** Items a 200 answer must hold (checked once): 0 for a single job. */
  items: number;
}

type Stats = ReturnType<typeof dist> & { n: number; bytes: number };

const results = new Table<Stats & { name: string }>([
  ['target', 22, (s) => s.name],
  ['n', 6, (s) => int(s.n)],
  ['p50 ms', 8, (s) => fixed(s.p50, 2)],
  ['p99 ms', 8, (s) => fixed(s.p99, 2)],
  ['bytes', 9, (s) => int(s.bytes)],
]);

benchmark({
  script: 'bench:b9',
  title: 'B9 job list',
  about:
    'B9: a page of GET /Job?Limit=100 at the top of a job history and deep in it, against GET /Job/<id> of one job, ' +
    'on the same server in the same run.',
  options: {
    jobs: count(1_000_000, 'jobs of history to insert', { min: 1000, env: 'BENCH_JOBS' }),
    samples: count(300, 'requests of each target per round', { min: 10, env: 'BENCH_SAMPLES' }),
    rounds: count(3, 'rounds, each target measured in turn within a round', { env: 'BENCH_ROUNDS' }),
  },
  pin: 'servers',
  keep: true,
  target: `deep-page p99 ÷ single-GET p99 > ${TARGET_RATIO}`,
  async run({ opts, work, apiKey }) {
    const dataDir = join(work, 'data');
    const first = await startServe({ pin: opts.pin, dataDir, apiKey });
    const modelId = await submitModelJob(first, apiKey);
    await stop(first.proc);
    if (first.proc.exitCode !== 0) throw new Error(`the first server exited with ${first.proc.exitCode}`);

    const history = await insertHistory(dataDir, modelId, opts.jobs);
    const depthPage = Math.floor(opts.jobs / 200);
    // The cursor of page `depthPage` + 1: the last job of page `depthPage`, counting from the newest.
    const deepCursor = encodeCursor('j', history.last - depthPage * 100 + 1);
    const middle = history.first + Math.floor(opts.jobs / 2);
    say(
      `history: ${int(opts.jobs)} Completed System_Sleep jobs (ids ${int(history.first)}–${int(history.last)}) ` +
        `inserted through the store in ${fixed(history.seconds, 1)} s (${int(opts.jobs / history.seconds)} jobs/s)`,
    );

    const serve = await startServe({ pin: opts.pin, dataDir, apiKey });
    // Only now: the inserts above had every core.
    if (opts.pin) pinSelf(1);
    const targets: Target[] = [
      { name: `GET /Job/${middle}`, path: `/Job/${middle}`, items: 0 },
      { name: 'first page', path: '/Job?Limit=100', items: 100 },
      { name: `page ${int(depthPage + 1)}`, path: `/Job?Limit=100&After=${deepCursor}`, items: 100 },
      {
        name: `page ${int(depthPage + 1)} Completed`,
        path: `/Job?Limit=100&Status=Completed&After=${deepCursor}`,
        items: 100,
      },
    ];
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
    const once = async (t: Target): Promise<number> => {
      const t0 = performance.now();
      const res = await get(t.path);
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`${t.path}: ${res.status} ${res.text.slice(0, 300)}`);
      return ms;
    };
    const sizes = new Map<string, number>();
    for (const t of targets) {
      const res = await get(t.path);
      const text = res.text;
      const json = JSON.parse(text) as { items?: unknown[]; jobId?: number };
      const count = t.items === 0 ? (json.jobId === middle ? 0 : -1) : (json.items?.length ?? -1);
      if (res.status !== 200 || count !== t.items)
        throw new Error(`${t.path}: ${res.status}, ${count} items (want ${t.items})`);
      sizes.set(t.name, Buffer.byteLength(text));
      for (let i = 0; i < 50; i++) await once(t);
    }
    const samples = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < opts.rounds; round++)
      for (const t of targets) for (let i = 0; i < opts.samples; i++) samples.get(t.name)?.push(await once(t));
    agent.destroy();
    await stop(serve.proc);

    const stats = (t: Target | undefined): Stats => {
      const xs = samples.get(t?.name ?? '') ?? [];
      return { ...dist(xs), n: xs.length, bytes: sizes.get(t?.name ?? '') ?? 0 };
    };
    say(
      '',
      `sequential requests (1 connection, keep-alive), ${opts.rounds} round(s) × ${opts.samples} of each target, ` +
        (opts.pin ? 'server on core 0, client on core 1' : 'UNPINNED'),
      '',
      results.header(),
      ...targets.map((t) => results.line({ name: t.name, ...stats(t) })),
    );
    const [single, top, deep] = targets.slice(0, 3).map(stats) as [Stats, Stats, Stats];
    const ratio = deep.p99 / single.p99;
    const depthRatio = deep.p99 / top.p99;
    say(
      '',
      `ratio deep page p99 ÷ single GET p99: ${fixed(ratio, 2)} (target <= ${TARGET_RATIO})`,
      `ratio deep page p99 ÷ first page p99: ${fixed(depthRatio, 2)}`,
    );
    return {
      summary:
        `B9 jobs=${opts.jobs} single_p99=${fixed(single.p99, 2)} first_p99=${fixed(top.p99, 2)} ` +
        `deep_p99=${fixed(deep.p99, 2)} deep/single=${fixed(ratio, 2)} deep/first=${fixed(depthRatio, 2)}`,
      meets: ratio <= TARGET_RATIO,
      results: { results: Object.fromEntries(targets.map((t) => [t.name, stats(t)])), ratio, depthRatio },
    };
  },
});
