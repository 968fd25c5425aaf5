/**
 * Benchmark B6: 1,000 jobs scheduled for the same second. The figure is how long after the due time the
 * last one starts (target: within 2 s). For BASH jobs the spawn rate bounds it, so the raw spawn rate of /bin/true
 * with 8 in flight (bench/anchor-spawn.mjs, as in B2) is measured in the same run and N ÷ rate is printed beside it as
 * the lower bound. A second row does the same with in-server no-op jobs (GLOBAL.System_Sleep, MilliSeconds 0): no
 * processes, so it shows what the scheduler itself costs.
 *
 *   npm run bench:b6                      # 2 reps × (BASH, System) × 1,000 jobs, anchor in every rep
 *   npm run bench:b6 -- --reps 1          # quick run
 *
 * Ours: `millrace serve` on a fresh data folder per repetition, pinned to core 0 with its local agent (GLOBAL.Local,
 * default 8 slots). The harness pins itself to core 1 and POSTs the N jobs over keep-alive HTTP (C in flight), all
 * with the same RequestedStartTime: a whole second at least --lead seconds ahead, so every job is Scheduled before it
 * is due. Once all are Completed, each job is read back with GET /Job/<id>: delay = RunStart − due (RunStart is
 * stamped by the dispatch pass for System jobs and by the agent just before it spawns for BASH jobs; ms precision).
 * Reported per phase: the last (the figure), p50 and p99 of the delays, and the last LastModificationTime − due
 * (all Completed). After the server has stopped, the anchor spawns /bin/true N times with 8 in flight on core 0.
 */
import { Agent, request as httpRequest } from 'node:http';
import { parseDate } from '../src/time/date-format.ts';
import {
  type JobsReader,
  loopDelay,
  pollUntil,
  runSpawnAnchor,
  type Submitter,
  startJobServer,
  statsBetween,
  submitMany,
  waitForQuiet,
} from './agent-harness.ts';
import { coreTimes, coreUse, processCpuSeconds, type Serve } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { amount, count, shared, type Values } from './lib/options.ts';
import { fixed, int, median, medians, quantile, say, Table } from './lib/report.ts';

const TARGET_LAST_MS = 2000;
const KINDS = {
  bash: { definition: 'GLOBAL.True', label: 'BASH true (local agent)' },
  system: { definition: 'GLOBAL.System_Sleep', label: 'System no-op (in-server)' },
} as const;
type Kind = keyof typeof KINDS;

const OPTIONS = {
  jobs: count(1000, 'jobs due in the same second, per phase', { env: 'BENCH_JOBS' }),
  reps: count(2, 'repetitions (a fresh server each; BASH and System phases, order alternating)', { env: 'BENCH_REPS' }),
  concurrency: count(50, 'HTTP submits in flight'),
  lead: amount(5, 'the due time is the first whole second at least S seconds after the first submit'),
  warmupJobs: count(100, 'untimed jobs of each kind every fresh server runs first, not scheduled', { min: 0 }),
  anchorConcurrency: count(8, "spawns of /bin/true in flight in the anchor (the local agent's slots)"),
  maxLoad: shared.maxLoad,
  quietTimeout: shared.quietTimeout,
  timeout: amount(120, "give up waiting for a phase's jobs after S seconds past the due time", { min: 1 }),
};
type Options = Values<typeof OPTIONS>;

/** The submit body of a kind, optionally due at `dueMs` (ISO-8601 in UTC, ms precision). */
function body(kind: Kind, dueMs?: number): Buffer {
  const b: Record<string, unknown> =
    kind === 'system' ? { JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] } : {};
  if (dueMs !== undefined) b.RequestedStartTime = new Date(dueMs).toISOString();
  return Buffer.from(JSON.stringify(b));
}

/** POSTs `n` jobs, C in flight; returns the job ids. */
async function submitAll(http: Submitter, kind: Kind, n: number, payload: Buffer, concurrency: number) {
  return (await submitMany(http, KINDS[kind].definition, payload, n, concurrency, { ids: true })).ids;
}

interface JobTimes {
  status: string;
  runStart: number;
  modified: number;
}

