/**
 * Benchmark B10: B1's no-op jobs drained with 50 live-feed (SSE) clients connected, against the same drain without
 * them, in the same run; and every client must have received every event of those jobs.
 *
 *   npm run bench:b10                                  # SQLite; 2 reps × 10,000 jobs, 50 clients
 *   npm run bench:b10 -- --jobs 20000 --clients 100 --reps 3
 *
 * Each measurement starts `millrace serve` on core 0 with a fresh data folder, drains --warmup-jobs untimed, then
 * (with clients) opens C connections to GET …/stream and waits for their `ready` event, then submits N ×
 * `POST …/Job/GLOBAL.System_Sleep` (MilliSeconds 0) at concurrency 50 while it counts Completed jobs in the SQLite
 * file every 50 ms (as B1). jobs/s = N ÷ (first submit → the poll that sees all N Completed). The clients are in
 * this process (core 1, with the load generator); each keeps its stream's bytes and parses them after the drain
 * (see openFeed). The server's CPU per job is reported beside jobs/s: what the feed costs the server. Afterwards
 * every client must hold, for each of the N jobs, exactly `null→Queued, Queued→Running, Running→Completed` in that
 * order. Repetitions alternate without / with clients; medians and the ratio with ÷ without are reported (target
 * ≥ 90 %). A client that missed an event fails the run.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { JobsReader, pollUntil, submitMany, submitter } from './agent-harness.ts';
import { processCpuSeconds, type Serve, startServe, stop } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { count, type Values } from './lib/options.ts';
import { fixed, int, median, pct, say } from './lib/report.ts';

const TARGET_RATIO = 0.9;
const DEFINITION = 'GLOBAL.System_Sleep';
const BODY = Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }));
const JOB_EVENT = /"jobId":(\d+),.*?"from":(null|"(\w+)"),"to":"(\w+)"/;
const EXPECTED = 'null>Queued,Queued>Running,Running>Completed';

const OPTIONS = {
  jobs: count(10_000, 'jobs per measurement', { env: 'BENCH_JOBS' }),
  clients: count(50, 'live-feed clients connected in the measurements with clients'),
  concurrency: count(50, 'HTTP submits in flight', { env: 'BENCH_CONCURRENCY' }),
  reps: count(2, 'repetitions, each without and then with the clients', { env: 'BENCH_REPS' }),
  warmupJobs: count(1000, 'untimed jobs each fresh server drains first', { min: 0 }),
};
type Options = Values<typeof OPTIONS> & { pin: boolean };

/** N submits, C in flight; returns the job ids (answers hold only the id). */
async function submitJobs(base: string, apiKey: string, n: number, concurrency: number): Promise<number[]> {
  const http = submitter(base, apiKey, concurrency);
  try {
    return (await submitMany(http, `${DEFINITION}?fields=jobId`, BODY, n, concurrency, { ids: true })).ids;
  } finally {
    http.close();
  }
}

/**
 * A feed client. While jobs drain it only keeps the bytes it receives: the clients share core 1 with the load
 * generator (on a real site they are browsers on other machines), and parsing 50 streams as they arrive took enough
 * of that core to slow the submits, which measured the clients rather than the server. `parse()` (untimed, after the
 * drain) turns the bytes into each job's moves, `from>to` in arrival order.
 */
interface FeedClient {
  ready: Promise<void>;
  moves: Map<number, string[]>;
  ended: boolean;
  parse(): void;
  close(): void;
}

function openFeed(base: string, apiKey: string): FeedClient {
  const moves = new Map<number, string[]>();
  let chunks: Buffer[] = [];
  let rest = '';
  let resolveReady: (() => void) | undefined;
  const ready = new Promise<void>((r) => {
    resolveReady = r;
  });
  const parse = () => {
    const text = rest + Buffer.concat(chunks).toString('utf8');
    chunks = [];
    const blocks = text.split('\n\n');
    rest = blocks.pop() ?? '';
    for (const block of blocks) {
      if (!block.includes('event: job\n')) continue;
      const m = JOB_EVENT.exec(block) as RegExpExecArray;
      const id = Number(m[1]);
      const move = `${m[2] === 'null' ? 'null' : m[3]}>${m[4]}`;
      const list = moves.get(id);
      if (list) list.push(move);
      else moves.set(id, [move]);
    }
  };
  const client: FeedClient = { ready, moves, ended: false, parse, close: () => req.destroy() };
  const req = httpRequest(`${base}/stream`, { headers: { 'X-API-Key': apiKey } }, (res: IncomingMessage) => {
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // The stream opens with `retry:` and `ready`; the test for it stops once it was seen.
      if (resolveReady && chunk.includes('event: ready')) {
        resolveReady();
        resolveReady = undefined;
      }
    });
    res.on('close', () => {
      client.ended = true;
    });
  });
  req.on('error', () => {
    client.ended = true;
  });
  req.end();
  return client;
}

interface Measurement {
  clients: number;
  jobsPerSec: number;
  drainS: number;
  /** Clients that had every event of every job, in order. */
  complete: number;
  /** CPU the server spent per job during the drain, ms: the feed's cost to the server, whatever limits jobs/s. */
  serverCpuMsPerJob: number;
  /** CPU of this process (load generator and clients, core 1) during the drain, % of one core. */
  driverCpuPct: number;
}

