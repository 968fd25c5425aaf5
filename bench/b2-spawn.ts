/**
 * Benchmark B2 (perf-reliability.md §6): spawn-limited end-to-end throughput. N BASH jobs running `true` go through
 * the local agent of GLOBAL.Local (ExecutionSize 8), against a raw spawn loop of /bin/true with 8 in flight from a
 * small separate Node process (bench/anchor-spawn.mjs), both measured in the same run, interleaved.
 *
 *   npm run bench:b2                         # 3 reps × 3,000 jobs, anchors interleaved
 *   npm run bench:b2 -- --reps 1 --profile   # plus a CPU profile of the server and of the agent over one drain
 *
 * Ours: `millrace serve` on a fresh data folder per repetition, pinned to core 0 (`taskset -c 0`; the local agent
 * and its job processes are its children and inherit the affinity, which is checked with `taskset -p`). The harness
 * pins itself to core 1 and is the load generator: N × `POST …/Job/GLOBAL.True` at concurrency C over keep-alive
 * HTTP, as fast as the server answers, while it counts Completed jobs in the SQLite file (read-only) every
 * --poll-ms. jobs/s = N ÷ (first submit → the last job's Completed, i.e. its modification_time in the jobs table).
 * The agent's VmRSS is sampled every 100 ms (max reported); the server writes its event-loop delay once a second
 * (MILLRACE_STATS_FILE, src/runtime-stats.ts).
 * Anchor: `node bench/anchor-spawn.mjs N 8` on core 0. A second anchor (--no-bash-anchor turns it off) spawns the
 * agent's BASH wrapper running the same one-line script, 8 in flight: what a BASH job's process costs by itself.
 * Before every measurement the harness waits until no other benchmark runs and the 1-minute loadavg is below
 * --max-load. Exit status: 0 done, 1 failure, 2 a target missed with --check.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BASH_WRAPPER } from '../src/agent/scripts.ts';
import {
  affinity,
  createBashDefinition,
  JobsReader,
  localAgentPid,
  loopDelay,
  pollUntil,
  runSpawnAnchor,
  type Serve,
  sampleRss,
  startServe,
  statsBetween,
  submitter,
  waitForQuiet,
} from './agent-harness.ts';
import { type CpuProfile, formatProfileSummary, summarizeCpuProfile } from './cpuprofile-summary.ts';
import {
  canPin,
  commandLine,
  coreTimes,
  coreUse,
  fixed,
  int,
  median,
  numberOption,
  pct,
  pinSelf,
  processCpuSeconds,
  quantile,
  ROOT,
  row,
  runBenchmark,
  scratch,
  stop,
  stopAll,
  writeResults,
} from './harness.ts';

const TARGET_RATIO = 0.8;
const TARGET_AGENT_RSS_MB = 100;
const TARGET_LOOP_P99_MS = 20;
const DEFINITION = 'GLOBAL.True';
const BODY = Buffer.from('{}');

// ---------------------------------------------------------------------------------------------------------------
// Options

interface Options {
  jobs: number;
  concurrency: number;
  reps: number;
  warmupJobs: number;
  anchorConcurrency: number;
  bashAnchor: boolean;
  pin: boolean;
  maxLoad: number;
  quietTimeoutS: number;
  pollMs: number;
  timeoutS: number;
  profile: boolean;
  profileDir?: string;
  json?: string;
  check: boolean;
}

const USAGE = `usage: npm run bench:b2 -- [options]
  --jobs N              jobs per measurement (env BENCH_JOBS, default 3000)
  --concurrency C       HTTP submits in flight (env BENCH_CONCURRENCY, default 50)
  --reps N              repetitions of ours and the anchors, interleaved (env BENCH_REPS, default 3)
  --warmup-jobs N       untimed jobs drained first on each fresh server (default 200; 0 = none)
  --anchor-concurrency  spawns in flight in the anchors (default 8: GLOBAL.Local's ExecutionSize)
  --no-bash-anchor      leave out the second anchor (the BASH wrapper spawned raw)
  --max-load L          before each measurement wait until loadavg1 < L and no other benchmark runs (default 1.5)
  --quiet-timeout S     measure anyway after waiting S seconds (default 1800)
  --poll-ms MS          how often Completed jobs are counted (default 20)
  --timeout S           give up on a drain after S seconds (default 300)
  --no-pin              do not use taskset (results are then not comparable with pinned ones)
  --profile             afterwards, one more drain with the server and the agent under node --cpu-prof
  --profile-dir DIR     where the .cpuprofile files go (default: a new folder in the temp dir, kept)
  --json FILE           also write every measurement as JSON
  --check               exit with status 2 when a target is missed (ours >= ${TARGET_RATIO * 100} % of the anchor, agent RSS
                        < ${TARGET_AGENT_RSS_MB} MB, server event-loop delay p99 < ${TARGET_LOOP_P99_MS} ms)`;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      jobs: { type: 'string' },
      concurrency: { type: 'string' },
      reps: { type: 'string' },
      'warmup-jobs': { type: 'string' },
      'anchor-concurrency': { type: 'string' },
      'no-bash-anchor': { type: 'boolean', default: false },
      'max-load': { type: 'string' },
      'quiet-timeout': { type: 'string' },
      'poll-ms': { type: 'string' },
      timeout: { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'profile-dir': { type: 'string' },
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
    jobs: Math.floor(num(values.jobs, 'BENCH_JOBS', 3000, 1)),
    concurrency: Math.floor(num(values.concurrency, 'BENCH_CONCURRENCY', 50, 1)),
    reps: Math.floor(num(values.reps, 'BENCH_REPS', 3, 1)),
    warmupJobs: Math.floor(num(values['warmup-jobs'], undefined, 200, 0)),
    anchorConcurrency: Math.floor(num(values['anchor-concurrency'], undefined, 8, 1)),
    bashAnchor: !values['no-bash-anchor'],
    pin: !values['no-pin'],
    maxLoad: num(values['max-load'], undefined, 1.5, 0),
    quietTimeoutS: num(values['quiet-timeout'], undefined, 1800, 0),
    pollMs: num(values['poll-ms'], undefined, 20, 1),
    timeoutS: num(values.timeout, undefined, 300, 1),
    profile: values.profile || values['profile-dir'] !== undefined,
    ...(values['profile-dir'] !== undefined ? { profileDir: resolve(values['profile-dir']) } : {}),
    ...(values.json !== undefined ? { json: resolve(values.json) } : {}),
    check: values.check,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Measurements

type Target = 'ours' | 'anchor' | 'bash-anchor';

interface Stage {
  p50: number;
  p99: number;
}

interface Measurement {
  target: Target;
  rep: number;
  loadavg1: number;
  waitedS: number;
  jobs: number;
  perSec: number;
  seconds: number;
  /** Ours only: POST answers per second, and the drain's tail after the last answer. */
  submitPerSec?: number;
  tailS?: number;
  /** Ours: max VmRSS of the agent (100 ms samples) and VmHWM at the end; anchors: their own RSS at the end. */
  rssMaxMiB: number;
  agentPeakMiB?: number;
  loop?: { worstP99: number; medianP99: number; max: number; seconds: number };
  /** CPU over the drain, % of one core: server, agent, the agent's (reaped) job processes; the core's busy %. */
  serverCpu?: number;
  agentCpu?: number;
  /** The kernel's share of agentCpu (system time), % of one core. */
  agentSysCpu?: number;
  childrenCpu?: number;
  core0Busy: number;
  core1Busy: number;
  steal: number;
  /** Ours: per-job stages from the jobs table, ms. */
  stages?: { wait: Stage; toStart: Stage; run: Stage; toCompleted: Stage; slotMs: number };
  affinity?: { server: string; agent: string };
  /** CLOCK_MONOTONIC µs around the drain (to cut profiles). */
  startUs: number;
  endUs: number;
}

