/**
 * Benchmark B6 (issue 4): 1,000 jobs scheduled for the same second. The figure is how long after the due time the
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
 * Exit status: 0 done, 1 failure, 2 the target missed with --check.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDate } from '../src/time/date-format.ts';
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

const TARGET_LAST_MS = 2000;
const KINDS = {
  bash: { definition: 'GLOBAL.True', label: 'BASH true (local agent)' },
  system: { definition: 'GLOBAL.System_Sleep', label: 'System no-op (in-server)' },
} as const;
type Kind = keyof typeof KINDS;

interface Options {
  jobs: number;
  reps: number;
  concurrency: number;
  leadS: number;
  warmupJobs: number;
  anchorConcurrency: number;
  pin: boolean;
  maxLoad: number;
  quietTimeoutS: number;
  timeoutS: number;
  json?: string;
  check: boolean;
}

const USAGE = `usage: npm run bench:b6 -- [options]
  --jobs N               jobs due in the same second, per phase (env BENCH_JOBS, default 1000)
  --reps N               repetitions (a fresh server each; BASH and System phases, order alternating) (default 2)
  --concurrency C        HTTP submits in flight (default 50)
  --lead S               the due time is the first whole second at least S seconds after the first submit (default 5)
  --warmup-jobs N        untimed jobs of each kind every fresh server runs first, not scheduled (default 100)
  --anchor-concurrency N spawns of /bin/true in flight in the anchor (default 8, the local agent's slots)
  --max-load L           before each phase wait until loadavg1 < L and no other benchmark runs (default 1.5)
  --quiet-timeout S      measure anyway after waiting S seconds (default 1800)
  --timeout S            give up waiting for a phase's jobs after S seconds past the due time (default 120)
  --no-pin               do not use taskset (results are then not comparable with pinned ones)
  --json FILE            also write every measurement as JSON
  --check                exit with status 2 when the last start is ${TARGET_LAST_MS} ms or more after the due time`;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      jobs: { type: 'string' },
      reps: { type: 'string' },
      concurrency: { type: 'string' },
      lead: { type: 'string' },
      'warmup-jobs': { type: 'string' },
      'anchor-concurrency': { type: 'string' },
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
    jobs: Math.floor(num(values.jobs, 'BENCH_JOBS', 1000, 1)),
    reps: Math.floor(num(values.reps, 'BENCH_REPS', 2, 1)),
    concurrency: Math.floor(num(values.concurrency, undefined, 50, 1)),
    leadS: num(values.lead, undefined, 5, 0),
    warmupJobs: Math.floor(num(values['warmup-jobs'], undefined, 100, 0)),
    anchorConcurrency: Math.floor(num(values['anchor-concurrency'], undefined, 8, 1)),
    pin: !values['no-pin'],
    maxLoad: num(values['max-load'], undefined, 1.5, 0),
    quietTimeoutS: num(values['quiet-timeout'], undefined, 1800, 0),
    timeoutS: num(values.timeout, undefined, 120, 1),
    ...(values.json !== undefined ? { json: resolve(values.json) } : {}),
    check: values.check,
  };
}

/** The submit body of a kind, optionally due at `dueMs` (ISO-8601 in UTC, ms precision). */
function body(kind: Kind, dueMs?: number): Buffer {
  const b: Record<string, unknown> =
    kind === 'system' ? { JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] } : {};
  if (dueMs !== undefined) b.RequestedStartTime = new Date(dueMs).toISOString();
  return Buffer.from(JSON.stringify(b));
}

