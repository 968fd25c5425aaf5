/**
 * Benchmark B4(a) (perf-reliability.md §6): dispatch latency, submit → RunStart, at 100 submits per second (one
 * every 10 ms, open loop), separately for an in-server System no-op (GLOBAL.System_Sleep, MilliSeconds 0) and for a
 * BASH job running `true` through the local agent. The anchor, for context, is the raw spawn latency of /bin/true
 * (sequential spawns from a small separate Node process, bench/anchor-spawn.mjs), measured in the same run.
 *
 *   npm run bench:b4                           # 3 reps × (System 20 s, BASH 20 s), anchor in every rep
 *   npm run bench:b4 -- --duration 10 --reps 1 # quick run
 *
 * Ours: `millrace serve` on a fresh data folder per repetition, pinned to core 0 with its local agent. The harness
 * pins itself to core 1 and submits `POST …/Job/<definition>` on a fixed schedule (the i-th at t0 + i × interval,
 * whether or not earlier answers have come back), after a warm-up of --warmup seconds at the same rate. Latency =
 * run_start − creation_time of every job of the measured window, read from the jobs table (read-only) once all have
 * finished: the server stamps creation_time when it inserts the job and run_start when the job starts (System: the
 * dispatch pass; BASH: the agent, just before it spawns). Percentiles are over all jobs of a phase. Before every
 * phase the harness waits until no other benchmark runs and the 1-minute loadavg is below --max-load.
 * Exit status: 0 done, 1 failure, 2 the target missed with --check.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  createBashDefinition,
  JobsReader,
  localAgentPid,
  loopDelay,
  pollUntil,
  runSpawnAnchor,
  type Serve,
  type Submitter,
  startServe,
  statsBetween,
  submitter,
  waitForQuiet,
} from './agent-harness.ts';
import {
  canPin,
  commandLine,
  coreTimes,
  coreUse,
  fixed,
  int,
  median,
  numberOption,
  pinSelf,
  processCpuSeconds,
  quantile,
  row,
  runBenchmark,
  scratch,
  stop,
  stopAll,
  writeResults,
} from './harness.ts';

const TARGET_P99_MS = 50;
const KINDS = {
  system: {
    definition: 'GLOBAL.System_Sleep',
    body: Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] })),
  },
  bash: { definition: 'GLOBAL.True', body: Buffer.from('{}') },
} as const;
type Kind = keyof typeof KINDS;

interface Options {
  duration: number;
  intervalMs: number;
  warmup: number;
  reps: number;
  anchorSpawns: number;
  pin: boolean;
  maxLoad: number;
  quietTimeoutS: number;
  timeoutS: number;
  json?: string;
  check: boolean;
}

const USAGE = `usage: npm run bench:b4 -- [options]
  --duration S        seconds of submits per phase (env BENCH_DURATION, default 20)
  --interval-ms MS    one submit every MS ms (default 10, i.e. 100/s)
  --warmup S          seconds of submits at the same rate before each phase, not measured (default 2)
  --reps N            repetitions (a fresh server each; System and BASH phases, order alternating) (default 3)
  --anchor-spawns N   sequential spawns of /bin/true in the anchor (default 500)
  --max-load L        before each phase wait until loadavg1 < L and no other benchmark runs (default 1.5)
  --quiet-timeout S   measure anyway after waiting S seconds (default 1800)
  --timeout S         give up waiting for a phase's jobs to finish after S seconds (default 120)
  --no-pin            do not use taskset (results are then not comparable with pinned ones)
  --json FILE         also write every measurement as JSON
  --check             exit with status 2 when p99 >= ${TARGET_P99_MS} ms for either kind`;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      'interval-ms': { type: 'string' },
      warmup: { type: 'string' },
      reps: { type: 'string' },
      'anchor-spawns': { type: 'string' },
      'max-load': { type: 'string' },
      'quiet-timeout': { type: 'string' },
      timeout: { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
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
    duration: num(values.duration, 'BENCH_DURATION', 20, 1),
    intervalMs: num(values['interval-ms'], undefined, 10, 1),
    warmup: num(values.warmup, undefined, 2, 0),
    reps: Math.floor(num(values.reps, 'BENCH_REPS', 3, 1)),
    anchorSpawns: Math.floor(num(values['anchor-spawns'], undefined, 500, 1)),
    pin: !values['no-pin'],
    maxLoad: num(values['max-load'], undefined, 1.5, 0),
    quietTimeoutS: num(values['quiet-timeout'], undefined, 1800, 0),
    timeoutS: num(values.timeout, undefined, 120, 1),
    ...(values.json !== undefined ? { json: resolve(values.json) } : {}),
    check: values.check,
  };
}

interface Dist {
  p50: number;
  p99: number;
  max: number;
}

const dist = (xs: number[]): Dist => ({ p50: quantile(xs, 0.5), p99: quantile(xs, 0.99), max: quantile(xs, 1) });

interface Phase {
  kind: Kind;
  rep: number;
  loadavg1: number;
  waitedS: number;
  jobs: number;
  /** Submits per second actually achieved. */
  rate: number;
  /** run_start − creation_time, ms. */
  latency: Dist;
  /** creation_time → scheduled_start (the dispatch pass), and scheduled_start → run_start (the agent), ms. */
  toDispatch: Dist;
  toStart: Dist;
  /** HTTP answer time of the submits, ms (client side). */
  submit: Dist;
  /** Submits sent more than 5 ms after their slot (the load generator fell behind). */
  late: number;
  loop: ReturnType<typeof loopDelay>;
  serverCpu: number;
  core0Busy: number;
  steal: number;
}

