/**
 * Benchmark B7: a chain of 100 steps × 10 calls of in-server no-op jobs (GLOBAL.System_Sleep,
 * MilliSeconds 0), from submit to Completed, against 1,000 plain no-op jobs submitted over HTTP and drained in the
 * same run. Both are 1,000 no-op jobs; the chain adds its ordering (a step starts when the last call of the one before
 * it is final) and 101 jobs of its own (the chain job and one job per step), all created when it is submitted.
 *
 *   npm run bench:b7                            # 2 reps, 100 × 10 chain and 1,000-job anchor in every rep
 *   npm run bench:b7 -- --steps 10 --reps 1     # quick run
 *   npm run bench:b7 -- --reps 1 --profile      # plus a CPU profile of the server over one chain
 *
 * Ours: `millrace serve` on a fresh data folder per repetition, pinned to core 0. (It starts its local agent too:
 * serve has no switch to leave it out; nothing here runs on it.) The harness pins itself to core 1. Chain: POST
 * …/Job/GLOBAL.Big once (submit latency = its answer time), then GET …/Job/<id> every --poll-ms until the chain is
 * final; seconds to Completed = the chain job's modification_time − the moment of the POST. Anchor: N POSTs of
 * GLOBAL.System_Sleep over keep-alive HTTP at C in flight, drained; seconds = the last modification_time − the first
 * POST. Both read from the jobs table (better-sqlite3, read-only), so poll intervals do not count. Chain and anchor
 * alternate which goes first.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isFinal } from '../src/domain/job-status.ts';
import type { JobStatus } from '../src/model/fields.ts';
import {
  type JobRow,
  type JobsReader,
  loopDelay,
  pollUntil,
  type Submitter,
  startJobServer,
  statsBetween,
  submitMany,
  waitForQuiet,
} from './agent-harness.ts';
import { monoUs, processCpuSeconds, type Serve } from './harness.ts';
import { benchmark, type Standard } from './lib/benchmark.ts';
import { amount, count, shared, type Values } from './lib/options.ts';
import { profileRun } from './lib/profile.ts';
import { fixed, int, median, quantile, say } from './lib/report.ts';

const CHAIN = 'GLOBAL.Big';
const NOOP = 'GLOBAL.System_Sleep';
const NOOP_BODY = Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }));

const OPTIONS = {
  // The JobChain type's own limits (src/model/types/JobChain.ts): 200 steps, 100 calls per step.
  steps: count(100, 'steps of the chain', { max: 200 }),
  calls: count(10, 'calls per step', { max: 100 }),
  reps: count(2, 'repetitions (a fresh server each; chain and anchor, order alternating)', { env: 'BENCH_REPS' }),
  anchorJobs: count(undefined, 'plain no-op jobs of the anchor', { defaultText: 'steps × calls' }),
  concurrency: count(50, 'HTTP submits in flight for the anchor'),
  warmupJobs: count(200, 'untimed no-op jobs every fresh server drains first', { min: 0 }),
  maxLoad: shared.maxLoad,
  quietTimeout: shared.quietTimeout,
  pollMs: amount(50, "how often the chain's status is read", { arg: 'MS', min: 1 }),
  timeout: amount(600, 'give up on a chain or a drain after S seconds', { min: 1 }),
};
type Options = Omit<Values<typeof OPTIONS>, 'anchorJobs'> & Standard & { anchorJobs: number };

async function post(url: string, apiKey: string, payload: unknown): Promise<{ status: number; text: string }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify(payload),
  });
  return { status: r.status, text: await r.text() };
}

/** GLOBAL.Big: a JobChain definition on GLOBAL.System and its steps, each with `calls` System_Sleep 0 calls. */
async function createChain(base: string, apiKey: string, steps: number, calls: number): Promise<void> {
  const def = await post(`${base}/JobDefinition/${CHAIN}`, apiKey, {
    JobDefinitionType: 'JobChain',
    DefaultQueue: 'GLOBAL.System',
  });
  if (def.status !== 201) throw new Error(`POST JobDefinition/${CHAIN}: ${def.status} ${def.text.slice(0, 300)}`);
  const call = {
    JobDefinition: NOOP,
    ParameterMappings: [{ Parameter: 'MilliSeconds', Source: 'Value', Value: '0' }],
  };
  const chain = await post(`${base}/JobChain/${CHAIN}`, apiKey, {
    Steps: Array.from({ length: steps }, (_, i) => ({ Name: `S${i + 1}`, Calls: Array(calls).fill(call) })),
  });
  if (chain.status !== 201) throw new Error(`POST JobChain/${CHAIN}: ${chain.status} ${chain.text.slice(0, 300)}`);
}

