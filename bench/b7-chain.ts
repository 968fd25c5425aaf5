/**
 * Benchmark B7 (issue 4): a chain of 100 steps × 10 calls of in-server no-op jobs (GLOBAL.System_Sleep,
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
 * alternate which goes first. Exit status: 0 done, 1 failure.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { isFinal } from '../src/domain/job-status.ts';
import type { JobStatus } from '../src/model/fields.ts';
import {
  type JobRow,
  JobsReader,
  loopDelay,
  pollUntil,
  type Serve,
  type Submitter,
  startServe,
  statsBetween,
  submitter,
  waitForQuiet,
} from './agent-harness.ts';
import { type CpuProfile, formatProfileSummary, summarizeCpuProfile } from './cpuprofile-summary.ts';
import {
  canPin,
  commandLine,
  fixed,
  int,
  median,
  numberOption,
  pinSelf,
  processCpuSeconds,
  quantile,
  ROOT,
  runBenchmark,
  scratch,
  stop,
  stopAll,
  writeResults,
} from './harness.ts';

const CHAIN = 'GLOBAL.Big';
const NOOP = 'GLOBAL.System_Sleep';
const NOOP_BODY = Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }));

interface Options {
  steps: number;
  calls: number;
  reps: number;
  anchorJobs: number;
  concurrency: number;
  warmupJobs: number;
  pin: boolean;
  maxLoad: number;
  quietTimeoutS: number;
  pollMs: number;
  timeoutS: number;
  profile: boolean;
  profileDir?: string;
  json?: string;
}

const USAGE = `usage: npm run bench:b7 -- [options]
  --steps N          steps of the chain (default 100; at most 200)
  --calls N          calls per step (default 10; at most 100)
  --reps N           repetitions (a fresh server each; chain and anchor, order alternating) (env BENCH_REPS, default 2)
  --anchor-jobs N    plain no-op jobs of the anchor (default: steps × calls)
  --concurrency C    HTTP submits in flight for the anchor (default 50)
  --warmup-jobs N    untimed no-op jobs every fresh server drains first (default 200)
  --max-load L       before each measurement wait until loadavg1 < L and no other benchmark runs (default 1.5)
  --quiet-timeout S  measure anyway after waiting S seconds (default 1800)
  --poll-ms MS       how often the chain's status is read (default 50)
  --timeout S        give up on a chain or a drain after S seconds (default 600)
  --no-pin           do not use taskset (results are then not comparable with pinned ones)
  --profile          afterwards, run one chain more with the server under node --cpu-prof and summarise the profile
  --profile-dir DIR  where the .cpuprofile goes (default: a new folder in the temp dir, kept)
  --json FILE        also write every measurement as JSON`;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      steps: { type: 'string' },
      calls: { type: 'string' },
      reps: { type: 'string' },
      'anchor-jobs': { type: 'string' },
      concurrency: { type: 'string' },
      'warmup-jobs': { type: 'string' },
      'max-load': { type: 'string' },
      'quiet-timeout': { type: 'string' },
      'poll-ms': { type: 'string' },
      timeout: { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'profile-dir': { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const num = numberOption;
  const steps = Math.floor(num(values.steps, undefined, 100, 1));
  const calls = Math.floor(num(values.calls, undefined, 10, 1));
  // The JobChain type's own limits (src/model/types/JobChain.ts): 200 steps, 100 calls per step.
  if (steps > 200 || calls > 100) throw new Error('--steps is at most 200 and --calls at most 100 (JobChain limits)');
  return {
    steps,
    calls,
    reps: Math.floor(num(values.reps, 'BENCH_REPS', 2, 1)),
    anchorJobs: Math.floor(num(values['anchor-jobs'], undefined, steps * calls, 1)),
    concurrency: Math.floor(num(values.concurrency, undefined, 50, 1)),
    warmupJobs: Math.floor(num(values['warmup-jobs'], undefined, 200, 0)),
    pin: !values['no-pin'],
    maxLoad: num(values['max-load'], undefined, 1.5, 0),
    quietTimeoutS: num(values['quiet-timeout'], undefined, 1800, 0),
    pollMs: num(values['poll-ms'], undefined, 50, 1),
    timeoutS: num(values.timeout, undefined, 600, 1),
    profile: values.profile || values['profile-dir'] !== undefined,
    ...(values['profile-dir'] !== undefined ? { profileDir: resolve(values['profile-dir']) } : {}),
    ...(values.json !== undefined ? { json: resolve(values.json) } : {}),
  };
}

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

/** POSTs `n` no-op jobs at once; the keep-alive agent's maxSockets keeps C in flight. */
async function submitNoops(http: Submitter, n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async () => {
      const r = await http.submit(NOOP, NOOP_BODY);
      if (r.status !== 201) throw new Error(`POST Job/${NOOP}: ${r.status} ${r.body.slice(0, 300)}`);
    }),
  );
}

