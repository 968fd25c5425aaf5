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
 * this process (core 1, with the load generator); each parses its stream and records the job events. Afterwards
 * every client must hold, for each of the N jobs, exactly `null→Queued, Queued→Running, Running→Completed` in that
 * order. Repetitions alternate without / with clients; medians and the ratio with ÷ without are reported (target
 * ≥ 90 %). Exit status: 0 done, 1 failure, 2 target missed with --check.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, type IncomingMessage, request as httpRequest } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import {
  canPin,
  commandLine,
  fixed,
  int,
  median,
  numberOption,
  pct,
  pinSelf,
  runBenchmark,
  type Serve,
  scratch,
  startServe,
  stop,
} from './harness.ts';

const TARGET_RATIO = 0.9;
const DEFINITION = 'GLOBAL.System_Sleep';
const BODY = Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }));
const JOB_EVENT = /"jobId":(\d+),.*?"from":(null|"(\w+)"),"to":"(\w+)"/;
const EXPECTED = 'null>Queued,Queued>Running,Running>Completed';

interface Options {
  jobs: number;
  clients: number;
  concurrency: number;
  reps: number;
  warmupJobs: number;
  pin: boolean;
  check: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      jobs: { type: 'string' },
      clients: { type: 'string' },
      concurrency: { type: 'string' },
      reps: { type: 'string' },
      'warmup-jobs': { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
    },
  });
  return {
    jobs: Math.floor(numberOption(values.jobs, 'BENCH_JOBS', 10_000, 1)),
    clients: Math.floor(numberOption(values.clients, undefined, 50, 1)),
    concurrency: Math.floor(numberOption(values.concurrency, 'BENCH_CONCURRENCY', 50, 1)),
    reps: Math.floor(numberOption(values.reps, 'BENCH_REPS', 2, 1)),
    warmupJobs: Math.floor(numberOption(values['warmup-jobs'], undefined, 1000, 0)),
    pin: !values['no-pin'],
    check: values.check,
  };
}

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

/** N submits, C in flight; returns the job ids. */
async function submitJobs(base: string, apiKey: string, n: number, concurrency: number): Promise<number[]> {
  const url = new URL(`${base}/Job/${DEFINITION}?fields=jobId`);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const headers = { 'X-API-Key': apiKey, 'Content-Type': 'application/json', 'Content-Length': String(BODY.length) };
  const ids: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const r = await post(url, headers, agent);
      if (r.status !== 201) throw new Error(`POST ${url.pathname}: ${r.status} ${r.body.slice(0, 300)}`);
      ids.push((JSON.parse(r.body) as { jobId: number }).jobId);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  } finally {
    agent.destroy();
  }
  return ids;
}

/** A feed client that keeps, per job, its moves as `from>to` in arrival order. */
interface FeedClient {
  ready: Promise<void>;
  moves: Map<number, string[]>;
  ended: boolean;
  close(): void;
}

