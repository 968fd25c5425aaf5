/**
 * Benchmark B2 (method in bench/README.md): spawn-limited end-to-end throughput. N BASH jobs running `true` go through
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
 * --max-load.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASH_WRAPPER } from '../src/agent/scripts.ts';
import {
  affinity,
  loopDelay,
  pollUntil,
  runSpawnAnchor,
  sampleRss,
  startJobServer,
  statsBetween,
  submitMany,
  waitForQuiet,
} from './agent-harness.ts';
import { coreTimes, coreUse, memoryOf, monoUs, agentCpu, processCpuSeconds, ROOT } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { amount, count, flag, shared, type Values } from './lib/options.ts';
import { profileRun } from './lib/profile.ts';
import { type Dist, dist, fixed, int, median, medians, pct, ratiosByRep, say, Table } from './lib/report.ts';

const TARGET_RATIO = 0.8;
const TARGET_AGENT_RSS_MB = 100;
const TARGET_LOOP_P99_MS = 20;
const DEFINITION = 'GLOBAL.True';
const BODY = Buffer.from('{}');

const OPTIONS = {
  jobs: count(3000, 'jobs per measurement', { env: 'BENCH_JOBS' }),
  concurrency: count(50, 'HTTP submits in flight', { env: 'BENCH_CONCURRENCY' }),
  reps: count(3, 'repetitions of ours and the anchors, interleaved', { env: 'BENCH_REPS' }),
  warmupJobs: count(200, 'untimed jobs drained first on each fresh server (0 = none)', { min: 0 }),
  anchorConcurrency: count(8, "spawns in flight in the anchors (GLOBAL.Local's ExecutionSize)"),
  bashAnchor: flag('leave out the second anchor (the BASH wrapper spawned raw)', { default: true }),
  maxLoad: shared.maxLoad,
  quietTimeout: shared.quietTimeout,
  pollMs: amount(20, 'how often Completed jobs are counted', { arg: 'MS', min: 1 }),
  timeout: amount(300, 'give up on a drain after S seconds', { min: 1 }),
};
type Options = Values<typeof OPTIONS> & { pin: boolean };

// ---------------------------------------------------------------------------------------------------------------
// Measurements

type Target = 'ours' | 'anchor' | 'bash-anchor';

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
  loop?: { worstP99: number; medianP99: number; max: number; seconds: number; p99s: number[] };
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
  stages?: { wait: Dist; toStart: Dist; run: Dist; toCompleted: Dist; slotMs: number };
  affinity?: { server: string; agent: string };
  /** CLOCK_MONOTONIC µs around the drain (to cut profiles). */
  startUs: number;
  endUs: number;
}

const MiB = 1024 * 1024;