/** Open loop: the i-th submit goes at t0 + i × interval; answers are not waited for. Returns answer times (ms). */
async function openLoop(
  http: Submitter,
  kind: Kind,
  seconds: number,
  intervalMs: number,
): Promise<{ latencies: number[]; late: number; rate: number }> {
  const { definition, body } = KINDS[kind];
  const n = Math.round((seconds * 1000) / intervalMs);
  const latencies: number[] = [];
  const pending: Array<Promise<void>> = [];
  let late = 0;
  let failure: unknown;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const due = t0 + i * intervalMs;
    const wait = due - performance.now();
    if (wait >= 1) await sleep(Math.floor(wait));
    if (performance.now() - due > 5) late++;
    const t = performance.now();
    pending.push(
      http.submit(definition, body).then(
        (r) => {
          latencies.push(performance.now() - t);
          if (r.status !== 201) failure ??= new Error(`POST Job/${definition}: ${r.status} ${r.body.slice(0, 300)}`);
        },
        (err: unknown) => {
          failure ??= err;
        },
      ),
    );
    if (failure) break;
  }
  const sentIn = (performance.now() - t0) / 1000;
  await Promise.all(pending);
  if (failure) throw failure;
  return { latencies, late, rate: n / sentIn };
}

async function runPhase(
  opts: Options,
  serve: Serve,
  reader: JobsReader,
  http: Submitter,
  kind: Kind,
  rep: number,
): Promise<Phase> {
  const q = await waitForQuiet(`rep ${rep} ${kind}`, opts.maxLoad, opts.quietTimeoutS);
  const finished = (after: number, n: number) =>
    pollUntil(
      () => reader.completed(after) >= n,
      20,
      opts.timeoutS,
      () => JSON.stringify(reader.statuses(after)),
    );
  if (opts.warmup > 0) {
    const before = reader.maxJobId();
    const w = await openLoop(http, kind, opts.warmup, opts.intervalMs);
    await finished(before, w.latencies.length);
  }
  const after = reader.maxJobId();
  const cpu0 = processCpuSeconds(serve.proc.pid);
  const cores0 = coreTimes();
  const t0 = Date.now();
  const sent = await openLoop(http, kind, opts.duration, opts.intervalMs);
  await finished(after, sent.latencies.length);
  const t1 = Date.now();
  const cpu1 = processCpuSeconds(serve.proc.pid);
  const cores1 = coreTimes();
  const rows = reader.rows(after).filter((r) => r.definition === KINDS[kind].definition);
  if (rows.length !== sent.latencies.length || rows.some((r) => r.status !== 'Completed' || r.run_start === null))
    throw new Error(
      `rep ${rep} ${kind}: expected ${sent.latencies.length} Completed jobs, found ${JSON.stringify(reader.statuses(after))}`,
    );
  const num = (v: number | null) => v ?? Number.NaN;
  return {
    kind,
    rep,
    loadavg1: q.loadavg1,
    waitedS: q.waitedS,
    jobs: rows.length,
    rate: sent.rate,
    latency: dist(rows.map((r) => num(r.run_start) - r.creation_time)),
    toDispatch: dist(rows.map((r) => num(r.scheduled_start) - r.creation_time)),
    toStart: dist(rows.map((r) => num(r.run_start) - num(r.scheduled_start))),
    submit: dist(sent.latencies),
    late: sent.late,
    loop: loopDelay(statsBetween(serve.statsFile, t0, t1)),
    serverCpu: (100 * (cpu1 - cpu0)) / ((t1 - t0) / 1000),
    core0Busy: coreUse(cores0, cores1, 'cpu0').busy,
    steal: coreUse(cores0, cores1, 'cpu').steal,
  };
}

