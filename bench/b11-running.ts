/**
 * Benchmark B11: many jobs Running at once. What they cost the server (RSS per running job), and whether
 * it still answers (GET p99) and keeps its event loop free (loop p99) while they run; then every job must end with
 * its real status. Each figure is compared with the same server idle, measured just before in the same run.
 *
 *   npm run bench:b11                                                     # 50,000 System jobs, then 2,000 BASH
 *   npm run bench:b11 -- --system-jobs 5000 --bash-jobs 200 --bash-sleep 30   # quick run
 *
 * Each phase starts `millrace serve` (SQLite) on a fresh data folder, the server and its agents on core 0, this
 * process (submits, GET probe, /proc and SQLite readers) on core 1.
 *
 * - Phase A, System: N × GLOBAL.System_Sleep (MilliSeconds --system-sleep), the process server GLOBAL.System.
 *   Its ExecutionSize (and the queue's) must allow N at once: the phase raises them through the REST API as a user
 *   would, and when the server refuses, says so and measures the number it allows.
 * - Phase B, BASH: M × a BASH definition `sleep S` on GLOBAL.Default, served by two agents: the local agent
 *   (GLOBAL.Local) and a second `millrace agent` process (GLOBAL.B11Agent, its own queue provider), each with
 *   ExecutionSize ⌈M/2⌉. While they run, each agent's `sleep` descendants are counted in /proc, and --kill of the
 *   jobs are killed: those must end Killed, the others Completed with return code 0.
 *
 * A phase: --warmup-jobs untimed no-op jobs; wait for a quiet machine (--max-load); the idle anchor: a GET probe of
 * JobDefinition/GLOBAL.System_Sleep at --probe-rate GETs/s for --idle-seconds, with the server's event-loop delay and
 * RSS read from MILLRACE_STATS_FILE over the same seconds; then submit the jobs (--concurrency in flight) while the
 * jobs table is polled until all are Running (none may have ended: then the sleep was too short); then the same GET
 * probe runs from that moment until the last job has ended, and the loop delay is read over that window (the worst
 * second's p99: the end wave is part of it). The server's RSS is read 1.5 s after a full garbage collection (the server
 * runs under --expose-gc; SIGUSR2 collects, src/runtime-stats.ts) before each probe, idle and all running: RSS per
 * running job = (RSS all running − RSS idle) ÷ jobs running. --profile runs one more System phase under
 * `node --cpu-prof` and summarises the server over its end wave.
 */
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FINAL } from '../src/domain/job-status.ts';
import {
  createBashDefinition,
  JobsReader,
  localAgentPid,
  loopDelay,
  pollUntil,
  type StatsLine,
  statsBetween,
  type Submitter,
  submitMany,
  submitter,
  waitForQuiet,
} from './agent-harness.ts';
import { finalizers, launch, memoryOf, monoUs, pinned, ROOT, type Serve, startServe, stop } from './harness.ts';
import { profileRun } from './lib/profile.ts';
import { benchmark } from './lib/benchmark.ts';
import { type Samples, startProbe } from './lib/get-probe.ts';
import { amount, count, shared, text, type Values } from './lib/options.ts';
import { type Dist, dist, fixed, int, say } from './lib/report.ts';

const TARGET_GET_P99_MS = 20;
const TARGET_LOOP_P99_MS = 50;
const SECOND_AGENT = 'GLOBAL.B11Agent';

const OPTIONS = {
  systemJobs: count(50_000, 'System_Sleep jobs to have Running at once (phase A; 0 skips it)', { min: 0 }),
  systemSleep: amount(120, 'seconds each System job sleeps: the first must still run when the last starts', {
    min: 1,
  }),
  bashJobs: count(2000, 'BASH `sleep` jobs Running at once over two agents (phase B; 0 skips it)', { min: 0 }),
  bashSleep: count(300, 'seconds each BASH job sleeps'),
  kill: count(10, 'BASH jobs killed while they run; they must end Killed', { min: 0 }),
  concurrency: count(50, 'HTTP submits in flight', { env: 'BENCH_CONCURRENCY' }),
  probeRate: count(50, 'GETs per second of the latency probe (open loop: one every 1/rate s, whatever the answers)'),
  idleSeconds: amount(10, 'seconds of the idle GET probe (the anchor)', { min: 1 }),
  warmupJobs: count(500, 'untimed jobs each fresh server runs first (System_Sleep 0 ms, or BASH `true`)', { min: 0 }),
  profileWindow: text(
    'end',
    "--profile's window: `end` (first Completed → last end) or `running` (all Running → first Completed)",
    {
      arg: 'W',
      pattern: /^(end|running)$/,
      expected: 'end or running',
    },
  ),
  maxLoad: shared.maxLoad,
  quietTimeout: shared.quietTimeout,
};
type Options = Values<typeof OPTIONS> & { pin: boolean };

