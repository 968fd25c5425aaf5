/**
 * Benchmark B14 (method in bench/README.md): bulk actions. 10,000 queued jobs are held with one
 * `POST …/Job/bulk/hold` (by a Filter on their queue) and released with one `POST …/Job/bulk/release`, while a probe
 * GETs one job 50 times a second: the time of each bulk request and the p99 of the probe's answers during them. In
 * the same run, the same 10,000 jobs are held by 10,000 single `PUT …/Job/<id>/hold` requests, 50 in flight: the
 * ratio of the two hold times is the figure.
 *
 *   npm run bench:b14                          # 3 reps × 10,000 jobs
 *   npm run bench:b14 -- --jobs 2000 --reps 1  # quick run
 *
 * Ours: `millrace serve` (SQLite) on a fresh data folder per repetition, pinned to core 0; the jobs are of a System
 * definition in a queue no process server serves, so they stay Queued until acted on. The harness (load generator and
 * probe thread) is pinned to core 1. Event-loop delay is the server's own per-second statistics over each phase.
 */
import { Agent, request as httpRequest } from 'node:http';
import { loopDelay, startJobServer, statsBetween, submitMany, waitForQuiet } from './agent-harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { type Samples, startProbe } from './lib/get-probe.ts';
import { amount, count, shared, type Values } from './lib/options.ts';
import { type Dist, dist, fixed, int, median, say, Table } from './lib/report.ts';

const TARGET_RATIO = 5;
const QUEUE = 'GLOBAL.B14Parked';

const OPTIONS = {
  jobs: count(10_000, 'queued jobs held and released (at most 10,000: one bulk request)', { env: 'BENCH_JOBS' }),
  reps: count(3, 'repetitions (a fresh server each)', { env: 'BENCH_REPS' }),
  concurrency: count(50, 'single hold requests in flight'),
  probeRate: amount(50, 'GETs per second of the probe', { min: 1 }),
  maxLoad: shared.maxLoad,
  quietTimeout: shared.quietTimeout,
};
type Options = Values<typeof OPTIONS>;

interface Rep {
  rep: number;
  loadavg1: number;
  bulkHoldMs: number;
  bulkReleaseMs: number;
  singlesHoldMs: number;
  /** The probe's answer times during the bulk hold and release, and during the single holds. */
  probeBulk: Dist;
  probeSingles: Dist;
  /** The worst per-second p99 and the max of the server's event-loop delay during the bulk requests. */
  loopP99: number;
  loopMax: number;
  ratio: number;
}

/** One request with a JSON body over a kept-alive socket; resolves with its status and body. */
function send(agent: Agent, base: string, apiKey: string, method: string, path: string, body?: unknown) {
  const url = new URL(`${base}${path}`);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const once = (retry: boolean) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method,
          agent,
          headers: {
            'X-API-Key': apiKey,
            ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      // A kept-alive socket the server closed after idling (between phases) is noticed only when reused: once more.
      req.on('error', (err) => (retry && req.reusedSocket ? once(false).then(resolve, reject) : reject(err)));
      req.end(payload);
    });
  return once(true);
}

const answerMs = (samples: Samples): number[] => {
  const failed = samples.filter((s) => s.status !== 200);
  if (failed.length > 0) throw new Error(`${failed.length} probe GETs failed (status ${failed[0]?.status})`);
  return samples.map((s) => s.ms);
};