interface AnchorM {
  rep: number;
  loadavg1: number;
  n: number;
  startMs: Dist;
  exitMs: Dist;
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const command = commandLine('bench:b4');
  const cpus = availableParallelism();
  if (opts.pin) opts.pin = canPin();
  if (opts.pin) pinSelf(1);
  const work = mkdtempSync(join(tmpdir(), 'millrace-b4-'));
  scratch.add(work);
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const startedAt = new Date();
  const loadStart = loadavg();
  try {
    process.stdout.write(
      `Millrace B4 dispatch latency (submit → RunStart), ${startedAt.toISOString()}, node ${process.version}, ${cpus} CPUs, ` +
        `loadavg ${loadStart.map((x) => x.toFixed(2)).join(' ')}\ncommand: ${command}\n` +
        `ours:    millrace serve (SQLite) + local agent; one POST every ${opts.intervalMs} ms (open loop) for ${opts.duration} s ` +
        `per phase after ${opts.warmup} s of warm-up; phases: System no-op (${KINDS.system.definition}, MilliSeconds 0) ` +
        `and BASH "true" (${KINDS.bash.definition}); latency = run_start − creation_time over all jobs of a phase\n` +
        `anchor:  bench/anchor-spawn.mjs: ${opts.anchorSpawns} sequential spawns of /bin/true (spawn() → 'spawn' event, ` +
        `spawn() → exit)\n` +
        `pinning: ${opts.pin ? 'server, agent and anchor on core 0; load generator (this process) on core 1' : 'UNPINNED'}; ` +
        `before each phase: no bench/b1|b5|get-object running and loadavg1 < ${opts.maxLoad}\n\n`,
    );
    const phases: Phase[] = [];
    const anchors: AnchorM[] = [];
    const widths = [12, 5, 5, 6, 6, 7, 7, 7, 8, 8, 7, 7, 5, 7, 6, 6];
    process.stdout.write(
      `${row(['rep kind', 'load1', 'wait', 'jobs', 'rate/s', 'p50', 'p99', 'max', 'disp p99', 'agent p99', 'sub p99', 'loopP99', 'late', 'srv CPU', 'core0', 'steal'], widths)}\n`,
    );
    for (let rep = 1; rep <= opts.reps; rep++) {
      const dataDir = join(work, `ours-${rep}`);
      const statsFile = join(work, `stats-${rep}.ndjson`);
      const serve = await startServe({ pin: opts.pin, dataDir, apiKey, statsFile });
      await localAgentPid(dataDir);
      await createBashDefinition(serve.base, apiKey, 'True', 'true');
      const reader = new JobsReader(dataDir);
      const http = submitter(serve.base, apiKey, 50);
      try {
        const order: Kind[] = rep % 2 === 1 ? ['system', 'bash'] : ['bash', 'system'];
        for (const kind of order) {
          const p = await runPhase(opts, serve, reader, http, kind, rep);
          phases.push(p);
          process.stdout.write(
            `${row(
              [
                `${rep} ${kind}`,
                fixed(p.loadavg1, 2),
                `${fixed(p.waitedS, 0)}s`,
                int(p.jobs),
                fixed(p.rate, 1),
                fixed(p.latency.p50, 0),
                fixed(p.latency.p99, 0),
                fixed(p.latency.max, 0),
                fixed(p.toDispatch.p99, 0),
                fixed(p.toStart.p99, 0),
                fixed(p.submit.p99, 1),
                fixed(p.loop.worstP99, 1),
                String(p.late),
                `${fixed(p.serverCpu, 0)}%`,
                `${fixed(p.core0Busy, 0)}%`,
                `${fixed(p.steal, 1)}%`,
              ],
              widths,
            )}\n`,
          );
        }
      } finally {
        http.close();
        reader.close();
        await stop(serve.proc);
        rmSync(dataDir, { recursive: true, force: true });
      }
      const q = await waitForQuiet(`rep ${rep} anchor`, opts.maxLoad, opts.quietTimeoutS);
      const a = await runSpawnAnchor(opts.pin, opts.anchorSpawns, 1);
      anchors.push({ rep, loadavg1: q.loadavg1, n: a.n, startMs: a.startMs, exitMs: a.exitMs });
      process.stdout.write(
        `${rep} anchor: ${a.n} sequential spawns of /bin/true: spawn→started p50 ${fixed(a.startMs.p50, 2)} p99 ` +
          `${fixed(a.startMs.p99, 2)} max ${fixed(a.startMs.max, 2)} ms; spawn→exit p50 ${fixed(a.exitMs.p50, 2)} ` +
          `p99 ${fixed(a.exitMs.p99, 2)} max ${fixed(a.exitMs.max, 2)} ms (${int(a.perSec)}/s)\n`,
      );
    }

    const med = (kind: Kind, f: (p: Phase) => number) => median(phases.filter((p) => p.kind === kind).map(f));
    const summaryOf = (kind: Kind) => ({
      p50: med(kind, (p) => p.latency.p50),
      p99: med(kind, (p) => p.latency.p99),
      max: med(kind, (p) => p.latency.max),
      dispatchP99: med(kind, (p) => p.toDispatch.p99),
      agentP99: med(kind, (p) => p.toStart.p99),
      submitP99: med(kind, (p) => p.submit.p99),
      loopWorstP99: med(kind, (p) => p.loop.worstP99),
      serverCpu: med(kind, (p) => p.serverCpu),
    });
    const s = summaryOf('system');
    const b = summaryOf('bash');
    const an = {
      startP50: median(anchors.map((a) => a.startMs.p50)),
      startP99: median(anchors.map((a) => a.startMs.p99)),
      exitP50: median(anchors.map((a) => a.exitMs.p50)),
      exitP99: median(anchors.map((a) => a.exitMs.p99)),
      exitMax: median(anchors.map((a) => a.exitMs.max)),
    };
    const meets = s.p99 < TARGET_P99_MS && b.p99 < TARGET_P99_MS;
    const perRep = (kind: Kind) =>
      phases
        .filter((p) => p.kind === kind)
        .map((p) => `${fixed(p.latency.p50, 0)}/${fixed(p.latency.p99, 0)}/${fixed(p.latency.max, 0)}`)
        .join(', ');
    const line = (name: string, x: ReturnType<typeof summaryOf>) =>
      `  ${name.padEnd(30)} p50 ${fixed(x.p50, 0)} ms, p99 ${fixed(x.p99, 0)} ms, max ${fixed(x.max, 0)} ms ` +
      `(created→dispatched p99 ${fixed(x.dispatchP99, 0)}, dispatched→started p99 ${fixed(x.agentP99, 0)}; submit answer p99 ` +
      `${fixed(x.submitP99, 1)} ms; server loop p99 ${fixed(x.loopWorstP99, 1)} ms; server CPU ${fixed(x.serverCpu, 0)} %)\n`;
    process.stdout.write(
      `\n(latency columns: run_start − creation_time in ms, whole ms as stored; disp = creation → scheduled_start (the\n` +
        ` dispatch pass), agent = scheduled_start → run_start (0 for System); sub = HTTP answer time at the client;\n` +
        ` loopP99 = the server's worst 1-s event-loop delay p99; late = submits sent > 5 ms after their slot)\n\n` +
        `median of ${opts.reps} rep(s):\n` +
        line('System no-op (in-server)', s) +
        line('BASH true (local agent)', b) +
        `  per rep p50/p99/max: System ${perRep('system')}; BASH ${perRep('bash')}\n` +
        `  anchor: sequential spawn of /bin/true: spawn→started p50 ${fixed(an.startP50, 2)} p99 ${fixed(an.startP99, 2)} ms; ` +
        `spawn→exit p50 ${fixed(an.exitP50, 2)} p99 ${fixed(an.exitP99, 2)} max ${fixed(an.exitMax, 2)} ms\n` +
        `  loadavg at the end ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}\n`,
    );
    const summary =
      `SUMMARY B4 submit → RunStart at ${fixed(1000 / opts.intervalMs, 0)}/s, ${opts.reps} rep(s) × ${opts.duration} s: ` +
      `System p50 ${fixed(s.p50, 0)} / p99 ${fixed(s.p99, 0)} / max ${fixed(s.max, 0)} ms | BASH p50 ${fixed(b.p50, 0)} / p99 ` +
      `${fixed(b.p99, 0)} / max ${fixed(b.max, 0)} ms | raw spawn→exit p50 ${fixed(an.exitP50, 2)} ms (target p99 < ${TARGET_P99_MS} ms): ` +
      `${meets ? 'MEETS TARGET' : 'BELOW TARGET'}`;
    process.stdout.write(`\n${summary}\n`);
    writeResults(opts.json, { command, startedAt, loadStart }, opts, {
      phases,
      anchors,
      medians: { system: s, bash: b, anchor: an },
      meetsTarget: meets,
    });
    return opts.check && !meets ? 2 : 0;
  } finally {
    await stopAll();
    rmSync(work, { recursive: true, force: true });
    scratch.delete(work);
  }
}

runBenchmark(main);