interface Window {
  /** Answered 200 (n) and not (failed, by status: 503 is the server shedding load, src/config/config.ts). */
  getMs: Dist & { n: number; failed: number; failures: Record<string, number> };
  /** Event-loop delay over the window's seconds: the worst second's p99, the median second's p99, the max. */
  loop: ReturnType<typeof loopDelay>;
  /** Seconds from the window's start to the end of its worst second. */
  worstAtS: number;
  /** Per second: seconds since the window's start, loop p99 ms, RSS MiB (for --json). */
  seconds: Array<[number, number, number]>;
}

function window(getMs: Window['getMs'], lines: StatsLine[], from: number): Window {
  const worst = lines.reduce<StatsLine | undefined>(
    (w, l) => (w === undefined || l.eventLoopDelayP99Ms > w.eventLoopDelayP99Ms ? l : w),
    undefined,
  );
  return {
    getMs,
    loop: loopDelay(lines),
    worstAtS: worst ? (worst.time - from) / 1000 : Number.NaN,
    seconds: lines.map((l) => [
      Math.round((l.time - from) / 100) / 10,
      l.eventLoopDelayP99Ms,
      Math.round(l.rssBytes / 2 ** 20),
    ]),
  };
}

interface AgentFigures {
  processServer: string;
  pid: number;
  rssMiB: number;
  peakMiB: number;
  /** `sleep` processes below the agent while all jobs ran. */
  sleeps: number;
}

interface Phase {
  phase: 'System' | 'BASH';
  /** 1-minute loadavg when the idle anchor began (another benchmark on the machine shows here). */
  loadavg1: number;
  asked: number;
  /** Jobs submitted: `asked`, unless the server's limit allows fewer at once and refused to raise it. */
  jobs: number;
  /** What limits the phase, and what the server answered to raising it. */
  limits: string[];
  idleRssMiB: number;
  idle: Window;
  submitS: number;
  /** Submits the server shed with 503 (overloaded) and that were sent again 1 s later. */
  shedSubmits: number;
  /** First submit → the poll that saw all jobs Running. */
  allRunningS: number;
  runningRssMiB: number;
  peakRssMiB: number;
  rssPerJobKiB: number;
  /** Loop delay while the jobs were submitted (information; the target is on the running window). */
  submitLoop: ReturnType<typeof loopDelay>;
  running: Window;
  /** `running` cut in two: all running until the first one Completed, then the end wave. */
  steady: Window;
  endWave: Window;
  /** All running → the last job's end. */
  endS: number;
  agents: AgentFigures[];
  killed: number;
  outcomes: Record<string, number>;
  realStatus: boolean;
  /** CLOCK_MONOTONIC µs from the first Completed to the last end: the window of --profile. */
  wave: { startUs: number; endUs: number };
  /** The same for all Running → the first Completed. */
  steadyUs: { startUs: number; endUs: number };
}

/**
 * A submitter that sends a submit again when the server shed it (503 with Retry-After: its loop lagged over
 * MILLRACE_MAX_EVENT_LOOP_DELAY, 500 ms), as a client should; the sheds are counted and reported.
 */
function retrying(http: Submitter, shed: { count: number }): Submitter {
  return {
    async submit(definition, body) {
      for (let attempt = 1; ; attempt++) {
        const r = await http.submit(definition, body);
        if (r.status !== 503 || attempt >= 20) return r;
        shed.count++;
        await sleep(1000);
      }
    },
    close: () => http.close(),
  };
}