/** POSTs `n` no-op jobs, C in flight. */
async function submitNoops(http: Submitter, n: number, concurrency: number): Promise<void> {
  await submitMany(http, NOOP, NOOP_BODY, n, concurrency);
}

interface Common {
  rep: number;
  loadavg1: number;
  waitedS: number;
  /** Jobs this measurement created. */
  jobs: number;
  /** Submit → Completed, s (the jobs table's modification_time against the harness clock: same machine). */
  seconds: number;
  serverCpu: number;
  loopWorstP99: number;
  /** CLOCK_MONOTONIC µs around the measurement (for cutting a profile). */
  startUs: number;
  endUs: number;
}

interface ChainM extends Common {
  kind: 'chain';
  steps: number;
  submitMs: number;
  /** Per step, means over the steps (so they add up to the chain's time after its first step started), ms: step
   * started → its first call running, first call running → last call final, last call final → the next step started. */
  stepToCall: number;
  callsSpan: number;
  handoff: number;
  /** The slowest handoff, ms. */
  handoffMax: number;
}

interface AnchorM extends Common {
  kind: 'anchor';
  submitS: number;
}

function cpuPercent(pid: number, cpu0: number, t0: number, t1: number): number {
  return (100 * (processCpuSeconds(pid) - cpu0)) / Math.max(0.001, (t1 - t0) / 1000);
}

/**
 * Where a chain's time goes, from its jobs' rows. Rows come in job_id order: the chain job, then per step its step job
 * (the chain's own definition) followed by its calls, all created at submit.
 */
function stepTimings(
  rows: JobRow[],
  chainId: number,
): Pick<ChainM, 'stepToCall' | 'callsSpan' | 'handoff' | 'handoffMax'> {
  const steps: Array<{ start: number; calls: JobRow[] }> = [];
  for (const r of rows) {
    if (r.job_id === chainId) continue;
    if (r.definition === CHAIN) steps.push({ start: r.run_start ?? Number.NaN, calls: [] });
    else steps.at(-1)?.calls.push(r);
  }
  const stepToCall: number[] = [];
  const callsSpan: number[] = [];
  const handoff: number[] = [];
  for (const [i, s] of steps.entries()) {
    const firstRun = Math.min(...s.calls.map((c) => c.run_start ?? Number.NaN));
    const lastEnd = Math.max(...s.calls.map((c) => c.modification_time));
    stepToCall.push(firstRun - s.start);
    callsSpan.push(lastEnd - firstRun);
    const next = steps[i + 1];
    if (next) handoff.push(next.start - lastEnd);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    stepToCall: mean(stepToCall),
    callsSpan: mean(callsSpan),
    handoff: mean(handoff),
    handoffMax: quantile(handoff, 1),
  };
}

async function measureChain(
  opts: Options,
  serve: Serve,
  apiKey: string,
  reader: JobsReader,
  rep: number,
): Promise<ChainM> {
  const q = await waitForQuiet(`rep ${rep} chain`, opts.maxLoad, opts.quietTimeout);
  const after = reader.maxJobId();
  const cpu0 = processCpuSeconds(serve.proc.pid);
  const startUs = monoUs();
  const t0 = Date.now();
  const sub = await post(`${serve.base}/Job/${CHAIN}`, apiKey, {});
  const submitMs = Date.now() - t0;
  if (sub.status !== 201) throw new Error(`POST Job/${CHAIN}: ${sub.status} ${sub.text.slice(0, 300)}`);
  const chainId = (JSON.parse(sub.text) as { jobId: number }).jobId;
  // The chain's status through the API, as a client would watch it.
  let status = '';
  const deadline = performance.now() + opts.timeout * 1000;
  for (;;) {
    const r = await fetch(`${serve.base}/Job/${chainId}`, { headers: { 'X-API-Key': apiKey } });
    status = String(((await r.json()) as { Status?: unknown }).Status);
    if (isFinal(status as JobStatus)) break;
    if (performance.now() > deadline)
      throw new Error(
        `chain ${chainId} still ${status} after ${opts.timeout} s: ${JSON.stringify(reader.statuses(after))}`,
      );
    await sleep(opts.pollMs);
  }
  const endUs = monoUs();
  const t1 = Date.now();
  const rows = reader.rows(after);
  const chainRow = rows.find((r) => r.job_id === chainId);
  const expected = 1 + opts.steps * (1 + opts.calls);
  if (status !== 'Completed' || !chainRow || rows.length !== expected || rows.some((r) => r.status !== 'Completed'))
    throw new Error(
      `rep ${rep} chain ${chainId} ended ${status}; expected ${expected} Completed jobs, found ${JSON.stringify(reader.statuses(after))}`,
    );
  return {
    kind: 'chain',
    steps: opts.steps,
    rep,
    loadavg1: q.loadavg1,
    waitedS: q.waitedS,
    jobs: rows.length,
    submitMs,
    seconds: (chainRow.modification_time - t0) / 1000,
    serverCpu: cpuPercent(serve.proc.pid, cpu0, t0, t1),
    loopWorstP99: loopDelay(statsBetween(serve.statsFile, t0, t1)).worstP99,
    startUs,
    endUs,
    ...stepTimings(rows, chainId),
  };
}