async function measureOurs(
  opts: Options,
  work: string,
  apiKey: string,
  rep: number,
  quiet: { loadavg1: number; waitedS: number },
  profileDir?: string,
): Promise<Measurement> {
  const js = await startJobServer({
    pin: opts.pin,
    work,
    name: String(rep),
    apiKey,
    concurrency: opts.concurrency,
    // The server: --cpu-prof. Its local agent (started by the server, and node refuses --cpu-prof in NODE_OPTIONS):
    // a preloaded module that profiles through the inspector and writes CPU.agent.<pid>.cpuprofile at exit.
    ...(profileDir
      ? {
          nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
          env: {
            NODE_OPTIONS: `--import ${join(ROOT, 'bench/agent-profile-preload.mjs')}`,
            BENCH_AGENT_PROFILE_DIR: profileDir,
          },
        }
      : {}),
  });
  const { serve, agentPid, reader: r, http } = js;
  const aff = { server: affinity(serve.proc.pid), agent: affinity(agentPid) };
  const submitAll = async (n: number) => (await submitMany(http, DEFINITION, BODY, n, opts.concurrency)).lastAt;
  try {
    if (opts.warmupJobs > 0) {
      await submitAll(opts.warmupJobs);
      await pollUntil(
        () => r.completed() >= opts.warmupJobs,
        opts.pollMs,
        opts.timeout,
        () => `warm-up: ${JSON.stringify(r.statuses())}`,
      );
    }
    const after = r.maxJobId();
    const rss = sampleRss(agentPid, 100);
    const srv0 = processCpuSeconds(serve.proc.pid);
    const ag0 = agentCpu(agentPid);
    const cores0 = coreTimes();
    const startUs = monoUs();
    const t0Epoch = Date.now();
    const t0 = performance.now();
    const [lastAnswer, tPoll] = await Promise.all([
      submitAll(opts.jobs),
      pollUntil(
        () => r.completed(after) >= opts.jobs,
        opts.pollMs,
        opts.timeout,
        () => JSON.stringify(r.statuses(after)),
      ),
    ]);
    const endUs = monoUs();
    const tEndEpoch = Date.now();
    const { maxBytes } = rss.stop();
    const srv1 = processCpuSeconds(serve.proc.pid);
    const ag1 = agentCpu(agentPid);
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
      agentPeakMiB: memoryOf(agentPid).peakMiB,
      loop: loopDelay(statsBetween(serve.statsFile, t0Epoch, tEndEpoch)),
      serverCpu: (100 * (srv1 - srv0)) / seconds,
      agentCpu: (100 * (ag1.user + ag1.sys - ag0.user - ag0.sys)) / seconds,
      agentSysCpu: (100 * (ag1.sys - ag0.sys)) / seconds,
      childrenCpu: (100 * (ag1.children - ag0.children)) / seconds,
      core0Busy: coreUse(cores0, cores1, 'cpu0').busy,
      core1Busy: coreUse(cores0, cores1, 'cpu1').busy,
      steal: coreUse(cores0, cores1, 'cpu').steal,
      stages: {
        wait: dist(wait),
        toStart: dist(toStart),
        run: dist(run),
        toCompleted: dist(toCompleted),
        slotMs: median(slot),
      },
      affinity: aff,
      startUs,
      endUs,
    };
  } finally {
    await js.close();
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
// The report

const perRep = new Table<Measurement>([
  ['rep target', 16, (m) => `${m.rep} ${m.target}`],
  ['load1', 5, (m) => fixed(m.loadavg1, 2)],
  ['wait', 5, (m) => `${fixed(m.waitedS, 0)}s`],
  ['jobs/s', 7, (m) => int(m.perSec)],
  ['secs', 7, (m) => fixed(m.seconds, 2)],
  ['sub/s', 7, (m) => (m.submitPerSec !== undefined ? int(m.submitPerSec) : '')],
  ['RSSmax', 6, (m) => fixed(m.rssMaxMiB, 0)],
  ['loopP99', 6, (m) => (m.loop ? fixed(m.loop.worstP99, 1) : '')],
  ['srv%', 6, (m) => (m.serverCpu !== undefined ? fixed(m.serverCpu, 0) : '')],
  ['agent%', 6, (m) => (m.agentCpu !== undefined ? fixed(m.agentCpu, 0) : '')],
  ['jobs%', 6, (m) => (m.childrenCpu !== undefined ? fixed(m.childrenCpu, 0) : '')],
  ['core0', 6, (m) => `${fixed(m.core0Busy, 0)}%`],
  ['core1', 6, (m) => `${fixed(m.core1Busy, 0)}%`],
  ['steal', 6, (m) => `${fixed(m.steal, 1)}%`],
]);

benchmark({
  script: 'bench:b2',
  title: 'B2 spawn-limited end-to-end',
  about:
    'B2: BASH jobs running `true` through the local agent (8 slots), against raw spawns of /bin/true with 8 in ' +
    'flight, interleaved in the same run.',
  options: OPTIONS,
  pin: 'self',
  target:
    `a target is missed (ours >= ${TARGET_RATIO * 100} % of the anchor, agent RSS < ${TARGET_AGENT_RSS_MB} MB, ` +
    `server event-loop delay p99 < ${TARGET_LOOP_P99_MS} ms)`,
  profile: 'afterwards, one more drain with the server and the agent under node --cpu-prof',
  async run({ opts, work, apiKey }) {
    const bash = { script: join(work, 'script.bash'), outVars: join(work, 'out-vars') };
    writeFileSync(bash.script, 'true');
    say(
      `ours:    millrace serve (SQLite) + local agent GLOBAL.Local (ExecutionSize 8), ${int(opts.jobs)} × POST ` +
        `/Job/${DEFINITION} (BASH "true"), ${opts.concurrency} in flight; Completed counted every ${opts.pollMs} ms; ` +
        `${int(opts.warmupJobs)} warm-up jobs first on each fresh server`,
      `anchor:  bench/anchor-spawn.mjs: ${int(opts.jobs)} × spawn /bin/true, ${opts.anchorConcurrency} in flight`,
      ...(opts.bashAnchor
        ? [
            `bash:    bench/anchor-spawn.mjs: ${int(opts.jobs)} × spawn the agent's BASH wrapper running "true", ` +
              `${opts.anchorConcurrency} in flight`,
          ]
        : []),
      `pinning: ${opts.pin ? 'server, agent and anchors on core 0; load generator (this process) on core 1' : 'UNPINNED'}; ` +
        `before each measurement: no bench/b1|b5|get-object running and loadavg1 < ${opts.maxLoad}`,
      '',
      perRep.header(),
    );

    const all: Measurement[] = [];
    type Quiet = { loadavg1: number; waitedS: number };
    for (let rep = 1; rep <= opts.reps; rep++) {
      const plan: Array<{ target: Target; run: (q: Quiet) => Promise<Measurement> }> = [
        { target: 'ours', run: (q) => measureOurs(opts, work, apiKey, rep, q) },
        { target: 'anchor', run: (q) => measureAnchor(opts, 'anchor', rep, q) },
        ...(opts.bashAnchor
          ? [{ target: 'bash-anchor' as const, run: (q: Quiet) => measureAnchor(opts, 'bash-anchor', rep, q, bash) }]
          : []),
      ];
      // Alternate which target goes first, so neither always follows the other's load.
      if (rep % 2 === 0) plan.reverse();
      for (const p of plan) {
        const q = await waitForQuiet(`rep ${rep} ${p.target}`, opts.maxLoad, opts.quietTimeout);
        const m = await p.run({ loadavg1: q.loadavg1, waitedS: q.waitedS });
        all.push(m);
        say(perRep.line(m));
        if (m.affinity && rep === 1) say(`    taskset -p: server ${m.affinity.server}, agent ${m.affinity.agent}`);
        if (m.loop) say(`    loop p99 by second (ms): ${m.loop.p99s.map((v) => fixed(v, 1)).join(', ')}`);
      }
    }

    const pick = (t: Target) => all.filter((m) => m.target === t);
    const ours = pick('ours');
    const anchor = pick('anchor');
    const bashA = pick('bash-anchor');
    const o = {
      ...medians(ours, ['perSec', 'submitPerSec', 'serverCpu', 'agentCpu', 'agentSysCpu', 'childrenCpu', 'core0Busy']),
      rssMaxMiB: Math.max(...ours.map((m) => m.rssMaxMiB)),
      rssMedianMiB: median(ours.map((m) => m.rssMaxMiB)),
      loopWorstP99: median(ours.map((m) => m.loop?.worstP99 ?? Number.NaN)),
      loopMedianP99: median(ours.map((m) => m.loop?.medianP99 ?? Number.NaN)),
      loopMax: median(ours.map((m) => m.loop?.max ?? Number.NaN)),
    };
    const a = median(anchor.map((m) => m.perSec));
    const b = median(bashA.map((m) => m.perSec));
    const ratio = o.perSec / a;
    const perRepText = (xs: Measurement[]) =>
      ratiosByRep(ours, xs, (m) => m.perSec)
        .map((r) => pct(100 * r))
        .join(', ');
    const meets =
      ratio >= TARGET_RATIO && o.rssMaxMiB * (MiB / 1e6) < TARGET_AGENT_RSS_MB && o.loopWorstP99 < TARGET_LOOP_P99_MS;
    const st = (f: (m: Measurement) => number) => fixed(median(ours.map(f)), 1);
    const stage = (k: 'wait' | 'toStart' | 'run' | 'toCompleted') =>
      `${st((m) => m.stages?.[k].p50 ?? Number.NaN)} / ${st((m) => m.stages?.[k].p99 ?? Number.NaN)}`;
    say(
      '',
      '(jobs/s: ours = jobs ÷ (first submit → last Completed); anchors = spawns ÷ wall time. wait = seconds waited for',
      " a quiet machine before the measurement. RSSmax: ours = the agent's max VmRSS (MiB, 100 ms samples), anchors =",
      " their own RSS. loopP99 = the server's worst 1-s event-loop delay p99 (ms). srv%/agent%/jobs% = CPU of the",
      " server, the agent and the agent's job processes (bash), % of one core over the drain; core0/core1 busy)",
      '',
      `median of ${ours.length} rep(s):`,
      `  ours (Millrace, BASH true via the local agent)  ${int(o.perSec)} jobs/s  (submit ${int(o.submitPerSec)} req/s)`,
      `  anchor (raw spawn /bin/true, ${opts.anchorConcurrency} in flight)       ${int(a)} spawns/s`,
      ...(opts.bashAnchor ? [`  bash anchor (raw spawn of the BASH wrapper)      ${int(b)} spawns/s`] : []),
      `  ratio ours / anchor                             ${pct(100 * ratio)}  (per rep: ${perRepText(anchor)}; target >= ${TARGET_RATIO * 100} %)`,
      ...(opts.bashAnchor
        ? [
            `  ratio ours / bash anchor                        ${pct((100 * o.perSec) / b)}  (per rep: ${perRepText(bashA)})`,
          ]
        : []),
      `  agent max RSS                                   ${fixed(o.rssMaxMiB)} MiB (max over reps; median ${fixed(o.rssMedianMiB)} MiB; target < ${TARGET_AGENT_RSS_MB} MB)`,
      `  server event-loop delay                         worst-second p99 ${fixed(o.loopWorstP99, 1)} ms, median-second p99 ${fixed(o.loopMedianP99, 1)} ms, max ${fixed(o.loopMax, 1)} ms (target p99 < ${TARGET_LOOP_P99_MS} ms)`,
      `  CPU over the drain (% of one core)              server ${fixed(o.serverCpu, 0)}, agent ${fixed(o.agentCpu, 0)} (kernel ${fixed(o.agentSysCpu, 0)}), job processes ${fixed(o.childrenCpu, 0)}; core 0 busy ${fixed(o.core0Busy, 0)} %`,
      `  CPU per job (ms)                                server ${fixed((o.serverCpu * 10) / o.perSec, 2)}, agent ${fixed((o.agentCpu * 10) / o.perSec, 2)}, job process ${fixed((o.childrenCpu * 10) / o.perSec, 2)}; ` +
        `anchor (whole core 0 ÷ spawns) ${fixed((median(anchor.map((m) => m.core0Busy)) * 10) / a, 2)}, bash anchor ${fixed((median(bashA.map((m) => m.core0Busy)) * 10) / b, 2)}`,
      `  per-job stages (ms, median of reps' p50 / p99): queued→Dispatched ${stage('wait')}; Dispatched→started ` +
        `${stage('toStart')}; process run ${stage('run')}; ended→Completed ${stage('toCompleted')}; ` +
        `slot held (Dispatched→Completed) median ${st((m) => m.stages?.slotMs ?? Number.NaN)}`,
    );

    if (opts.profile) {
      // The server under --cpu-prof; its local agent (started by the server, and node refuses --cpu-prof in
      // NODE_OPTIONS) under a preloaded module that profiles through the inspector and writes CPU.agent.<pid>.cpuprofile.
      const q = await waitForQuiet('profile', opts.maxLoad, opts.quietTimeout);
      const report = await profileRun(
        opts.profileDir,
        (_flags, dir) => measureOurs(opts, work, apiKey, 0, { loadavg1: q.loadavg1, waitedS: q.waitedS }, dir),
        (m, file) => ({
          heading: `CPU profile of the ${file.startsWith('CPU.agent.') ? 'AGENT' : 'SERVER'} over one drain (${int(m.perSec)} jobs/s while profiled)`,
          note: '(per-request figures below are per job)',
          items: m.jobs,
        }),
      );
      say('', report);
    }

    return {
      summary:
        `B2 ${int(opts.jobs)} BASH jobs via the local agent (8 slots), c=${opts.concurrency}, ${ours.length} rep(s): ` +
        `ours ${int(o.perSec)} jobs/s | raw spawn ${int(a)}/s | ratio ${pct(100 * ratio)} (target >= ${TARGET_RATIO * 100} %) | ` +
        `agent RSS max ${fixed(o.rssMaxMiB)} MiB (< ${TARGET_AGENT_RSS_MB} MB) | server loop p99 ${fixed(o.loopWorstP99, 1)} ms ` +
        `(< ${TARGET_LOOP_P99_MS} ms)`,
      meets,
      results: { measurements: all, medians: { ours: o, anchor: a, bashAnchor: b, ratio } },
    };
  },
});