/** GET /Job/<id> of every id, C in flight: Status, RunStart and LastModificationTime as epoch ms. */
async function readJobs(base: string, apiKey: string, ids: number[], concurrency: number): Promise<JobTimes[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const get = (id: number) =>
    new Promise<Record<string, unknown>>((res, rej) => {
      const url = new URL(`${base}/Job/${id}`);
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname, agent, headers: { 'X-API-Key': apiKey } },
        (resp) => {
          const chunks: Buffer[] = [];
          resp.on('data', (c: Buffer) => chunks.push(c));
          resp.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (resp.statusCode !== 200) rej(new Error(`GET Job/${id}: ${resp.statusCode} ${text.slice(0, 300)}`));
            else res(JSON.parse(text) as Record<string, unknown>);
          });
          resp.on('error', rej);
        },
      );
      req.on('error', rej);
      req.end();
    });
  // Dates come as `YYYY/MM/DD HH:MM:SS,mmm <zone>`: parsed by the server's own parser, so zones are handled alike.
  const at = (v: unknown) => (typeof v === 'string' ? parseDate(v, 'UTC').ms : Number.NaN);
  try {
    return await Promise.all(
      ids.map(async (id) => {
        const j = await get(id);
        return { status: String(j.Status), runStart: at(j.RunStart), modified: at(j.LastModificationTime) };
      }),
    );
  } finally {
    agent.destroy();
  }
}

interface Phase {
  kind: Kind;
  rep: number;
  loadavg1: number;
  waitedS: number;
  jobs: number;
  /** First POST → last answer, s; and how long before the due time the last answer came (negative: late). */
  submitS: number;
  marginMs: number;
  /** RunStart − due, ms. */
  first: number;
  p50: number;
  p99: number;
  last: number;
  /** Jobs whose RunStart is before the due time (must be 0). */
  early: number;
  /** The last LastModificationTime (Completed) − due, ms. */
  allCompletedMs: number;
  loopWorstP99: number;
  /** From the due time until all Completed, % of one core: the server, the local agent, and core 0 as a whole. */
  serverCpu: number;
  agentCpu: number;
  core0Busy: number;
}

async function runPhase(
  opts: Options,
  serve: Serve,
  apiKey: string,
  reader: JobsReader,
  http: Submitter,
  agentPid: number,
  kind: Kind,
  rep: number,
): Promise<Phase> {
  const q = await waitForQuiet(`rep ${rep} ${kind}`, opts.maxLoad, opts.quietTimeout);
  const after = reader.maxJobId();
  const t0 = Date.now();
  const due = Math.ceil((t0 + opts.lead * 1000) / 1000) * 1000;
  const ids = await submitAll(http, kind, opts.jobs, body(kind, due), opts.concurrency);
  const answered = Date.now();
  // CPU is counted from the due time on: the submits before it are not what this benchmark is about.
  const untilDue = due - Date.now();
  if (untilDue > 0) await new Promise((r) => setTimeout(r, untilDue));
  const cpu0 = processCpuSeconds(serve.proc.pid);
  const agent0 = processCpuSeconds(agentPid);
  const cores0 = coreTimes();
  const tDue = Date.now();
  await pollUntil(
    () => reader.completed(after) >= opts.jobs,
    20,
    opts.timeout + opts.lead,
    () => JSON.stringify(reader.statuses(after)),
  );
  const cpu1 = processCpuSeconds(serve.proc.pid);
  const agent1 = processCpuSeconds(agentPid);
  const cores1 = coreTimes();
  const tEnd = Date.now();
  const perCore = (seconds: number) => (100 * seconds) / Math.max(0.001, (tEnd - tDue) / 1000);
  const jobs = await readJobs(serve.base, apiKey, ids, opts.concurrency);
  const bad = jobs.filter((j) => j.status !== 'Completed' || !Number.isFinite(j.runStart));
  if (bad.length > 0) throw new Error(`rep ${rep} ${kind}: ${bad.length} jobs not Completed with a RunStart`);
  const delays = jobs.map((j) => j.runStart - due);
  return {
    kind,
    rep,
    loadavg1: q.loadavg1,
    waitedS: q.waitedS,
    jobs: jobs.length,
    submitS: (answered - t0) / 1000,
    marginMs: due - answered,
    first: quantile(delays, 0),
    p50: quantile(delays, 0.5),
    p99: quantile(delays, 0.99),
    last: quantile(delays, 1),
    early: delays.filter((d) => d < 0).length,
    allCompletedMs: Math.max(...jobs.map((j) => j.modified)) - due,
    loopWorstP99: loopDelay(statsBetween(serve.statsFile, due, tEnd)).worstP99,
    serverCpu: perCore(cpu1 - cpu0),
    agentCpu: perCore(agent1 - agent0),
    core0Busy: coreUse(cores0, cores1, 'cpu0').busy,
  };
}