const monoUs = () => Number(process.hrtime.bigint() / 1000n);

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
  const q = await waitForQuiet(`rep ${rep} chain`, opts.maxLoad, opts.quietTimeoutS);
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
  const deadline = performance.now() + opts.timeoutS * 1000;
  for (;;) {
    const r = await fetch(`${serve.base}/Job/${chainId}`, { headers: { 'X-API-Key': apiKey } });
    status = String(((await r.json()) as { Status?: unknown }).Status);
    if (isFinal(status as JobStatus)) break;
    if (performance.now() > deadline)
      throw new Error(
        `chain ${chainId} still ${status} after ${opts.timeoutS} s: ${JSON.stringify(reader.statuses(after))}`,
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
  const q = await waitForQuiet(`rep ${rep} anchor`, opts.maxLoad, opts.quietTimeoutS);
  const after = reader.maxJobId();
  const cpu0 = processCpuSeconds(serve.proc.pid);
  const startUs = monoUs();
  const t0 = Date.now();
  await submitNoops(http, opts.anchorJobs);
  const answered = Date.now();
  await pollUntil(
    () => reader.completed(after) >= opts.anchorJobs,
    20,
    opts.timeoutS,
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
async function prepare(
  opts: Options,
  work: string,
  apiKey: string,
  name: string,
  nodeFlags: string[] = [],
): Promise<{ serve: Serve; reader: JobsReader; http: Submitter; dataDir: string }> {
  const dataDir = join(work, `ours-${name}`);
  const serve = await startServe({
    pin: opts.pin,
    dataDir,
    apiKey,
    statsFile: join(work, `stats-${name}.ndjson`),
    nodeFlags,
  });
  await createChain(serve.base, apiKey, opts.steps, opts.calls);
  const reader = new JobsReader(dataDir);
  const http = submitter(serve.base, apiKey, opts.concurrency);
  if (opts.warmupJobs > 0) {
    await submitNoops(http, opts.warmupJobs);
    await pollUntil(
      () => reader.completed() >= opts.warmupJobs,
      20,
      opts.timeoutS,
      () => `warm-up: ${JSON.stringify(reader.statuses())}`,
    );
  }
  return { serve, reader, http, dataDir };
}

const chainLine = (m: ChainM) =>
  `${m.rep} chain: ${int(m.jobs)} jobs, submit ${int(m.submitMs)} ms, Completed after ${fixed(m.seconds, 2)} s ` +
  `(per step, mean: step → first call running ${fixed(m.stepToCall, 1)} ms, calls ${fixed(m.callsSpan, 1)} ms, ` +
  `last call → next step ${fixed(m.handoff, 1)} ms (max ${fixed(m.handoffMax, 0)})); ` +
  `server CPU ${fixed(m.serverCpu, 0)} %, loop p99 ${fixed(m.loopWorstP99, 1)} ms [load1 ${fixed(m.loadavg1, 2)}]\n`;

const anchorLine = (m: AnchorM) =>
  `${m.rep} anchor: ${int(m.jobs)} no-op POSTs in ${fixed(m.submitS, 2)} s, all Completed after ${fixed(m.seconds, 2)} s ` +
  `(${int(m.jobs / m.seconds)} jobs/s); server CPU ${fixed(m.serverCpu, 0)} %, loop p99 ${fixed(m.loopWorstP99, 1)} ms ` +
  `[load1 ${fixed(m.loadavg1, 2)}]\n`;

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const command = commandLine('bench:b7');
  const cpus = availableParallelism(); // before pinning: afterwards it counts the one core left to this process
  if (opts.pin) opts.pin = canPin();
  if (opts.pin) pinSelf(1);
  const work = mkdtempSync(join(tmpdir(), 'millrace-b7-'));
  scratch.add(work);
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const startedAt = new Date();
  const loadStart = loadavg();
  try {
    process.stdout.write(
      `Millrace B7 chain of ${opts.steps} steps × ${opts.calls} calls, ${startedAt.toISOString()}, node ${process.version}, ` +
        `${cpus} CPUs, loadavg ${loadStart.map((x) => x.toFixed(2)).join(' ')}\ncommand: ${command}\n` +
        `ours:    millrace serve (SQLite); ${CHAIN}: JobChain on GLOBAL.System, every call ${NOOP} MilliSeconds 0; one POST, ` +
        `then GET every ${opts.pollMs} ms until final\n` +
        `anchor:  ${int(opts.anchorJobs)} POSTs of ${NOOP} (MilliSeconds 0) at c=${opts.concurrency}, drained, same server\n` +
        `pinning: ${opts.pin ? 'server on core 0; load generator (this process) on core 1' : 'UNPINNED'}\n\n`,
    );
    const chains: ChainM[] = [];
    const anchors: AnchorM[] = [];
    for (let rep = 1; rep <= opts.reps; rep++) {
      const { serve, reader, http, dataDir } = await prepare(opts, work, apiKey, String(rep));
      try {
        for (const kind of rep % 2 === 1 ? (['chain', 'anchor'] as const) : (['anchor', 'chain'] as const)) {
          if (kind === 'chain') {
            const m = await measureChain(opts, serve, apiKey, reader, rep);
            chains.push(m);
            process.stdout.write(chainLine(m));
          } else {
            const m = await measureAnchor(opts, serve, reader, http, rep);
            anchors.push(m);
            process.stdout.write(anchorLine(m));
          }
        }
      } finally {
        http.close();
        reader.close();
        await stop(serve.proc);
        rmSync(dataDir, { recursive: true, force: true });
      }
    }

    const chainS = median(chains.map((m) => m.seconds));
    const anchorS = median(anchors.map((m) => m.seconds));
    const ratio = chainS / anchorS;
    const perRep = chains.map((c, i) => fixed(c.seconds / (anchors[i]?.seconds ?? Number.NaN), 2)).join(', ');
    process.stdout.write(
      `\nmedian of ${opts.reps} rep(s):\n` +
        `  chain ${opts.steps} × ${opts.calls} (${int(1 + opts.steps * (1 + opts.calls))} jobs): submit ` +
        `${int(median(chains.map((m) => m.submitMs)))} ms, Completed after ${fixed(chainS, 2)} s (per rep ` +
        `${chains.map((m) => fixed(m.seconds, 2)).join(', ')}); per step (mean): step → first call ` +
        `${fixed(median(chains.map((m) => m.stepToCall)), 1)} + calls ${fixed(median(chains.map((m) => m.callsSpan)), 1)} + ` +
        `handoff ${fixed(median(chains.map((m) => m.handoff)), 1)} ms\n` +
        `  anchor ${int(opts.anchorJobs)} plain no-op submits: all Completed after ${fixed(anchorS, 2)} s (per rep ` +
        `${anchors.map((m) => fixed(m.seconds, 2)).join(', ')})\n` +
        `  ratio chain ÷ anchor ${fixed(ratio, 2)} (per rep ${perRep})\n` +
        `  loadavg at the end ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}\n`,
    );
    let profileReport: string | undefined;
    if (opts.profile) profileReport = await profileChain(opts, work, apiKey);
    const summary =
      `SUMMARY B7 chain ${opts.steps} × ${opts.calls} of System no-ops, ${opts.reps} rep(s): submit ` +
      `${int(median(chains.map((m) => m.submitMs)))} ms, Completed after ${fixed(chainS, 2)} s | ${int(opts.anchorJobs)} plain ` +
      `no-op submits drained in ${fixed(anchorS, 2)} s | ratio ${fixed(ratio, 2)}`;
    if (profileReport) process.stdout.write(`\n${profileReport}\n`);
    process.stdout.write(`\n${summary}\n`);
    writeResults(opts.json, { command, startedAt, loadStart }, opts, {
      chains,
      anchors,
      medians: { chainS, anchorS, ratio },
    });
    return 0;
  } finally {
    await stopAll();
    rmSync(work, { recursive: true, force: true });
    scratch.delete(work);
  }
}

/** One more chain with the server under `node --cpu-prof`; the profile is summarised over the chain only. */
async function profileChain(opts: Options, work: string, apiKey: string): Promise<string> {
  const dir = opts.profileDir ?? mkdtempSync(join(tmpdir(), 'millrace-b7-profile-'));
  mkdirSync(dir, { recursive: true });
  const before = new Set(readdirSync(dir));
  const { serve, reader, http, dataDir } = await prepare(opts, work, apiKey, 'profile', [
    '--cpu-prof',
    `--cpu-prof-dir=${dir}`,
  ]);
  let m: ChainM;
  try {
    m = await measureChain(opts, serve, apiKey, reader, 0);
  } finally {
    http.close();
    reader.close();
    await stop(serve.proc); // the profile is written when the server exits
    rmSync(dataDir, { recursive: true, force: true });
  }
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread (tsx's loader has its own).
  const file = readdirSync(dir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f) && !before.has(f));
  if (!file) return `(no .cpuprofile was written to ${dir})`;
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const summary = summarizeCpuProfile(profile, { window: { startUs: m.startUs, endUs: m.endUs }, root: ROOT });
  return (
    `CPU profile of our server over one chain (node --cpu-prof; Completed after ${fixed(m.seconds, 2)} s, submit ` +
    `${int(m.submitMs)} ms while profiled): ${join(dir, file)}\n` +
    `(per-request figures below are per job of the chain)\n\n` +
    formatProfileSummary(summary, m.jobs)
  );
}

runBenchmark(main);
