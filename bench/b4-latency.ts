/**
 * Benchmark B4(a) (method in bench/README.md): dispatch latency, submit → RunStart, at 100 submits per second (one
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
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type JobsReader,
  loopDelay,
  pollUntil,
  runSpawnAnchor,
  type Submitter,
  startJobServer,
  statsBetween,
  waitForQuiet,
} from './agent-harness.ts';
import { coreTimes, coreUse, processCpuSeconds, type Serve } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { amount, count, shared, type Values } from './lib/options.ts';
import { type Dist, dist, fixed, int, median, medians, say, Table } from './lib/report.ts';

const TARGET_P99_MS = 50;
const KINDS = {
  system: {
    definition: 'GLOBAL.System_Sleep',
    body: Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] })),
  },
  bash: { definition: 'GLOBAL.True', body: Buffer.from('{}') },
} as const;
type Kind = keyof typeof KINDS;

const OPTIONS = {
  duration: amount(20, 'seconds of submits per phase', { min: 1, env: 'BENCH_DURATION' }),
  intervalMs: amount(10, 'one submit every MS ms (10: 100/s)', { min: 1, arg: 'MS' }),
  warmup: amount(2, 'seconds of submits at the same rate before each phase, not measured'),
  reps: count(3, 'repetitions (a fresh server each; System and BASH phases, order alternating)', { env: 'BENCH_REPS' }),
  anchorSpawns: count(500, 'sequential spawns of /bin/true in the anchor'),
  maxLoad: shared.maxLoad,
  quietTimeout: shared.quietTimeout,
  timeout: amount(120, "give up waiting for a phase's jobs to finish after S seconds", { min: 1 }),
};
type Options = Values<typeof OPTIONS>;

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
  const q = await waitForQuiet(`rep ${rep} ${kind}`, opts.maxLoad, opts.quietTimeout);
  const finished = (after: number, n: number) =>
    pollUntil(
      () => reader.completed(after) >= n,
      20,
      opts.timeout,
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

const perPhase = new Table<Phase>([
  ['rep kind', 12, (p) => `${p.rep} ${p.kind}`],
  ['load1', 5, (p) => fixed(p.loadavg1, 2)],
  ['wait', 5, (p) => `${fixed(p.waitedS, 0)}s`],
  ['jobs', 6, (p) => int(p.jobs)],
  ['rate/s', 6, (p) => fixed(p.rate, 1)],
  ['p50', 7, (p) => fixed(p.latency.p50, 0)],
  ['p99', 7, (p) => fixed(p.latency.p99, 0)],
  ['max', 7, (p) => fixed(p.latency.max, 0)],
  ['disp p99', 8, (p) => fixed(p.toDispatch.p99, 0)],
  ['agent p99', 8, (p) => fixed(p.toStart.p99, 0)],
  ['sub p99', 7, (p) => fixed(p.submit.p99, 1)],
  ['loopP99', 7, (p) => fixed(p.loop.worstP99, 1)],
  ['late', 5, (p) => String(p.late)],
  ['srv CPU', 7, (p) => `${fixed(p.serverCpu, 0)}%`],
  ['core0', 6, (p) => `${fixed(p.core0Busy, 0)}%`],
  ['steal', 6, (p) => `${fixed(p.steal, 1)}%`],
]);

benchmark({
  script: 'bench:b4',
  title: 'B4 dispatch latency (submit → RunStart)',
  about:
    'B4: submit → RunStart latency at 100 submits/s (open loop), System no-op and BASH `true` through the local ' +
    'agent, beside the raw spawn latency of /bin/true in the same run.',
  options: OPTIONS,
  pin: 'self',
  target: `p99 >= ${TARGET_P99_MS} ms for either kind`,
  async run({ opts, work, apiKey }) {
    say(
      `ours:    millrace serve (SQLite) + local agent; one POST every ${opts.intervalMs} ms (open loop) for ${opts.duration} s ` +
        `per phase after ${opts.warmup} s of warm-up; phases: System no-op (${KINDS.system.definition}, MilliSeconds 0) ` +
        `and BASH "true" (${KINDS.bash.definition}); latency = run_start − creation_time over all jobs of a phase`,
      `anchor:  bench/anchor-spawn.mjs: ${opts.anchorSpawns} sequential spawns of /bin/true (spawn() → 'spawn' event, ` +
        'spawn() → exit)',
      `pinning: ${opts.pin ? 'server, agent and anchor on core 0; load generator (this process) on core 1' : 'UNPINNED'}; ` +
        `before each phase: no bench/b1|b5|get-object running and loadavg1 < ${opts.maxLoad}`,
      '',
      perPhase.header(),
    );
    const phases: Phase[] = [];
    const anchors: AnchorM[] = [];
    for (let rep = 1; rep <= opts.reps; rep++) {
      const js = await startJobServer({ pin: opts.pin, work, name: String(rep), apiKey, concurrency: 50 });
      try {
        const order: Kind[] = rep % 2 === 1 ? ['system', 'bash'] : ['bash', 'system'];
        for (const kind of order) {
          const p = await runPhase(opts, js.serve, js.reader, js.http, kind, rep);
          phases.push(p);
          say(perPhase.line(p));
        }
      } finally {
        await js.close();
      }
      const q = await waitForQuiet(`rep ${rep} anchor`, opts.maxLoad, opts.quietTimeout);
      const a = await runSpawnAnchor(opts.pin, opts.anchorSpawns, 1);
      anchors.push({ rep, loadavg1: q.loadavg1, n: a.n, startMs: a.startMs, exitMs: a.exitMs });
      say(
        `${rep} anchor: ${a.n} sequential spawns of /bin/true: spawn→started p50 ${fixed(a.startMs.p50, 2)} p99 ` +
          `${fixed(a.startMs.p99, 2)} max ${fixed(a.startMs.max, 2)} ms; spawn→exit p50 ${fixed(a.exitMs.p50, 2)} ` +
          `p99 ${fixed(a.exitMs.p99, 2)} max ${fixed(a.exitMs.max, 2)} ms (${int(a.perSec)}/s)`,
      );
    }

    const summaryOf = (kind: Kind) => {
      const ps = phases.filter((p) => p.kind === kind);
      const m = (f: (p: Phase) => number) => median(ps.map(f));
      return {
        ...medians(
          ps.map((p) => p.latency),
          ['p50', 'p99', 'max'],
        ),
        dispatchP99: m((p) => p.toDispatch.p99),
        agentP99: m((p) => p.toStart.p99),
        submitP99: m((p) => p.submit.p99),
        loopWorstP99: m((p) => p.loop.worstP99),
        serverCpu: m((p) => p.serverCpu),
        perRep: ps.map((p) => `${fixed(p.latency.p50, 0)}/${fixed(p.latency.p99, 0)}/${fixed(p.latency.max, 0)}`),
      };
    };
    const s = summaryOf('system');
    const b = summaryOf('bash');
    const an = {
      startP50: median(anchors.map((a) => a.startMs.p50)),
      startP99: median(anchors.map((a) => a.startMs.p99)),
      exitP50: median(anchors.map((a) => a.exitMs.p50)),
      exitP99: median(anchors.map((a) => a.exitMs.p99)),
      exitMax: median(anchors.map((a) => a.exitMs.max)),
    };
    const line = (name: string, x: ReturnType<typeof summaryOf>) =>
      `  ${name.padEnd(30)} p50 ${fixed(x.p50, 0)} ms, p99 ${fixed(x.p99, 0)} ms, max ${fixed(x.max, 0)} ms ` +
      `(created→dispatched p99 ${fixed(x.dispatchP99, 0)}, dispatched→started p99 ${fixed(x.agentP99, 0)}; submit answer p99 ` +
      `${fixed(x.submitP99, 1)} ms; server loop p99 ${fixed(x.loopWorstP99, 1)} ms; server CPU ${fixed(x.serverCpu, 0)} %)`;
    say(
      '',
      '(latency columns: run_start − creation_time in ms, whole ms as stored; disp = creation → scheduled_start (the',
      ' dispatch pass), agent = scheduled_start → run_start (0 for System); sub = HTTP answer time at the client;',
      " loopP99 = the server's worst 1-s event-loop delay p99; late = submits sent > 5 ms after their slot)",
      '',
      `median of ${opts.reps} rep(s):`,
      line('System no-op (in-server)', s),
      line('BASH true (local agent)', b),
      `  per rep p50/p99/max: System ${s.perRep.join(', ')}; BASH ${b.perRep.join(', ')}`,
      `  anchor: sequential spawn of /bin/true: spawn→started p50 ${fixed(an.startP50, 2)} p99 ${fixed(an.startP99, 2)} ms; ` +
        `spawn→exit p50 ${fixed(an.exitP50, 2)} p99 ${fixed(an.exitP99, 2)} max ${fixed(an.exitMax, 2)} ms`,
    );
    return {
      summary:
        `B4 submit → RunStart at ${fixed(1000 / opts.intervalMs, 0)}/s, ${opts.reps} rep(s) × ${opts.duration} s: ` +
        `System p50 ${fixed(s.p50, 0)} / p99 ${fixed(s.p99, 0)} / max ${fixed(s.max, 0)} ms | BASH p50 ${fixed(b.p50, 0)} / p99 ` +
        `${fixed(b.p99, 0)} / max ${fixed(b.max, 0)} ms | raw spawn→exit p50 ${fixed(an.exitP50, 2)} ms (target p99 < ${TARGET_P99_MS} ms)`,
      meets: s.p99 < TARGET_P99_MS && b.p99 < TARGET_P99_MS,
      results: { phases, anchors, medians: { system: s, bash: b, anchor: an } },
    };
  },
});