function openFeed(base: string, apiKey: string): FeedClient {
  const moves = new Map<number, string[]>();
  let resolveReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    resolveReady = r;
  });
  const client: FeedClient = { ready, moves, ended: false, close: () => req.destroy() };
  const req = httpRequest(`${base}/stream`, { headers: { 'X-API-Key': apiKey } }, (res: IncomingMessage) => {
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.includes('event: ready')) resolveReady();
        else if (block.includes('event: job\n')) {
          // A regular expression, not JSON.parse: the clients share a core with the load generator.
          const m = JOB_EVENT.exec(block) as RegExpExecArray;
          const id = Number(m[1]);
          const move = `${m[2] === 'null' ? 'null' : m[3]}>${m[4]}`;
          const list = moves.get(id);
          if (list) list.push(move);
          else moves.set(id, [move]);
        }
        end = buffer.indexOf('\n\n');
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
  let db: BetterSqlite3.Database | undefined;
  const feeds: FeedClient[] = [];
  try {
    serve = await startServe({ pin: opts.pin, dataDir, apiKey });
    db = new BetterSqlite3(join(dataDir, 'millrace.sqlite'), { readonly: true, fileMustExist: true });
    const completed = db.prepare("select count(*) from jobs where status = 'Completed'").pluck();
    const until = async (n: number) => {
      const deadline = performance.now() + 300_000;
      for (;;) {
        if ((completed.get() as number) >= n) return performance.now();
        if (performance.now() > deadline) throw new Error(`not drained after 300 s`);
        await sleep(50);
      }
    };
    if (opts.warmupJobs > 0) {
      await submitJobs(serve.base, apiKey, opts.warmupJobs, opts.concurrency);
      await until(opts.warmupJobs);
    }
    for (let i = 0; i < clients; i++) feeds.push(openFeed(serve.base, apiKey));
    await Promise.all(feeds.map((f) => f.ready));
    const t0 = performance.now();
    const [ids, t1] = await Promise.all([
      submitJobs(serve.base, apiKey, opts.jobs, opts.concurrency),
      until(opts.warmupJobs + opts.jobs),
    ]);
    // The last events may still be on their way: wait (untimed) until every client has every job's end.
    const deadline = performance.now() + 60_000;
    const done = (f: FeedClient) => ids.every((id) => f.moves.get(id)?.at(-1) === 'Running>Completed');
    while (!feeds.every((f) => f.ended || done(f)) && performance.now() < deadline) await sleep(100);
    const complete = feeds.filter((f) => !f.ended && ids.every((id) => f.moves.get(id)?.join(',') === EXPECTED));
    const drainS = (t1 - t0) / 1000;
    return { clients, jobsPerSec: opts.jobs / drainS, drainS, complete: complete.length };
  } finally {
    for (const f of feeds) f.close();
    db?.close();
    if (serve) await stop(serve.proc);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const cpus = availableParallelism();
  if (opts.pin) opts.pin = canPin();
  if (opts.pin) pinSelf(1);
  const work = mkdtempSync(join(tmpdir(), 'millrace-b10-'));
  scratch.add(work);
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  process.stdout.write(
    `Millrace B10 live feed under load, ${new Date().toISOString()}, node ${process.version}, ${cpus} CPUs, ` +
      `loadavg ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}\ncommand: ${commandLine('bench:b10')}\n` +
      `millrace serve (SQLite), ${int(opts.jobs)} × POST /Job/${DEFINITION} (MilliSeconds 0), ${opts.concurrency} in ` +
      `flight; ${int(opts.warmupJobs)} warm-up jobs; ${opts.reps} rep(s) alternating 0 and ${opts.clients} SSE clients` +
      (opts.pin ? '; server on core 0, load generator and clients on core 1\n\n' : '; UNPINNED\n\n'),
  );
  const without: Measurement[] = [];
  const withClients: Measurement[] = [];
  let failures = 0;
  for (let rep = 1; rep <= opts.reps; rep++)
    for (const clients of [0, opts.clients]) {
      const m = await measure(opts, work, apiKey, rep, clients);
      (clients === 0 ? without : withClients).push(m);
      if (m.complete !== clients) failures++;
      process.stdout.write(
        `rep ${rep}  clients ${String(clients).padStart(3)}  ${fixed(m.jobsPerSec, 0).padStart(6)} jobs/s  ` +
          `drain ${fixed(m.drainS, 2)} s  clients with every event of every job: ${m.complete}/${clients}\n`,
      );
    }
  const a = median(without.map((m) => m.jobsPerSec));
  const b = median(withClients.map((m) => m.jobsPerSec));
  const ratio = b / a;
  process.stdout.write(
    `\nmedian jobs/s: without clients ${fixed(a, 0)}, with ${opts.clients} clients ${fixed(b, 0)}; ` +
      `ratio ${pct(100 * ratio)} (target ≥ ${pct(100 * TARGET_RATIO)})\n` +
      `every client received every event of its jobs: ${failures === 0 ? 'yes' : `NO (${failures} measurement(s) short)`}\n`,
  );
  if (failures > 0) return 1;
  return opts.check && ratio < TARGET_RATIO ? 2 : 0;
}

runBenchmark(main);