interface AnchorM {
  rep: number;
  loadavg1: number;
  perSec: number;
  /** N ÷ rate: the shortest time N spawns can take at that rate, ms. */
  boundMs: number;
}

const perPhase = new Table<Phase>([
  ['rep kind', 10, (p) => `${p.rep} ${p.kind}`],
  ['load1', 5, (p) => fixed(p.loadavg1, 2)],
  ['wait', 5, (p) => `${fixed(p.waitedS, 0)}s`],
  ['jobs', 6, (p) => int(p.jobs)],
  ['submit s', 8, (p) => fixed(p.submitS, 2)],
  ['margin', 8, (p) => int(p.marginMs)],
  ['first', 6, (p) => int(p.first)],
  ['p50', 6, (p) => int(p.p50)],
  ['p99', 6, (p) => int(p.p99)],
  ['LAST', 6, (p) => int(p.last)],
  ['all done', 8, (p) => int(p.allCompletedMs)],
  ['loopP99', 7, (p) => fixed(p.loopWorstP99, 1)],
  ['srv', 4, (p) => `${fixed(p.serverCpu, 0)}%`],
  ['agent', 5, (p) => `${fixed(p.agentCpu, 0)}%`],
  ['core0', 5, (p) => `${fixed(p.core0Busy, 0)}%`],
]);