const monoUs = () => Number(process.hrtime.bigint() / 1000n);
const MiB = 1024 * 1024;

/** utime+stime and cutime+cstime (reaped children) of a process, seconds. */
function cpuWithChildren(pid: number): { self: number; sys: number; children: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const tck = 100; // CLK_TCK on Linux
    return {
      self: ((f[11] ?? 0) + (f[12] ?? 0)) / tck,
      sys: (f[12] ?? 0) / tck,
      children: ((f[13] ?? 0) + (f[14] ?? 0)) / tck,
    };
  } catch {
    return { self: Number.NaN, sys: Number.NaN, children: Number.NaN };
  }
}

const stage = (xs: number[]): Stage => ({ p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) });

async function measureOurs(
  opts: Options,
  work: string,
  apiKey: string,
  rep: number,
  quiet: { loadavg1: number; waitedS: number },
  profileDir?: string,
): Promise<Measurement> {
  const dataDir = join(work, `ours-${rep}`);
  const statsFile = join(work, `stats-${rep}.ndjson`);
  let serve: Serve | undefined;
  let reader: JobsReader | undefined;
  try {
    serve = await startServe({
      pin: opts.pin,
      dataDir,
      apiKey,
      statsFile,
      // The server: --cpu-prof. Its local agent (started by the server, and node refuses --cpu-prof in NODE_OPTIONS):
      // a preloaded module that profiles through the inspector and writes CPU.agent.<pid>.cpuprofile at exit.
      ...(profileDir
        ? {
            nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
            nodeEnv: {
              NODE_OPTIONS: `--import ${join(ROOT, 'bench/agent-profile-preload.mjs')}`,
              BENCH_AGENT_PROFILE_DIR: profileDir,
            },
          }
        : {}),
    });
    const agentPid = await localAgentPid(dataDir);
    const aff = { server: affinity(serve.proc.pid), agent: affinity(agentPid) };
    await createBashDefinition(serve.base, apiKey, 'True', 'true');
    reader = new JobsReader(dataDir);
    const r = reader;
    const http = submitter(serve.base, apiKey, opts.concurrency);
    const submitAll = async (n: number): Promise<number> => {
      let next = 0;
      let lastAt = 0;
      const worker = async () => {
        while (next < n) {
          next++;
          const res = await http.submit(DEFINITION, BODY);
          lastAt = performance.now();
          if (res.status !== 201) throw new Error(`POST Job/${DEFINITION}: ${res.status} ${res.body.slice(0, 300)}`);
        }
      };
      await Promise.all(Array.from({ length: Math.min(opts.concurrency, n) }, worker));
      return lastAt;
    };
    try {
      if (opts.warmupJobs > 0) {
        await submitAll(opts.warmupJobs);
        await pollUntil(
          () => r.completed() >= opts.warmupJobs,
          opts.pollMs,
          opts.timeoutS,
          () => `warm-up: ${JSON.stringify(r.statuses())}`,
        );
      }
      const after = r.maxJobId();
      const rss = sampleRss(agentPid, 100);
      const srv0 = processCpuSeconds(serve.proc.pid);
      const ag0 = cpuWithChildren(agentPid);
      const cores0 = coreTimes();
      const startUs = monoUs();
      const t0Epoch = Date.now();
      const t0 = performance.now();
      const [lastAnswer, tPoll] = await Promise.all([
        submitAll(opts.jobs),
        pollUntil(
          () => r.completed(after) >= opts.jobs,
          opts.pollMs,
          opts.timeoutS,
          () => JSON.stringify(r.statuses(after)),
        ),
      ]);
      const endUs = monoUs();
      const tEndEpoch = Date.now();
      const { maxBytes } = rss.stop();
      const srv1 = processCpuSeconds(serve.proc.pid);
      const ag1 = cpuWithChildren(agentPid);
      const cores1 = coreTimes();
      const rows = r.rows(after);
      const statuses = r.statuses(after);
      if (rows.length !== opts.jobs || statuses.Completed !== opts.jobs)
        throw new Error(`rep ${rep}: expected ${opts.jobs} Completed jobs, found ${JSON.stringify(statuses)}`);
      const lastCompleted = Math.max(...rows.map((x) => x.modification_time));
      const seconds = (lastCompleted - t0Epoch) / 1000;
      const pollSeconds = (tPoll - t0) / 1000;
      const num = (v: number | null) => v ?? Number.NaN;
      const wait = rows.map((x) => num(x.scheduled_start) - x.creation_time);
      const toStart = rows.map((x) => num(x.run_start) - num(x.scheduled_start));
      const run = rows.map((x) => num(x.run_end) - num(x.run_start));
      const toCompleted = rows.map((x) => x.modification_time - num(x.run_end));
      const slot = rows.map((x) => x.modification_time - num(x.scheduled_start));
      const hwm = (() => {
        try {
          return Number(/^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${agentPid}/status`, 'utf8'))?.[1]) * 1024;
        } catch {
          return Number.NaN;
        }
      })();
      return {
        target: 'ours',
        rep,
        ...quiet,
        jobs: opts.jobs,
        perSec: opts.jobs / seconds,
        seconds,
        submitPerSec: opts.jobs / ((lastAnswer - t0) / 1000),
        tailS: pollSeconds - (lastAnswer - t0) / 1000,
        rssMaxMiB: maxBytes / MiB,
        agentPeakMiB: hwm / MiB,
        loop: loopDelay(statsBetween(statsFile, t0Epoch, tEndEpoch)),
        serverCpu: (100 * (srv1 - srv0)) / seconds,
        agentCpu: (100 * (ag1.self - ag0.self)) / seconds,
        agentSysCpu: (100 * (ag1.sys - ag0.sys)) / seconds,
        childrenCpu: (100 * (ag1.children - ag0.children)) / seconds,
        core0Busy: coreUse(cores0, cores1, 'cpu0').busy,
        core1Busy: coreUse(cores0, cores1, 'cpu1').busy,
        steal: coreUse(cores0, cores1, 'cpu').steal,
        stages: {
          wait: stage(wait),
          toStart: stage(toStart),
          run: stage(run),
          toCompleted: stage(toCompleted),
          slotMs: median(slot),
        },
        affinity: aff,
        startUs,
        endUs,
      };
    } finally {
      http.close();
    }
  } finally {
    reader?.close();
    if (serve) await stop(serve.proc, profileDir ? 30_000 : 10_000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function measureAnchor(
  opts: Options,
  target: 'anchor' | 'bash-anchor',
  rep: number,
  quiet: { loadavg1: number; waitedS: number },
  bash?: { script: string; outVars: string },
): Promise<Measurement> {
  const cores0 = coreTimes();
  const startUs = monoUs();
  const r = await runSpawnAnchor(
    opts.pin,
    opts.jobs,
    opts.anchorConcurrency,
    bash ? ['/bin/bash', '-c', BASH_WRAPPER, bash.script] : [],
    bash ? { MILLRACE_SCRIPT: bash.script, MILLRACE_OUT_NAMES: '', MILLRACE_OUT_VARS: bash.outVars } : undefined,
  );
  const endUs = monoUs();
  const cores1 = coreTimes();
  return {
    target,
    rep,
    ...quiet,
    jobs: r.n,
    perSec: r.perSec,
    seconds: r.seconds,
    rssMaxMiB: r.rssBytes / MiB,
    core0Busy: coreUse(cores0, cores1, 'cpu0').busy,
    core1Busy: coreUse(cores0, cores1, 'cpu1').busy,
    steal: coreUse(cores0, cores1, 'cpu').steal,
    startUs,
    endUs,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Main

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const command = commandLine('bench:b2');
  const cpus = availableParallelism();
  if (opts.pin) opts.pin = canPin();
  if (opts.pin) pinSelf(1);
  const work = mkdtempSync(join(tmpdir(), 'millrace-b2-'));
  scratch.add(work);
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const startedAt = new Date();
  const loadStart = loadavg();
  const bash = { script: join(work, 'script.bash'), outVars: join(work, 'out-vars') };
  writeFileSync(bash.script, 'true');
  try {
    process.stdout.write(
      `Millrace B2 spawn-limited end-to-end, ${startedAt.toISOString()}, node ${process.version}, ${cpus} CPUs, ` +
        `loadavg ${loadStart.map((x) => x.toFixed(2)).join(' ')}\ncommand: ${command}\n` +
        `ours:    millrace serve (SQLite) + local agent GLOBAL.Local (ExecutionSize 8), ${int(opts.jobs)} × POST ` +
        `/Job/${DEFINITION} (BASH "true"), ${opts.concurrency} in flight; Completed counted every ${opts.pollMs} ms; ` +
        `${int(opts.warmupJobs)} warm-up jobs first on each fresh server\n` +
        `anchor:  bench/anchor-spawn.mjs: ${int(opts.jobs)} × spawn /bin/true, ${opts.anchorConcurrency} in flight\n` +
        (opts.bashAnchor
          ? `bash:    bench/anchor-spawn.mjs: ${int(opts.jobs)} × spawn the agent's BASH wrapper running "true", ` +
            `${opts.anchorConcurrency} in flight\n`
          : '') +
        `pinning: ${opts.pin ? 'server, agent and anchors on core 0; load generator (this process) on core 1' : 'UNPINNED'}; ` +
        `before each measurement: no ${'bench/b1|b5|get-object'} running and loadavg1 < ${opts.maxLoad}\n\n`,
    );

    const all: Measurement[] = [];
    const widths = [16, 5, 5, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6];
    const header = [
      'rep target',
      'load1',
      'wait',
      'jobs/s',
      'secs',
      'sub/s',
      'RSSmax',
      'loopP99',
      'srv%',
      'agent%',
      'jobs%',
      'core0',
      'core1',
      'steal',
    ];
    const print = (m: Measurement) =>
      process.stdout.write(
        `${row(
          [
            `${m.rep} ${m.target}`,
            fixed(m.loadavg1, 2),
            `${fixed(m.waitedS, 0)}s`,
            int(m.perSec),
            fixed(m.seconds, 2),
            m.submitPerSec !== undefined ? int(m.submitPerSec) : '',
            fixed(m.rssMaxMiB, 0),
            m.loop ? fixed(m.loop.worstP99, 1) : '',
            m.serverCpu !== undefined ? fixed(m.serverCpu, 0) : '',
            m.agentCpu !== undefined ? fixed(m.agentCpu, 0) : '',
            m.childrenCpu !== undefined ? fixed(m.childrenCpu, 0) : '',
            `${fixed(m.core0Busy, 0)}%`,
            `${fixed(m.core1Busy, 0)}%`,
            `${fixed(m.steal, 1)}%`,
          ],
          widths,
        )}\n`,
      );
    process.stdout.write(`${row(header, widths)}\n`);
    for (let rep = 1; rep <= opts.reps; rep++) {
      const plan: Array<{ target: Target; run: (q: { loadavg1: number; waitedS: number }) => Promise<Measurement> }> = [
        { target: 'ours', run: (q) => measureOurs(opts, work, apiKey, rep, q) },
        { target: 'anchor', run: (q) => measureAnchor(opts, 'anchor', rep, q) },
        ...(opts.bashAnchor
          ? [
              {
                target: 'bash-anchor' as const,
                run: (q: { loadavg1: number; waitedS: number }) => measureAnchor(opts, 'bash-anchor', rep, q, bash),
              },
            ]
          : []),
      ];
      // Alternate which target goes first, so neither always follows the other's load.
      if (rep % 2 === 0) plan.reverse();
      for (const p of plan) {
        const q = await waitForQuiet(`rep ${rep} ${p.target}`, opts.maxLoad, opts.quietTimeoutS);
        const m = await p.run({ loadavg1: q.loadavg1, waitedS: q.waitedS });
        all.push(m);
        print(m);
        if (m.affinity && rep === 1)
          process.stdout.write(`    taskset -p: server ${m.affinity.server}, agent ${m.affinity.agent}\n`);
      }
    }

    const pick = (t: Target) => all.filter((m) => m.target === t);
    const ours = pick('ours');
    const anchor = pick('anchor');
    const bashA = pick('bash-anchor');
    const o = {
      perSec: median(ours.map((m) => m.perSec)),
      submitPerSec: median(ours.map((m) => m.submitPerSec ?? Number.NaN)),
      rssMaxMiB: Math.max(...ours.map((m) => m.rssMaxMiB)),
      rssMedianMiB: median(ours.map((m) => m.rssMaxMiB)),
      loopWorstP99: median(ours.map((m) => m.loop?.worstP99 ?? Number.NaN)),
      loopMedianP99: median(ours.map((m) => m.loop?.medianP99 ?? Number.NaN)),
      loopMax: median(ours.map((m) => m.loop?.max ?? Number.NaN)),
      serverCpu: median(ours.map((m) => m.serverCpu ?? Number.NaN)),
      agentCpu: median(ours.map((m) => m.agentCpu ?? Number.NaN)),
      agentSysCpu: median(ours.map((m) => m.agentSysCpu ?? Number.NaN)),
      childrenCpu: median(ours.map((m) => m.childrenCpu ?? Number.NaN)),
      core0Busy: median(ours.map((m) => m.core0Busy)),
    };
    const a = median(anchor.map((m) => m.perSec));
    const b = median(bashA.map((m) => m.perSec));
    const ratio = o.perSec / a;
    const perRep = ours.map((m) => {
      const x = anchor.find((y) => y.rep === m.rep);
      return x ? m.perSec / x.perSec : Number.NaN;
    });
    const perRepBash = ours.map((m) => {
      const x = bashA.find((y) => y.rep === m.rep);
      return x ? m.perSec / x.perSec : Number.NaN;
    });
    const meets =
      ratio >= TARGET_RATIO && o.rssMaxMiB * (MiB / 1e6) < TARGET_AGENT_RSS_MB && o.loopWorstP99 < TARGET_LOOP_P99_MS;
    const st = (f: (m: Measurement) => number) => fixed(median(ours.map(f)), 1);
    process.stdout.write(
      `\n(jobs/s: ours = jobs ÷ (first submit → last Completed); anchors = spawns ÷ wall time. wait = seconds waited for\n` +
        ` a quiet machine before the measurement. RSSmax: ours = the agent's max VmRSS (MiB, 100 ms samples), anchors =\n` +
        ` their own RSS. loopP99 = the server's worst 1-s event-loop delay p99 (ms). srv%/agent%/jobs% = CPU of the\n` +
        ` server, the agent and the agent's job processes (bash), % of one core over the drain; core0/core1 busy)\n\n` +
        `median of ${ours.length} rep(s):\n` +
        `  ours (Millrace, BASH true via the local agent)  ${int(o.perSec)} jobs/s  (submit ${int(o.submitPerSec)} req/s)\n` +
        `  anchor (raw spawn /bin/true, ${opts.anchorConcurrency} in flight)       ${int(a)} spawns/s\n` +
        (opts.bashAnchor ? `  bash anchor (raw spawn of the BASH wrapper)      ${int(b)} spawns/s\n` : '') +
        `  ratio ours / anchor                             ${pct(100 * ratio)}  (per rep: ${perRep.map((r) => pct(100 * r)).join(', ')}; target >= ${TARGET_RATIO * 100} %)\n` +
        (opts.bashAnchor
          ? `  ratio ours / bash anchor                        ${pct((100 * o.perSec) / b)}  (per rep: ${perRepBash.map((r) => pct(100 * r)).join(', ')})\n`
          : '') +
        `  agent max RSS                                   ${fixed(o.rssMaxMiB)} MiB (max over reps; median ${fixed(o.rssMedianMiB)} MiB; target < ${TARGET_AGENT_RSS_MB} MB)\n` +
        `  server event-loop delay                         worst-second p99 ${fixed(o.loopWorstP99, 1)} ms, median-second p99 ${fixed(o.loopMedianP99, 1)} ms, max ${fixed(o.loopMax, 1)} ms (target p99 < ${TARGET_LOOP_P99_MS} ms)\n` +
        `  CPU over the drain (% of one core)              server ${fixed(o.serverCpu, 0)}, agent ${fixed(o.agentCpu, 0)} (kernel ${fixed(o.agentSysCpu, 0)}), job processes ${fixed(o.childrenCpu, 0)}; core 0 busy ${fixed(o.core0Busy, 0)} %\n` +
        `  CPU per job (ms)                                server ${fixed((o.serverCpu * 10) / o.perSec, 2)}, agent ${fixed((o.agentCpu * 10) / o.perSec, 2)}, job process ${fixed((o.childrenCpu * 10) / o.perSec, 2)}; ` +
        `anchor (whole core 0 ÷ spawns) ${fixed((median(anchor.map((m) => m.core0Busy)) * 10) / a, 2)}, bash anchor ${fixed((median(bashA.map((m) => m.core0Busy)) * 10) / b, 2)}\n` +
        `  per-job stages (ms, median of reps' p50 / p99): queued→Dispatched ${st((m) => m.stages?.wait.p50 ?? Number.NaN)} / ${st((m) => m.stages?.wait.p99 ?? Number.NaN)}; ` +
        `Dispatched→started ${st((m) => m.stages?.toStart.p50 ?? Number.NaN)} / ${st((m) => m.stages?.toStart.p99 ?? Number.NaN)}; ` +
        `process run ${st((m) => m.stages?.run.p50 ?? Number.NaN)} / ${st((m) => m.stages?.run.p99 ?? Number.NaN)}; ` +
        `ended→Completed ${st((m) => m.stages?.toCompleted.p50 ?? Number.NaN)} / ${st((m) => m.stages?.toCompleted.p99 ?? Number.NaN)}; ` +
        `slot held (Dispatched→Completed) median ${st((m) => m.stages?.slotMs ?? Number.NaN)}\n` +
        `  loadavg at the end ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}\n`,
    );

    let profileReport: string | undefined;
    if (opts.profile) profileReport = await profileRun(opts, work, apiKey);

    const summary =
      `SUMMARY B2 ${int(opts.jobs)} BASH jobs via the local agent (8 slots), c=${opts.concurrency}, ${ours.length} rep(s): ` +
      `ours ${int(o.perSec)} jobs/s | raw spawn ${int(a)}/s | ratio ${pct(100 * ratio)} (target >= ${TARGET_RATIO * 100} %) | ` +
      `agent RSS max ${fixed(o.rssMaxMiB)} MiB (< ${TARGET_AGENT_RSS_MB} MB) | server loop p99 ${fixed(o.loopWorstP99, 1)} ms ` +
      `(< ${TARGET_LOOP_P99_MS} ms): ${meets ? 'MEETS TARGETS' : 'BELOW TARGET'}`;
    if (profileReport) process.stdout.write(`\n${profileReport}\n`);
    process.stdout.write(`\n${summary}\n`);
    writeResults(opts.json, { command, startedAt, loadStart }, opts, {
      measurements: all,
      medians: { ours: o, anchor: a, bashAnchor: b, ratio },
      meetsTarget: meets,
    });
    return opts.check && !meets ? 2 : 0;
  } finally {
    await stopAll();
    rmSync(work, { recursive: true, force: true });
    scratch.delete(work);
  }
}

/** One more drain with the server under --cpu-prof and the agent under bench/agent-profile-preload.mjs, summarised over the drain. */
async function profileRun(opts: Options, work: string, apiKey: string): Promise<string> {
  const dir = opts.profileDir ?? mkdtempSync(join(tmpdir(), 'millrace-b2-profile-'));
  mkdirSync(dir, { recursive: true });
  const before = new Set(readdirSync(dir));
  const q = await waitForQuiet('profile', opts.maxLoad, opts.quietTimeoutS);
  const m = await measureOurs(opts, work, apiKey, 0, { loadavg1: q.loadavg1, waitedS: q.waitedS }, dir);
  // The server's main thread (CPU.<date>.<time>.<pid>.0.<seq>.cpuprofile; tsx's loader thread has its own) and the agent.
  const files = readdirSync(dir).filter(
    (f) => (/\.\d+\.0\.\d+\.cpuprofile$/.test(f) || /^CPU\.agent\.\d+\.cpuprofile$/.test(f)) && !before.has(f),
  );
  const parts: string[] = [];
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const summary = summarizeCpuProfile(profile, { window: { startUs: m.startUs, endUs: m.endUs }, root: ROOT });
    if (!summary.windowed || summary.samples < 10) continue; // a process outside the drain
    const isAgent = file.startsWith('CPU.agent.');
    parts.push(
      `CPU profile of the ${isAgent ? 'AGENT' : 'SERVER'} over one drain (${int(m.perSec)} jobs/s while profiled): ${join(dir, file)}\n` +
        `(per-request figures below are per job)\n\n${formatProfileSummary(summary, m.jobs)}`,
    );
  }
  return parts.length ? parts.join('\n\n') : `(no usable .cpuprofile was written to ${dir})`;
}

runBenchmark(main);