/** POSTs `n` jobs at once; the keep-alive agent's maxSockets keeps C in flight. Returns the job ids in order. */
async function submitAll(http: Submitter, kind: Kind, n: number, payload: Buffer): Promise<number[]> {
  const definition = KINDS[kind].definition;
  return Promise.all(
    Array.from({ length: n }, async () => {
      const r = await http.submit(definition, payload);
      if (r.status !== 201) throw new Error(`POST Job/${definition}: ${r.status} ${r.body.slice(0, 300)}`);
      return (JSON.parse(r.body) as { jobId: number }).jobId;
    }),
  );
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
  const q = await waitForQuiet(`rep ${rep} ${kind}`, opts.maxLoad, opts.quietTimeoutS);
  const after = reader.maxJobId();
  const t0 = Date.now();
  const due = Math.ceil((t0 + opts.leadS * 1000) / 1000) * 1000;
  const ids = await submitAll(http, kind, opts.jobs, body(kind, due));
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
    opts.timeoutS + opts.leadS,
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

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const command = commandLine('bench:b6');
  const cpus = availableParallelism();
  if (opts.pin) opts.pin = canPin();
  if (opts.pin) pinSelf(1);
  const work = mkdtempSync(join(tmpdir(), 'millrace-b6-'));
  scratch.add(work);
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const startedAt = new Date();
  const loadStart = loadavg();
  try {
    process.stdout.write(
      `Millrace B6 ${int(opts.jobs)} jobs due in the same second, ${startedAt.toISOString()}, node ${process.version}, ` +
        `${cpus} CPUs, loadavg ${loadStart.map((x) => x.toFixed(2)).join(' ')}\ncommand: ${command}\n` +
        `ours:    millrace serve (SQLite) + local agent (GLOBAL.Local, default slots); ${int(opts.jobs)} POSTs at c=${opts.concurrency} ` +
        `with one RequestedStartTime (a whole second ≥ ${opts.leadS} s ahead); delay = RunStart − due from GET /Job/<id>\n` +
        `         phases: BASH "true" (${KINDS.bash.definition}) and System no-op (${KINDS.system.definition}, MilliSeconds 0)\n` +
        `anchor:  bench/anchor-spawn.mjs: ${int(opts.jobs)} spawns of /bin/true, ${opts.anchorConcurrency} in flight\n` +
        `pinning: ${opts.pin ? 'server, agent and anchor on core 0; load generator (this process) on core 1' : 'UNPINNED'}\n\n`,
    );
    const phases: Phase[] = [];
    const anchors: AnchorM[] = [];
    const widths = [10, 5, 5, 6, 8, 8, 6, 6, 6, 6, 8, 7, 4, 5, 5];
    process.stdout.write(
      `${row(['rep kind', 'load1', 'wait', 'jobs', 'submit s', 'margin', 'first', 'p50', 'p99', 'LAST', 'all done', 'loopP99', 'srv', 'agent', 'core0'], widths)}\n`,
    );
    for (let rep = 1; rep <= opts.reps; rep++) {
      const dataDir = join(work, `ours-${rep}`);
      const statsFile = join(work, `stats-${rep}.ndjson`);
      const serve = await startServe({ pin: opts.pin, dataDir, apiKey, statsFile });
      const agentPid = await localAgentPid(dataDir);
      await createBashDefinition(serve.base, apiKey, 'True', 'true');
      const reader = new JobsReader(dataDir);
      const http = submitter(serve.base, apiKey, opts.concurrency);
      try {
        // A cold server falls behind at its first burst (B4): both kinds run once, unscheduled, before measuring.
        for (const kind of ['bash', 'system'] as const) {
          if (opts.warmupJobs === 0) break;
          const before = reader.maxJobId();
          await submitAll(http, kind, opts.warmupJobs, body(kind));
          await pollUntil(
            () => reader.completed(before) >= opts.warmupJobs,
            20,
            opts.timeoutS,
            () => `warm-up ${kind}: ${JSON.stringify(reader.statuses(before))}`,
          );
        }
        const order: Kind[] = rep % 2 === 1 ? ['bash', 'system'] : ['system', 'bash'];
        for (const kind of order) {
          const p = await runPhase(opts, serve, apiKey, reader, http, agentPid, kind, rep);
          phases.push(p);
          process.stdout.write(
            `${row(
              [
                `${rep} ${kind}`,
                fixed(p.loadavg1, 2),
                `${fixed(p.waitedS, 0)}s`,
                int(p.jobs),
                fixed(p.submitS, 2),
                int(p.marginMs),
                int(p.first),
                int(p.p50),
                int(p.p99),
                int(p.last),
                int(p.allCompletedMs),
                fixed(p.loopWorstP99, 1),
                `${fixed(p.serverCpu, 0)}%`,
                `${fixed(p.agentCpu, 0)}%`,
                `${fixed(p.core0Busy, 0)}%`,
              ],
              widths,
            )}${p.marginMs < 0 ? '  (submits ended after the due time)' : ''}${p.early ? `  (${p.early} started early!)` : ''}\n`,
          );
        }
      } finally {
        http.close();
        reader.close();
        await stop(serve.proc);
        rmSync(dataDir, { recursive: true, force: true });
      }
      const q = await waitForQuiet(`rep ${rep} anchor`, opts.maxLoad, opts.quietTimeoutS);
      const a = await runSpawnAnchor(opts.pin, opts.jobs, opts.anchorConcurrency);
      anchors.push({ rep, loadavg1: q.loadavg1, perSec: a.perSec, boundMs: (1000 * opts.jobs) / a.perSec });
      process.stdout.write(
        `${rep} anchor: ${int(a.n)} spawns of /bin/true, ${a.concurrency} in flight: ${int(a.perSec)}/s → ` +
          `${int(opts.jobs)} ÷ rate = ${int((1000 * opts.jobs) / a.perSec)} ms\n`,
      );
    }

    const med = (kind: Kind, f: (p: Phase) => number) => median(phases.filter((p) => p.kind === kind).map(f));
    const summaryOf = (kind: Kind) => ({
      first: med(kind, (p) => p.first),
      p50: med(kind, (p) => p.p50),
      p99: med(kind, (p) => p.p99),
      last: med(kind, (p) => p.last),
      allCompletedMs: med(kind, (p) => p.allCompletedMs),
      loopWorstP99: med(kind, (p) => p.loopWorstP99),
      serverCpu: med(kind, (p) => p.serverCpu),
      agentCpu: med(kind, (p) => p.agentCpu),
      core0Busy: med(kind, (p) => p.core0Busy),
      perRepLast: phases.filter((p) => p.kind === kind).map((p) => p.last),
    });
    const b = summaryOf('bash');
    const s = summaryOf('system');
    const rate = median(anchors.map((a) => a.perSec));
    const bound = median(anchors.map((a) => a.boundMs));
    const meets = b.last < TARGET_LAST_MS && s.last < TARGET_LAST_MS;
    const line = (kind: Kind, x: ReturnType<typeof summaryOf>) =>
      `  ${KINDS[kind].label.padEnd(26)} last +${int(x.last)} ms (per rep ${x.perRepLast.map(int).join(', ')}), ` +
      `p50 +${int(x.p50)}, p99 +${int(x.p99)}, first +${int(x.first)} ms; all Completed +${int(x.allCompletedMs)} ms; ` +
      `server loop p99 ${fixed(x.loopWorstP99, 1)} ms; CPU server ${fixed(x.serverCpu, 0)} %, agent ${fixed(x.agentCpu, 0)} %, ` +
      `core 0 busy ${fixed(x.core0Busy, 0)} %\n`;
    process.stdout.write(
      `\n(delay columns: RunStart − due time in ms; margin = due time − last submit answer, ms; all done = last\n` +
        ` LastModificationTime − due; loopP99 = the server's worst 1-s event-loop delay p99 from the due time on;\n` +
        ` srv/agent/core0 = CPU % of one core from the due time until all Completed)\n\n` +
        `median of ${opts.reps} rep(s):\n` +
        line('bash', b) +
        line('system', s) +
        `  anchor: raw spawn of /bin/true, ${opts.anchorConcurrency} in flight: ${int(rate)}/s (per rep ` +
        `${anchors.map((a) => int(a.perSec)).join(', ')}) → lower bound for ${int(opts.jobs)} BASH starts ${int(bound)} ms\n` +
        `  loadavg at the end ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}\n`,
    );
    const summary =
      `SUMMARY B6 ${int(opts.jobs)} jobs due the same second, ${opts.reps} rep(s): BASH last start +${int(b.last)} ms ` +
      `(p50 +${int(b.p50)}, p99 +${int(b.p99)}; all Completed +${int(b.allCompletedMs)} ms) | raw spawn ${int(rate)}/s → ` +
      `bound ${int(bound)} ms | System last start +${int(s.last)} ms (all Completed +${int(s.allCompletedMs)} ms) ` +
      `(target last < ${TARGET_LAST_MS} ms): ${meets ? 'MEETS TARGET' : 'BELOW TARGET'}`;
    process.stdout.write(`\n${summary}\n`);
    writeResults(opts.json, { command, startedAt, loadStart }, opts, {
      phases,
      anchors,
      medians: { bash: b, system: s, anchorPerSec: rate, anchorBoundMs: bound },
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