benchmark({
  script: 'bench:b6',
  title: (o) => `B6 ${int(o.jobs)} jobs due in the same second`,
  about:
    'B6: jobs due in the same second, BASH `true` through the local agent and System no-ops: how long after the ' +
    'due time the last one starts, beside the raw spawn rate of /bin/true measured in the same run.',
  options: OPTIONS,
  pin: 'self',
  target: `the last start is ${TARGET_LAST_MS} ms or more after the due time`,
  async run({ opts, work, apiKey }) {
    say(
      `ours:    millrace serve (SQLite) + local agent (GLOBAL.Local, default slots); ${int(opts.jobs)} POSTs at c=${opts.concurrency} ` +
        `with one RequestedStartTime (a whole second ≥ ${opts.lead} s ahead); delay = RunStart − due from GET /Job/<id>`,
      `         phases: BASH "true" (${KINDS.bash.definition}) and System no-op (${KINDS.system.definition}, MilliSeconds 0)`,
      `anchor:  bench/anchor-spawn.mjs: ${int(opts.jobs)} spawns of /bin/true, ${opts.anchorConcurrency} in flight`,
      `pinning: ${opts.pin ? 'server, agent and anchor on core 0; load generator (this process) on core 1' : 'UNPINNED'}`,
      '',
      perPhase.header(),
    );
    const phases: Phase[] = [];
    const anchors: AnchorM[] = [];
    for (let rep = 1; rep <= opts.reps; rep++) {
      const js = await startJobServer({
        pin: opts.pin,
        work,
        name: String(rep),
        apiKey,
        concurrency: opts.concurrency,
      });
      const { serve, agentPid, reader, http } = js;
      try {
        // A cold server falls behind at its first burst (B4): both kinds run once, unscheduled, before measuring.
        for (const kind of ['bash', 'system'] as const) {
          if (opts.warmupJobs === 0) break;
          const before = reader.maxJobId();
          await submitAll(http, kind, opts.warmupJobs, body(kind), opts.concurrency);
          await pollUntil(
            () => reader.completed(before) >= opts.warmupJobs,
            20,
            opts.timeout,
            () => `warm-up ${kind}: ${JSON.stringify(reader.statuses(before))}`,
          );
        }
        const order: Kind[] = rep % 2 === 1 ? ['bash', 'system'] : ['system', 'bash'];
        for (const kind of order) {
          const p = await runPhase(opts, serve, apiKey, reader, http, agentPid, kind, rep);
          phases.push(p);
          say(
            `${perPhase.line(p)}${p.marginMs < 0 ? '  (submits ended after the due time)' : ''}${p.early ? `  (${p.early} started early!)` : ''}`,
          );
        }
      } finally {
        await js.close();
      }
      const q = await waitForQuiet(`rep ${rep} anchor`, opts.maxLoad, opts.quietTimeout);
      const a = await runSpawnAnchor(opts.pin, opts.jobs, opts.anchorConcurrency);
      anchors.push({ rep, loadavg1: q.loadavg1, perSec: a.perSec, boundMs: (1000 * opts.jobs) / a.perSec });
      say(
        `${rep} anchor: ${int(a.n)} spawns of /bin/true, ${a.concurrency} in flight: ${int(a.perSec)}/s → ` +
          `${int(opts.jobs)} ÷ rate = ${int((1000 * opts.jobs) / a.perSec)} ms`,
      );
    }

    const summaryOf = (kind: Kind) => {
      const ps = phases.filter((p) => p.kind === kind);
      const keys = [
        'first',
        'p50',
        'p99',
        'last',
        'allCompletedMs',
        'loopWorstP99',
        'serverCpu',
        'agentCpu',
        'core0Busy',
      ] as const;
      return { ...medians(ps, keys), perRepLast: ps.map((p) => p.last) };
    };
    const b = summaryOf('bash');
    const s = summaryOf('system');
    const rate = median(anchors.map((a) => a.perSec));
    const bound = median(anchors.map((a) => a.boundMs));
    const line = (kind: Kind, x: ReturnType<typeof summaryOf>) =>
      `  ${KINDS[kind].label.padEnd(26)} last +${int(x.last)} ms (per rep ${x.perRepLast.map(int).join(', ')}), ` +
      `p50 +${int(x.p50)}, p99 +${int(x.p99)}, first +${int(x.first)} ms; all Completed +${int(x.allCompletedMs)} ms; ` +
      `server loop p99 ${fixed(x.loopWorstP99, 1)} ms; CPU server ${fixed(x.serverCpu, 0)} %, agent ${fixed(x.agentCpu, 0)} %, ` +
      `core 0 busy ${fixed(x.core0Busy, 0)} %`;
    say(
      '',
      '(delay columns: RunStart − due time in ms; margin = due time − last submit answer, ms; all done = last',
      " LastModificationTime − due; loopP99 = the server's worst 1-s event-loop delay p99 from the due time on;",
      ' srv/agent/core0 = CPU % of one core from the due time until all Completed)',
      '',
      `median of ${opts.reps} rep(s):`,
      line('bash', b),
      line('system', s),
      `  anchor: raw spawn of /bin/true, ${opts.anchorConcurrency} in flight: ${int(rate)}/s (per rep ` +
        `${anchors.map((a) => int(a.perSec)).join(', ')}) → lower bound for ${int(opts.jobs)} BASH starts ${int(bound)} ms`,
    );
    return {
      summary:
        `B6 ${int(opts.jobs)} jobs due the same second, ${opts.reps} rep(s): BASH last start +${int(b.last)} ms ` +
        `(p50 +${int(b.p50)}, p99 +${int(b.p99)}; all Completed +${int(b.allCompletedMs)} ms) | raw spawn ${int(rate)}/s → ` +
        `bound ${int(bound)} ms | System last start +${int(s.last)} ms (all Completed +${int(s.allCompletedMs)} ms) ` +
        `(target last < ${TARGET_LAST_MS} ms)`,
      meets: b.last < TARGET_LAST_MS && s.last < TARGET_LAST_MS,
      results: { phases, anchors, medians: { bash: b, system: s, anchorPerSec: rate, anchorBoundMs: bound } },
    };
  },
});