async function runRep(opts: Options, work: string, apiKey: string, pin: boolean, rep: number): Promise<Rep> {
  const js = await startJobServer({ pin, work, name: String(rep), apiKey, concurrency: opts.concurrency });
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const call = (method: string, path: string, body?: unknown) => send(agent, js.serve.base, apiKey, method, path, body);
  try {
    for (const [path, body] of [
      [`/Queue/${QUEUE}`, {}],
      [`/JobDefinition/${QUEUE}`, { JobDefinitionType: 'System', DefaultQueue: QUEUE }],
    ] as const) {
      const r = await call('POST', path, body);
      if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.body}`);
    }
    const { ids } = await submitMany(js.http, QUEUE, Buffer.from('{}'), opts.jobs, opts.concurrency, { ids: true });
    const q = await waitForQuiet(`rep ${rep}`, opts.maxLoad, opts.quietTimeout);
    const bulk = async (action: string) => {
      const t = performance.now();
      const r = await call('POST', `/Job/bulk/${action}`, { Filter: { Queue: QUEUE } });
      const ms = performance.now() - t;
      const answer = JSON.parse(r.body) as { Done?: number };
      if (r.status !== 200 || answer.Done !== opts.jobs)
        throw new Error(`bulk ${action}: ${r.status} ${r.body.slice(0, 300)}`);
      return ms;
    };
    const probeUrl = `${js.serve.base}/Job/${ids[0]}`;
    let probe = startProbe(probeUrl, apiKey, opts.probeRate);
    const t0 = Date.now();
    const bulkHoldMs = await bulk('hold');
    const bulkReleaseMs = await bulk('release');
    const t1 = Date.now();
    const probeBulk = dist(answerMs(await probe.stop()));
    const loop = loopDelay(statsBetween(js.serve.statsFile, t0, t1));

    probe = startProbe(probeUrl, apiKey, opts.probeRate);
    let next = 0;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: opts.concurrency }, async () => {
        while (next < ids.length) {
          const id = ids[next++];
          const r = await call('PUT', `/Job/${id}/hold`);
          if (r.status !== 200) throw new Error(`PUT /Job/${id}/hold: ${r.status} ${r.body.slice(0, 300)}`);
        }
      }),
    );
    const singlesHoldMs = performance.now() - t;
    const probeSingles = dist(answerMs(await probe.stop()));
    return {
      rep,
      loadavg1: q.loadavg1,
      bulkHoldMs,
      bulkReleaseMs,
      singlesHoldMs,
      probeBulk,
      probeSingles,
      loopP99: loop.worstP99,
      loopMax: loop.max,
      ratio: singlesHoldMs / bulkHoldMs,
    };
  } finally {
    agent.destroy();
    await js.close();
  }
}

const perRep = new Table<Rep>([
  ['rep', 4, (r) => String(r.rep)],
  ['load1', 5, (r) => fixed(r.loadavg1, 2)],
  ['bulk hold', 9, (r) => `${int(r.bulkHoldMs)} ms`],
  ['bulk rel', 9, (r) => `${int(r.bulkReleaseMs)} ms`],
  ['GET p99', 8, (r) => fixed(r.probeBulk.p99, 1)],
  ['GET max', 8, (r) => fixed(r.probeBulk.max, 1)],
  ['loopP99', 7, (r) => fixed(r.loopP99, 1)],
  ['loopMax', 7, (r) => fixed(r.loopMax, 1)],
  ['singles', 9, (r) => `${int(r.singlesHoldMs)} ms`],
  ['GET p99', 8, (r) => fixed(r.probeSingles.p99, 1)],
  ['ratio', 6, (r) => `${fixed(r.ratio, 1)}×`],
]);

benchmark({
  script: 'bench:b14',
  title: 'B14 bulk actions',
  about:
    'B14: one bulk hold and one bulk release of 10,000 queued jobs (their time, and the p99 of other GETs meanwhile) ' +
    'against 10,000 single hold requests at concurrency 50, in the same run.',
  options: OPTIONS,
  pin: 'self',
  target: `the bulk hold is less than ${TARGET_RATIO}× faster than the single holds`,
  async run({ opts, work, apiKey }) {
    if (opts.jobs > 10_000) throw new Error('--jobs: at most 10,000 (one bulk request)');
    say(
      `ours:    millrace serve (SQLite); ${int(opts.jobs)} Queued jobs (a queue no process server serves); ` +
        `POST …/Job/bulk/hold then …/release with Filter {Queue}; then ${int(opts.jobs)} × PUT …/Job/<id>/hold, ` +
        `${opts.concurrency} in flight; a probe GETs one job ${opts.probeRate}/s during each`,
      `pinning: ${opts.pin ? 'server on core 0; load generator and probe (this process) on core 1' : 'UNPINNED'}`,
      '',
      perRep.header(),
    );
    const reps: Rep[] = [];
    for (let rep = 1; rep <= opts.reps; rep++) {
      const r = await runRep(opts, work, apiKey, opts.pin, rep);
      reps.push(r);
      say(perRep.line(r));
    }
    const m = (f: (r: Rep) => number) => median(reps.map(f));
    const ratio = m((r) => r.ratio);
    return {
      summary:
        `bulk hold ${int(m((r) => r.bulkHoldMs))} ms, release ${int(m((r) => r.bulkReleaseMs))} ms ` +
        `(GET p99 ${fixed(
          m((r) => r.probeBulk.p99),
          1,
        )} ms, loop max ${fixed(
          m((r) => r.loopMax),
          0,
        )} ms); ` +
        `${int(opts.jobs)} single holds ${int(m((r) => r.singlesHoldMs))} ms (GET p99 ${fixed(
          m((r) => r.probeSingles.p99),
          1,
        )} ms); ` +
        `bulk ${fixed(ratio, 1)}× faster (target ≥ ${TARGET_RATIO}×)`,
      meets: ratio >= TARGET_RATIO,
      results: { reps },
    };
  },
});