const getsBetween = (xs: Samples, from: number, to: number): Window['getMs'] => {
  const w = xs.filter((x) => x.at >= from && x.at < to);
  const ok = w.filter((x) => x.status === 200).map((x) => x.ms);
  const failures: Record<string, number> = {};
  for (const x of w) if (x.status !== 200) failures[x.status || 'error'] = (failures[x.status || 'error'] ?? 0) + 1;
  return { ...dist(ok), n: ok.length, failed: w.length - ok.length, failures };
};

/** Every process's parent and command name, from /proc. */
function processTable(): Map<number, { ppid: number; comm: string }> {
  const out = new Map<number, { ppid: number; comm: string }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(Number(name), { ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]), comm });
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** The root among `roots` that `pid` descends from, if any. */
function rootOf(table: ReturnType<typeof processTable>, pid: number, roots: Set<number>): number | undefined {
  for (let p = pid, hops = 0; hops < 20 && p > 1; hops++) {
    p = table.get(p)?.ppid ?? 0;
    if (roots.has(p)) return p;
  }
  return undefined;
}

/** The `sleep` processes below each pid (a job's bash may exec its sleep or fork it). */
function sleepsBelow(roots: number[]): Map<number, number> {
  const table = processTable();
  const out = new Map(roots.map((r) => [r, 0]));
  for (const [pid, { comm }] of table) {
    if (comm !== 'sleep') continue;
    const root = rootOf(table, pid, new Set(roots));
    if (root !== undefined) out.set(root, (out.get(root) ?? 0) + 1);
  }
  return out;
}

/**
 * SIGKILLs the agents and every process below them or working in `folder` (the agents' job folders: a job whose agent
 * was stopped first is an orphan). The local agent is the server's child in its own process group and outlives the
 * server while jobs run, and each job has a process group of its own: stopping the processes this harness started
 * would leave up to 4,000 bash and sleep processes behind after a failure or Ctrl-C.
 */
function killAgentTrees(agents: number[], folder: string): void {
  const table = processTable();
  const roots = new Set(agents);
  const inFolder = (pid: number) => {
    try {
      return readlinkSync(`/proc/${pid}/cwd`).startsWith(folder);
    } catch {
      return false;
    }
  };
  const doomed = [...table.keys()].filter(
    (p) => p !== process.pid && (rootOf(table, p, roots) !== undefined || inFolder(p)),
  );
  for (const pid of doomed.concat(agents))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone.
    }
}