async function measure(
  opts: Options,
  work: string,
  apiKey: string,
  rep: number,
  clients: number,
): Promise<Measurement> {
  const dataDir = join(work, `rep-${rep}-${clients}`);
  mkdirSync(dataDir, { recursive: true });
  let serve: Serve | undefined;
  let reader: JobsReader | undefined;
  const feeds: FeedClient[] = [];
  try {
    serve = await startServe({ pin: opts.pin, dataDir, apiKey });
    const r = new JobsReader(dataDir);
    reader = r;
    const until = (n: number) =>
      pollUntil(
        () => r.completed() >= n,
        50,
        300,
        () => JSON.stringify(r.statuses()),
      );
    if (opts.warmupJobs > 0) {
      await submitJobs(serve.base, apiKey, opts.warmupJobs, opts.concurrency);
      await until(opts.warmupJobs);
    }
    for (let i = 0; i < clients; i++) feeds.push(openFeed(serve.base, apiKey));
    await Promise.all(feeds.map((f) => f.ready));
    const serverPid = serve.proc.pid;
    const cpu0 = { server: processCpuSeconds(serverPid), driver: process.cpuUsage() };
    const t0 = performance.now();
    const [ids, t1] = await Promise.all([
      submitJobs(serve.base, apiKey, opts.jobs, opts.concurrency),
      until(opts.warmupJobs + opts.jobs),
    ]);
    const serverCpuS = processCpuSeconds(serverPid) - cpu0.server;
    const driver = process.cpuUsage(cpu0.driver);
    // The last events may still be on their way: wait (untimed) until every client has every job's end.
    const deadline = performance.now() + 60_000;
    const done = (f: FeedClient) => {
      f.parse();
      return ids.every((id) => f.moves.get(id)?.at(-1) === 'Running>Completed');
    };
    while (!feeds.every((f) => f.ended || done(f)) && performance.now() < deadline) await sleep(100);
    for (const f of feeds) f.parse();
    const complete = feeds.filter((f) => !f.ended && ids.every((id) => f.moves.get(id)?.join(',') === EXPECTED));
    const drainS = (t1 - t0) / 1000;
    return {
      clients,
      jobsPerSec: opts.jobs / drainS,
      drainS,
      complete: complete.length,
      serverCpuMsPerJob: (1000 * serverCpuS) / opts.jobs,
      driverCpuPct: (driver.user + driver.system) / 1e4 / drainS,
    };
  } finally {
    for (const f of feeds) f.close();
    reader?.close();
    if (serve) await stop(serve.proc);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

benchmark({
  script: 'bench:b10',
  title: 'B10 live feed under load',
  about:
    "B10: B1's no-op jobs drained with live-feed (SSE) clients connected, against the same drain without them, in " +
    'the same run; every client must receive every event of those jobs.',
  options: OPTIONS,
  pin: 'self',
  target: `the ratio with ÷ without clients is below ${pct(100 * TARGET_RATIO)}`,
  async run({ opts, work, apiKey }) {
    say(
      `millrace serve (SQLite), ${int(opts.jobs)} × POST /Job/${DEFINITION} (MilliSeconds 0), ${opts.concurrency} in ` +
        `flight; ${int(opts.warmupJobs)} warm-up jobs; ${opts.reps} rep(s) alternating 0 and ${opts.clients} SSE clients` +
        (opts.pin ? '; server on core 0, load generator and clients on core 1' : '; UNPINNED'),
      '',
    );
    const without: Measurement[] = [];
    const withClients: Measurement[] = [];
    let failures = 0;
    for (let rep = 1; rep <= opts.reps; rep++)
      for (const clients of [0, opts.clients]) {
        const m = await measure(opts, work, apiKey, rep, clients);
        (clients === 0 ? without : withClients).push(m);
        if (m.complete !== clients) failures++;
        say(
          `rep ${rep}  clients ${String(clients).padStart(3)}  ${fixed(m.jobsPerSec, 0).padStart(6)} jobs/s  ` +
            `drain ${fixed(m.drainS, 2)} s  server CPU ${fixed(m.serverCpuMsPerJob, 3)} ms/job  load generator and ` +
            `clients ${fixed(m.driverCpuPct, 0)} % of a core  clients with every event of every job: ${m.complete}/${clients}`,
        );
      }
    const a = median(without.map((m) => m.jobsPerSec));
    const b = median(withClients.map((m) => m.jobsPerSec));
    const ratio = b / a;
    const cpuA = median(without.map((m) => m.serverCpuMsPerJob));
    const cpuB = median(withClients.map((m) => m.serverCpuMsPerJob));
    const everyEvent = failures === 0 ? 'yes' : `NO (${failures} measurement(s) short)`;
    say(
      '',
      `median jobs/s: without clients ${fixed(a, 0)}, with ${opts.clients} clients ${fixed(b, 0)}; ` +
        `ratio ${pct(100 * ratio)} (target ≥ ${pct(100 * TARGET_RATIO)})`,
      `median server CPU per job: without clients ${fixed(cpuA, 3)} ms, with ${opts.clients} clients ` +
        `${fixed(cpuB, 3)} ms (${pct((100 * cpuB) / cpuA)})`,
      `every client received every event of its jobs: ${everyEvent}`,
    );
    return {
      summary:
        `B10 ${int(opts.jobs)} no-op jobs, ${opts.reps} rep(s): every client every event: ${everyEvent} | without ` +
        `clients ${fixed(a, 0)} jobs/s, with ${opts.clients} clients ${fixed(b, 0)} jobs/s, ratio ${pct(100 * ratio)} ` +
        `(target ≥ ${pct(100 * TARGET_RATIO)})`,
      meets: ratio >= TARGET_RATIO,
      ...(failures > 0 ? { failure: `${failures} measurement(s) had a client without every event of every job` } : {}),
      results: {
        without,
        withClients,
        medians: { without: a, with: b, ratio, serverCpuMsPerJob: { without: cpuA, with: cpuB } },
        failures,
      },
    };
  },
});