async function measureAnchor(
  opts: Options,
  serve: Serve,
  reader: JobsReader,
  http: Submitter,
  rep: number,
): Promise<AnchorM> {
  const q = await waitForQuiet(`rep ${rep} anchor`, opts.maxLoad, opts.quietTimeout);
  const after = reader.maxJobId();
  const cpu0 = processCpuSeconds(serve.proc.pid);
  const startUs = monoUs();
  const t0 = Date.now();
  await submitNoops(http, opts.anchorJobs, opts.concurrency);
  const answered = Date.now();
  await pollUntil(
    () => reader.completed(after) >= opts.anchorJobs,
    20,
    opts.timeout,
    () => JSON.stringify(reader.statuses(after)),
  );
  const endUs = monoUs();
  const t1 = Date.now();
  const rows = reader.rows(after);
  if (rows.length !== opts.anchorJobs) throw new Error(`rep ${rep} anchor: ${JSON.stringify(reader.statuses(after))}`);
  return {
    kind: 'anchor',
    rep,
    loadavg1: q.loadavg1,
    waitedS: q.waitedS,
    jobs: rows.length,
    submitS: (answered - t0) / 1000,
    seconds: (Math.max(...rows.map((r) => r.modification_time)) - t0) / 1000,
    serverCpu: cpuPercent(serve.proc.pid, cpu0, t0, t1),
    loopWorstP99: loopDelay(statsBetween(serve.statsFile, t0, t1)).worstP99,
    startUs,
    endUs,
  };
}

/** A fresh server with GLOBAL.Big defined and `--warmup-jobs` no-op jobs drained. */
async function prepare(opts: Options, work: string, apiKey: string, name: string, nodeFlags?: string[]) {
  const js = await startJobServer({
    pin: opts.pin,
    work,
    name,
    apiKey,
    concurrency: opts.concurrency,
    ...(nodeFlags ? { nodeFlags } : {}),
  });
  await createChain(js.serve.base, apiKey, opts.steps, opts.calls);
  if (opts.warmupJobs > 0) {
    await submitNoops(js.http, opts.warmupJobs, opts.concurrency);
    await pollUntil(
      () => js.reader.completed() >= opts.warmupJobs,
      20,
      opts.timeout,
      () => `warm-up: ${JSON.stringify(js.reader.statuses())}`,
    );
  }
  return js;
}

const chainLine = (m: ChainM) =>
  `${m.rep} chain: ${int(m.jobs)} jobs, submit ${int(m.submitMs)} ms, Completed after ${fixed(m.seconds, 2)} s ` +
  `(per step, mean: step → first call running ${fixed(m.stepToCall, 1)} ms, calls ${fixed(m.callsSpan, 1)} ms, ` +
  `last call → next step ${fixed(m.handoff, 1)} ms (max ${fixed(m.handoffMax, 0)})); ` +
  `server CPU ${fixed(m.serverCpu, 0)} %, loop p99 ${fixed(m.loopWorstP99, 1)} ms [load1 ${fixed(m.loadavg1, 2)}]`;

const anchorLine = (m: AnchorM) =>
  `${m.rep} anchor: ${int(m.jobs)} no-op POSTs in ${fixed(m.submitS, 2)} s, all Completed after ${fixed(m.seconds, 2)} s ` +
  `(${int(m.jobs / m.seconds)} jobs/s); server CPU ${fixed(m.serverCpu, 0)} %, loop p99 ${fixed(m.loopWorstP99, 1)} ms ` +
  `[load1 ${fixed(m.loadavg1, 2)}]`;