async function api(serve: Serve, apiKey: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${serve.base}/${path}`, {
    method,
    headers: { 'X-API-Key': apiKey, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

async function must(serve: Serve, apiKey: string, method: string, path: string, body?: unknown) {
  const r = await api(serve, apiKey, method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.json();
}

/**
 * How many System jobs may run at once: the smaller ExecutionSize of the process server GLOBAL.System and of the
 * queue GLOBAL.System (empty: no limit). Below `wanted`, it is raised through the REST API as a user would; what the
 * server answers is recorded.
 */
async function systemLimit(serve: Serve, apiKey: string, wanted: number, limits: string[]): Promise<number> {
  let allowed = Number.POSITIVE_INFINITY;
  for (const type of ['ProcessServer', 'Queue']) {
    const path = `${type}/GLOBAL.System`;
    const size = (await must(serve, apiKey, 'GET', path)).ExecutionSize;
    if (typeof size !== 'number' || size >= wanted) continue;
    const r = await api(serve, apiKey, 'PUT', path, { ExecutionSize: wanted });
    const now = (await must(serve, apiKey, 'GET', path)).ExecutionSize;
    limits.push(
      `${type} GLOBAL.System has ExecutionSize ${int(size)}; PUT ${path} {"ExecutionSize": ${wanted}} answered ` +
        `${r.status}${r.status >= 300 ? ` ${r.text.slice(0, 160)}` : ''}; now ${now ?? 'no limit'}`,
    );
    if (typeof now === 'number') allowed = Math.min(allowed, now);
  }
  return allowed;
}

/** Starts a second agent for `SECOND_AGENT` (pinned with the server), serving GLOBAL.Default; returns its pid. */
async function secondAgent(opts: Options, serve: Serve, apiKey: string, work: string, size: number): Promise<number> {
  const secret = 'b11-second-agent-secret-0123456789';
  await must(serve, apiKey, 'POST', `ProcessServer/${SECOND_AGENT}`, {
    DefinitionTypes: ['BASH'],
    AgentSecret: secret,
    ExecutionSize: size,
  });
  await must(serve, apiKey, 'POST', `QueueProvider/${SECOND_AGENT}.GLOBAL.Default`, {});
  const secretFile = join(work, 'agent-secret');
  writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  const [cmd, args] = pinned(opts.pin, 0, process.execPath, [
    join(ROOT, 'bin/millrace'),
    'agent',
    '--server',
    `${serve.origin}/millrace`,
    '--process-server',
    SECOND_AGENT,
    '--secret-file',
    secretFile,
    '--data',
    join(work, 'agent-2'),
  ]);
  const proc = launch('agent-2', cmd, args);
  const deadline = performance.now() + 60_000;
  while ((await must(serve, apiKey, 'GET', `ProcessServer/${SECOND_AGENT}`)).Status !== 'Running') {
    if (proc.exitCode !== undefined) throw new Error(`the second agent exited\n${proc.tail.join('\n')}`);
    if (performance.now() > deadline) throw new Error(`${SECOND_AGENT} not Running after 60 s`);
    await sleep(100);
  }
  return proc.pid;
}

async function runPhase(
  opts: Options,
  kind: 'System' | 'BASH',
  work: string,
  apiKey: string,
  nodeFlags: string[] = [],
): Promise<Phase> {
  const name = `${kind}${nodeFlags.length ? '-profiled' : ''}`;
  const dataDir = join(work, name);
  const statsFile = join(work, `stats-${name}.ndjson`);
  const serve = await startServe({
    pin: opts.pin,
    dataDir,
    apiKey,
    statsFile,
    nodeFlags: ['--expose-gc', ...nodeFlags],
  });
  /** RSS right after a full garbage collection (src/runtime-stats.ts: SIGUSR2 under --expose-gc). */
  const collectedRss = async () => {
    process.kill(serve.proc.pid, 'SIGUSR2');
    await sleep(1500);
    return memoryOf(serve.proc.pid).rssMiB;
  };
  const reader = new JobsReader(dataDir);
  const shed = { count: 0 };
  const http = retrying(submitter(serve.base, apiKey, opts.concurrency), shed);
  try {
    const asked = kind === 'System' ? opts.systemJobs : opts.bashJobs;
    const limits: string[] = [];
    const agentPids: Array<[string, number]> = [['GLOBAL.Local', await localAgentPid(dataDir)]];
    finalizers.set(`b11-${name}`, () =>
      killAgentTrees(
        agentPids.map(([, pid]) => pid),
        work,
      ),
    );
    let jobs = asked;
    let definition = 'GLOBAL.System_Sleep';
    let body = Buffer.from(
      JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: opts.systemSleep * 1000 }] }),
    );
    if (kind === 'System') {
      jobs = Math.min(asked, await systemLimit(serve, apiKey, asked, limits));
      if (jobs < asked) limits.push(`so ${int(jobs)} System jobs are submitted, not ${int(asked)}`);
    } else {
      const perAgent = Math.ceil(asked / 2);
      await must(serve, apiKey, 'PUT', 'ProcessServer/GLOBAL.Local', { ExecutionSize: perAgent });
      agentPids.push([SECOND_AGENT, await secondAgent(opts, serve, apiKey, work, perAgent)]);
      limits.push(`GLOBAL.Local and ${SECOND_AGENT} with ExecutionSize ${int(perAgent)} each, both on GLOBAL.Default`);
      await createBashDefinition(serve.base, apiKey, 'B11Sleep', `sleep ${opts.bashSleep}`);
      definition = 'GLOBAL.B11Sleep';
      body = Buffer.from('{}');
    }
    const probeUrl = `${serve.base}/JobDefinition/GLOBAL.System_Sleep`;

    // Warm-up (code paths and heap as they are once jobs have run), then the idle anchor on a quiet machine.
    if (opts.warmupJobs > 0) {
      const zero = kind === 'System' ? 'GLOBAL.System_Sleep' : 'GLOBAL.True';
      if (kind === 'BASH') await createBashDefinition(serve.base, apiKey, 'True', 'true');
      const noop = Buffer.from(JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }));
      await submitMany(http, zero, kind === 'System' ? noop : Buffer.from('{}'), opts.warmupJobs, opts.concurrency);
      await pollUntil(
        () => reader.completed() >= opts.warmupJobs,
        100,
        300,
        () => `warm-up: ${JSON.stringify(reader.statuses())}`,
      );
    }
    const quiet = await waitForQuiet(kind, opts.maxLoad, opts.quietTimeout);
    const idleRssMiB = await collectedRss();
    const idleFrom = Date.now();
    const idleGet = await (async () => {
      const p = startProbe(probeUrl, apiKey, opts.probeRate);
      await sleep(opts.idleSeconds * 1000);
      return getsBetween(await p.stop(), 0, Number.POSITIVE_INFINITY);
    })();
    const idleTo = Date.now();
    await sleep(1100); // the statistics line of the probe's last second
    const idleStats = statsBetween(statsFile, idleFrom, idleTo);
    const idle = window(idleGet, idleStats, idleFrom);

    // Submit while polling for all Running.
    const before = reader.maxJobId();
    const abort: { failed?: unknown } = {};
    const t0 = performance.now();
    const submitFrom = Date.now();
    let submitted = 0;
    const [sent] = await Promise.all([
      submitMany(http, definition, body, jobs, opts.concurrency, { abort }).then((s) => {
        submitted = performance.now();
        return s;
      }),
      (async () => {
        const deadline = performance.now() + (60 + jobs / 50) * 1000;
        for (;;) {
          if (abort.failed) return;
          const s = reader.statuses(before);
          if ((s.Running ?? 0) >= jobs) return;
          const ended = FINAL.reduce((n, f) => n + (s[f] ?? 0), 0);
          if (ended > 0) throw new Error(`jobs ended before all ran (sleep too short?): ${JSON.stringify(s)}`);
          if (performance.now() > deadline) throw new Error(`not all Running: ${JSON.stringify(s)}`);
          await sleep(250);
        }
      })(),
    ]);
    const tRunning = performance.now();
    const submitS = (sent.lastAt - t0) / 1000;
    const shedSubmits = shed.count;
    const submitLoop = loopDelay(statsBetween(statsFile, submitFrom, submitFrom + (submitted - t0)));

    // All running: RSS after a collection (before the probe, which it would disturb), processes, the GET probe until
    // the last has ended.
    const runningRssMiB = await collectedRss();
    const runFrom = Date.now();
    const steadyUs = { startUs: monoUs(), endUs: Number.NaN };
    const probe = startProbe(probeUrl, apiKey, opts.probeRate);
    await sleep(2000);
    const agents: AgentFigures[] = [];
    let killed = 0;
    if (kind === 'BASH') {
      const sleeps = sleepsBelow(agentPids.map(([, pid]) => pid));
      for (const [processServer, pid] of agentPids)
        agents.push({ processServer, pid, ...memoryOf(pid), sleeps: sleeps.get(pid) ?? 0 });
      const ids = (reader.rows(before) as Array<{ job_id: number }>).map((r) => r.job_id);
      for (const id of ids.slice(0, opts.kill)) await must(serve, apiKey, 'PUT', `Job/${id}/kill`);
      killed = Math.min(opts.kill, ids.length);
    }
    const finalTimeout = ((kind === 'System' ? opts.systemSleep : opts.bashSleep) + 120 + jobs / 20) * 1000;
    const deadline = performance.now() + finalTimeout;
    let firstCompleted = Number.NaN;
    const wave = { startUs: Number.NaN, endUs: Number.NaN };
    for (;;) {
      const s = reader.statuses(before);
      if ((s.Completed ?? 0) > 0 && Number.isNaN(firstCompleted)) {
        firstCompleted = Date.now();
        wave.startUs = monoUs();
        steadyUs.endUs = wave.startUs;
      }
      if (FINAL.reduce((n, f) => n + (s[f] ?? 0), 0) >= jobs) break;
      if (performance.now() > deadline) {
        await probe.stop();
        throw new Error(`not all ended after ${finalTimeout / 1000} s: ${JSON.stringify(s)}`);
      }
      await sleep(500);
    }
    const tEnd = performance.now();
    wave.endUs = monoUs();
    const runTo = Date.now();
    const runGet = await probe.stop();
    await sleep(1100);
    // Whole seconds only: the statistics line of the second in which all became Running covers the submits' end.
    const running = window(getsBetween(runGet, runFrom, runTo), statsBetween(statsFile, runFrom + 999, runTo), runFrom);
    // The same window in two: all running (until the first Completed), then the end wave.
    const steadyWindow = window(
      getsBetween(runGet, runFrom, firstCompleted),
      statsBetween(statsFile, runFrom + 999, firstCompleted - 1000),
      runFrom,
    );
    const endWave = window(
      getsBetween(runGet, firstCompleted, runTo),
      statsBetween(statsFile, firstCompleted, runTo),
      firstCompleted,
    );
    const outcomes = reader.outcomes(before);
    const realStatus =
      outcomes[`Completed 0`] === jobs - killed &&
      Object.entries(outcomes).every(([k, n]) => k === 'Completed 0' || (k.startsWith('Killed ') && n <= killed)) &&
      Object.entries(outcomes)
        .filter(([k]) => k.startsWith('Killed '))
        .reduce((a, [, n]) => a + n, 0) === killed;
    const peak = memoryOf(serve.proc.pid).peakMiB;
    return {
      phase: kind,
      loadavg1: quiet.loadavg1,
      asked,
      jobs,
      limits,
      idleRssMiB,
      idle,
      submitS,
      shedSubmits,
      allRunningS: (tRunning - t0) / 1000,
      runningRssMiB,
      peakRssMiB: peak,
      rssPerJobKiB: ((runningRssMiB - idleRssMiB) * 1024) / jobs,
      submitLoop,
      running,
      steady: steadyWindow,
      endWave,
      endS: (tEnd - tRunning) / 1000,
      agents,
      killed,
      outcomes,
      realStatus,
      wave,
      steadyUs,
    };
  } finally {
    http.close();
    reader.close();
    await stop(serve.proc, nodeFlags.length ? 60_000 : 10_000);
    finalizers.get(`b11-${name}`)?.();
    finalizers.delete(`b11-${name}`);
  }
}

const ms = (x: number) => fixed(x, 1);

function report(p: Phase): string[] {
  const w = (name: string, x: Window, rss: number) =>
    `  ${name.padEnd(30)} RSS ${fixed(rss, 0).padStart(5)} MiB  GET p50 ${ms(x.getMs.p50).padStart(5)} p99 ` +
    `${ms(x.getMs.p99).padStart(6)} max ${ms(x.getMs.max).padStart(6)} ms (${int(x.getMs.n)} GETs, ${x.getMs.failed} failed${x.getMs.failed ? `: ${JSON.stringify(x.getMs.failures)}` : ''})  ` +
    `loop p99 worst second ${ms(x.loop.worstP99).padStart(6)} (at +${fixed(x.worstAtS, 0)} s), median second ` +
    `${ms(x.loop.medianP99)}, max ${ms(x.loop.max)} ms`;
  return [
    `Phase ${p.phase}: ${int(p.jobs)} jobs${p.jobs < p.asked ? ` (asked ${int(p.asked)})` : ''}, loadavg1 ${fixed(p.loadavg1, 2)} at the anchor`,
    ...p.limits.map((l) => `  limit: ${l}`),
    w('idle (anchor)', p.idle, p.idleRssMiB),
    w(`${int(p.jobs)} running → last end`, p.running, p.runningRssMiB),
    w('  of which all running', p.steady, Number.NaN),
    w('  of which the end wave', p.endWave, Number.NaN),
    `  ratios running ÷ idle: GET p99 ${fixed(p.running.getMs.p99 / p.idle.getMs.p99, 2)}×, loop worst-second p99 ` +
      `${fixed(p.running.loop.worstP99 / p.idle.loop.worstP99, 2)}×; RSS +${fixed(p.runningRssMiB - p.idleRssMiB, 0)} MiB = ` +
      `${fixed(p.rssPerJobKiB, 2)} KiB per running job; peak RSS ${fixed(p.peakRssMiB, 0)} MiB`,
    `  submitted in ${fixed(p.submitS, 1)} s (${int(p.jobs / p.submitS)}/s, ${int(p.shedSubmits)} shed with 503 and ` +
      `sent again; loop p99 worst second meanwhile ` +
      `${ms(p.submitLoop.worstP99)} ms), all Running ${fixed(p.allRunningS, 1)} s after the first submit, the last ` +
      `ended ${fixed(p.endS, 1)} s after that`,
    ...p.agents.map(
      (a) =>
        `  agent ${a.processServer} (pid ${a.pid}): ${int(a.sleeps)} sleep processes, RSS ${fixed(a.rssMiB, 0)} MiB ` +
        `(peak ${fixed(a.peakMiB, 0)} MiB)`,
    ),
    `  final: ${Object.entries(p.outcomes)
      .map(([k, n]) => `${int(n)} ${k}`)
      .join(', ')}${p.killed ? ` (${p.killed} killed on purpose)` : ''}: ${p.realStatus ? 'real status' : 'WRONG'}`,
    '',
  ];
}

benchmark({
  script: 'bench:b11',
  title: 'B11 jobs running at once',
  about:
    'B11: 50,000 System jobs and 2,000 BASH `sleep` jobs over two agents Running at once: server RSS per running ' +
    'job, GET p99 and event-loop p99 while they run against the idle server, and every job ending with its real status.',
  options: OPTIONS,
  pin: 'self',
  profile: 'profile the server through one more System phase (its end wave: first Completed → the last end)',
  target: `GET p99 >= ${TARGET_GET_P99_MS} ms or loop p99 >= ${TARGET_LOOP_P99_MS} ms while they run, not all asked run at once, or a wrong final status`,
  async run({ opts, work, apiKey }) {
    say(
      `millrace serve (SQLite), fresh per phase${opts.pin ? '; server and agents on core 0, this process on core 1' : '; UNPINNED'}; ` +
        `GET probe ${opts.probeRate}/s of JobDefinition/GLOBAL.System_Sleep`,
      '',
    );
    const phases: Phase[] = [];
    if (opts.systemJobs > 0) phases.push(await runPhase(opts, 'System', work, apiKey));
    if (phases[0]) say(...report(phases[0]));
    if (opts.bashJobs > 0) {
      const b = await runPhase(opts, 'BASH', work, apiKey);
      phases.push(b);
      say(...report(b));
    }
    const profile = opts.profile
      ? await profileRun(
          opts.profileDir,
          async (flags) => {
            const p = await runPhase(opts, 'System', work, apiKey, flags);
            return opts.profileWindow === 'end' ? p.wave : p.steadyUs;
          },
          () => ({
            heading: `server profile, ${opts.profileWindow === 'end' ? 'end wave' : 'all running'} of ${int(opts.systemJobs)} System jobs`,
            items: opts.systemJobs,
          }),
        )
      : undefined;
    if (profile) say(profile, '');
    const sleepsOk = (p: Phase) => p.phase !== 'BASH' || p.agents.reduce((a, x) => a + x.sleeps, 0) >= p.jobs;
    const meetsPhase = (p: Phase) =>
      p.jobs === p.asked &&
      p.realStatus &&
      sleepsOk(p) &&
      p.running.getMs.failed === 0 &&
      p.running.getMs.p99 < TARGET_GET_P99_MS &&
      p.running.loop.worstP99 < TARGET_LOOP_P99_MS;
    const text = (p: Phase) =>
      `${p.phase} ${int(p.jobs)}${p.jobs < p.asked ? ` of ${int(p.asked)} asked` : ''} running: ` +
      `${fixed(p.rssPerJobKiB, 1)} KiB/job, GET p99 ${ms(p.running.getMs.p99)} ms (idle ${ms(p.idle.getMs.p99)}), ` +
      `loop p99 ${ms(p.running.loop.worstP99)} ms (idle ${ms(p.idle.loop.worstP99)}; while submitted ` +
      `${ms(p.submitLoop.worstP99)}), ` +
      `${p.realStatus ? 'real status' : 'WRONG status'}`;
    const wrong = phases.filter((p) => !p.realStatus || !sleepsOk(p)).map((p) => p.phase);
    return {
      summary: `B11 ${phases.map(text).join(' | ')} (targets GET p99 < ${TARGET_GET_P99_MS} ms, loop p99 < ${TARGET_LOOP_P99_MS} ms)`,
      meets: phases.length > 0 && phases.every(meetsPhase),
      ...(wrong.length
        ? { failure: `phase(s) ${wrong.join(', ')}: a job without its real status or without its process` }
        : {}),
      results: { phases },
    };
  },
});