benchmark({
  script: 'bench:b7',
  title: (o) => `B7 chain of ${o.steps} steps × ${o.calls} calls`,
  about:
    'B7: a chain of steps × calls in-server no-op jobs from submit to Completed, against as many plain no-op jobs ' +
    'submitted and drained on the same server in the same run.',
  options: OPTIONS,
  pin: 'self',
  profile: 'afterwards, run one chain more with the server under node --cpu-prof and summarise the profile',
  async run({ opts: given, work, apiKey }) {
    // In place, so that the --json file's options show it too.
    const opts: Options = Object.assign(given, { anchorJobs: given.anchorJobs ?? given.steps * given.calls });
    say(
      `ours:    millrace serve (SQLite); ${CHAIN}: JobChain on GLOBAL.System, every call ${NOOP} MilliSeconds 0; one POST, ` +
        `then GET every ${opts.pollMs} ms until final`,
      `anchor:  ${int(opts.anchorJobs)} POSTs of ${NOOP} (MilliSeconds 0) at c=${opts.concurrency}, drained, same server`,
      `pinning: ${opts.pin ? 'server on core 0; load generator (this process) on core 1' : 'UNPINNED'}`,
      '',
    );
    const chains: ChainM[] = [];
    const anchors: AnchorM[] = [];
    for (let rep = 1; rep <= opts.reps; rep++) {
      const { serve, reader, http, close } = await prepare(opts, work, apiKey, String(rep));
      try {
        for (const kind of rep % 2 === 1 ? (['chain', 'anchor'] as const) : (['anchor', 'chain'] as const)) {
          if (kind === 'chain') {
            const m = await measureChain(opts, serve, apiKey, reader, rep);
            chains.push(m);
            say(chainLine(m));
          } else {
            const m = await measureAnchor(opts, serve, reader, http, rep);
            anchors.push(m);
            say(anchorLine(m));
          }
        }
      } finally {
        await close();
      }
    }

    const chainS = median(chains.map((m) => m.seconds));
    const anchorS = median(anchors.map((m) => m.seconds));
    const ratio = chainS / anchorS;
    const perRep = chains.map((c, i) => fixed(c.seconds / (anchors[i]?.seconds ?? Number.NaN), 2)).join(', ');
    const submitMs = median(chains.map((m) => m.submitMs));
    say(
      '',
      `median of ${opts.reps} rep(s):`,
      `  chain ${opts.steps} × ${opts.calls} (${int(1 + opts.steps * (1 + opts.calls))} jobs): submit ` +
        `${int(submitMs)} ms, Completed after ${fixed(chainS, 2)} s (per rep ` +
        `${chains.map((m) => fixed(m.seconds, 2)).join(', ')}); per step (mean): step → first call ` +
        `${fixed(median(chains.map((m) => m.stepToCall)), 1)} + calls ${fixed(median(chains.map((m) => m.callsSpan)), 1)} + ` +
        `handoff ${fixed(median(chains.map((m) => m.handoff)), 1)} ms`,
      `  anchor ${int(opts.anchorJobs)} plain no-op submits: all Completed after ${fixed(anchorS, 2)} s (per rep ` +
        `${anchors.map((m) => fixed(m.seconds, 2)).join(', ')})`,
      `  ratio chain ÷ anchor ${fixed(ratio, 2)} (per rep ${perRep})`,
    );
    if (opts.profile)
      say(
        '',
        await profileRun(
          opts.profileDir,
          async (nodeFlags) => {
            const js = await prepare(opts, work, apiKey, 'profile', nodeFlags);
            try {
              return await measureChain(opts, js.serve, apiKey, js.reader, 0);
            } finally {
              await js.close(); // the profile is written when the server exits
            }
          },
          (m) => ({
            heading:
              `CPU profile of our server over one chain (node --cpu-prof; Completed after ${fixed(m.seconds, 2)} s, ` +
              `submit ${int(m.submitMs)} ms while profiled)`,
            note: '(per-request figures below are per job of the chain)',
            items: m.jobs,
          }),
        ),
      );
    return {
      summary:
        `B7 chain ${opts.steps} × ${opts.calls} of System no-ops, ${opts.reps} rep(s): submit ` +
        `${int(submitMs)} ms, Completed after ${fixed(chainS, 2)} s | ${int(opts.anchorJobs)} plain ` +
        `no-op submits drained in ${fixed(anchorS, 2)} s | ratio ${fixed(ratio, 2)}`,
      results: { chains, anchors, medians: { chainS, anchorS, ratio } },
    };
  },
});
