/**
 * Benchmark: GET of a JobDefinition by key with an API key, against a bare node:http server answering a JSON
 * body of the same size, both measured in the same run (the method of perf-reliability.md §6).
 *
 *   npm run bench:get                                   # defaults: 3 reps × 10 s, 3 s warm-up, 50 connections
 *   npm run bench:get -- --duration 3 --reps 1          # quick run
 *   npm run bench:get -- --profile                      # then also profile our server under the same load
 *
 * Both servers run on core 0 (`taskset -c 0`), autocannon on core 1 (`taskset -c 1`); measurements are
 * interleaved ours, anchor, ours, anchor… (with --with-fastify also a plain fastify server); medians and the
 * ratio ours ÷ anchor are reported. Before each repetition the harness records the load average and samples
 * 1 s of background CPU use (with both servers idle); a repetition that starts with more than
 * --max-background % busy is marked noisy and left out of the medians (unless every repetition is noisy).
 * Exit status: 0 done, 1 failure (including any non-2xx answer of our server), 2 targets missed with --check.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DEFAULTS, interfacePaths } from '../src/config/config.ts';
import { type CpuProfile, formatProfileSummary, summarizeCpuProfile } from './cpuprofile-summary.ts';
import {
  coreTimes,
  coreUse,
  entryArgs,
  fixed,
  int,
  launch,
  median,
  memoryOf,
  numberOption,
  type Proc,
  pct,
  pinned,
  processCpuSeconds,
  ROOT,
  row,
  runBenchmark,
  type ServeEntry,
  scratch,
  stop,
  stopAll,
  waitForLine,
  writeResults,
} from './harness.ts';

const TARGET_RATIO = 0.6;
const TARGET_P99_MS = 20;
const OBJECT_KEY = 'GLOBAL.BenchLoad';

// ---------------------------------------------------------------------------------------------------------------
// Options

interface Options {
  duration: number;
  reps: number;
  warmup: number;
  connections: number;
  maxBackground: number;
  pin: boolean;
  withFastify: boolean;
  /** Also measure ours from the sources through tsx (the loader build), beside the compiled one. */
  withLoader: boolean;
  profile: boolean;
  profileDir?: string;
  json?: string;
  check: boolean;
}

const USAGE = `usage: npm run bench:get -- [options]
  --duration S         seconds per measurement (env BENCH_DURATION, default 10)
  --reps N             repetitions of each server, interleaved (env BENCH_REPS, default 3)
  --warmup S           warm-up seconds per server before measuring (env BENCH_WARMUP, default 3)
  --connections N      autocannon connections (env BENCH_CONNECTIONS, default 50)
  --max-background P   a repetition is noisy when other processes use more than P % of the machine just before
                       it (env BENCH_MAX_BACKGROUND, default 25)
  --with-fastify       also measure plain fastify answering the same body (a third, interleaved target)
  --with-loader        also measure ours run from the sources through tsx; ours is then dist/ named explicitly
  --no-pin             do not use taskset (results are then not comparable with pinned ones)
  --profile            afterwards, run our server once more under node --cpu-prof and summarise the profile
  --profile-dir DIR    where the .cpuprofile goes (default: a new folder in the temp dir, kept)
  --json FILE          also write every measurement as JSON
  --check              exit with status 2 when a target is missed (ratio >= ${TARGET_RATIO * 100} %, p99 < ${TARGET_P99_MS} ms)`;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      reps: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'max-background': { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      'with-fastify': { type: 'boolean', default: false },
      'with-loader': { type: 'boolean', default: false },
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
    duration: num(values.duration, 'BENCH_DURATION', 10, 1),
    reps: Math.floor(num(values.reps, 'BENCH_REPS', 3, 1)),
    warmup: num(values.warmup, 'BENCH_WARMUP', 3, 0),
    connections: Math.floor(num(values.connections, 'BENCH_CONNECTIONS', 50, 1)),
    maxBackground: num(values['max-background'], 'BENCH_MAX_BACKGROUND', 25, 0),
    pin: !values['no-pin'],
    withFastify: values['with-fastify'],
    withLoader: values['with-loader'],
    profile: values.profile || values['profile-dir'] !== undefined,
    ...(values['profile-dir'] !== undefined ? { profileDir: resolve(values['profile-dir']) } : {}),
    ...(values.json !== undefined ? { json: resolve(values.json) } : {}),
    check: values.check,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Load generation: autocannon's CLI in its own process, pinned to core 1.

const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  latency: { p50: number; p90: number; p99: number; max: number; average: number };
  requests: { average: number; total: number };
  throughput: { average: number };
}

/** ours: Millrace; anchor: bare node:http; fastify: plain fastify (optional). */
type Target = 'ours' | 'anchor' | 'fastify' | 'loader';

interface Measurement {
  target: Target;
  rep: number;
  reqPerSec: number;
  p50: number;
  p99: number;
  max: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** CPU of the server process during the load, % of one core. */
  serverCpu: number;
  /** CPU time of the server process per answered request, µs. */
  cpuUsPerReq: number;
  core0Busy: number;
  core1Busy: number;
  steal: number;
  /** CLOCK_MONOTONIC µs around the load (for cutting the profile). */
  startUs: number;
  endUs: number;
}

async function autocannon(
  opts: Options,
  url: string,
  headers: Record<string, string>,
  seconds: number,
): Promise<{ result: AutocannonResult; startUs: number; endUs: number }> {
  const args = [AUTOCANNON, '-c', String(opts.connections), '-p', '1', '-d', String(seconds), '-n', '--json'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  args.push(url);
  const [cmd, full] = pinned(opts.pin, 1, process.execPath, args);
  const startUs = Number(process.hrtime.bigint() / 1000n);
  const proc = launch('autocannon', cmd, full, { keepStdout: true });
  const code = await proc.exited;
  const endUs = Number(process.hrtime.bigint() / 1000n);
  const json = proc.stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !json.startsWith('{'))
    throw new Error(`autocannon failed (exit ${code}):\n${proc.tail.join('\n')}`);
  return { result: JSON.parse(json) as AutocannonResult, startUs, endUs };
}

async function measure(
  opts: Options,
  target: Target,
  rep: number,
  server: Proc,
  url: string,
  headers: Record<string, string>,
): Promise<Measurement> {
  const cores0 = coreTimes();
  const cpu0 = processCpuSeconds(server.pid);
  const { result: r, startUs, endUs } = await autocannon(opts, url, headers, opts.duration);
  const cpu1 = processCpuSeconds(server.pid);
  const cores1 = coreTimes();
  const statusCodes: Record<string, number> = {};
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = s.count;
  return {
    target,
    rep,
    reqPerSec: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    // The server idles while autocannon starts, so its CPU time over the run is its CPU time under load.
    serverCpu: (100 * (cpu1 - cpu0)) / r.duration,
    cpuUsPerReq: (1e6 * (cpu1 - cpu0)) / Math.max(r.requests.total, 1),
    core0Busy: coreUse(cores0, cores1, 'cpu0').busy,
    core1Busy: coreUse(cores0, cores1, 'cpu1').busy,
    steal: coreUse(cores0, cores1, 'cpu').steal,
    startUs,
    endUs,
  };
}

function assertClean(m: Measurement, what: string): void {
  const bad = m.non2xx > 0 || m.errors > 0 || m.timeouts > 0 || m.requests === 0;
  if (bad)
    throw new Error(
      `${what}: ${m.requests} requests, ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts; ` +
        `status codes ${JSON.stringify(m.statusCodes)}. Every answer must be 2xx.`,
    );
}

// ---------------------------------------------------------------------------------------------------------------
// The servers.

interface Ours {
  proc: Proc;
  origin: string;
}

async function startOurs(
  opts: Options,
  dataDir: string,
  apiKey: string,
  nodeFlags: string[] = [],
  entry: ServeEntry = opts.withLoader ? 'compiled' : 'bin',
): Promise<Ours> {
  const [cmd, args] = pinned(opts.pin, 0, process.execPath, [
    ...nodeFlags,
    ...entryArgs(entry),
    'serve',
    '--data',
    dataDir,
    '--port',
    '0',
  ]);
  const env: NodeJS.ProcessEnv = { ...process.env, MILLRACE_ADMIN_API_KEY: apiKey };
  for (const k of ['MILLRACE_DATABASE_URL', 'MILLRACE_CONTEXT', 'MILLRACE_VENDOR', 'MILLRACE_PORT', 'MILLRACE_DATA'])
    delete env[k];
  const proc = launch('millrace', cmd, args, { env });
  const url = await waitForLine(
    proc,
    (line) => {
      if (!line.startsWith('{')) return undefined;
      try {
        const msg = (JSON.parse(line) as { msg?: unknown }).msg;
        const m = typeof msg === 'string' ? /^Millrace serving (http:\/\/\S+)$/.exec(msg) : null;
        return m?.[1];
      } catch {
        return undefined;
      }
    },
    60_000,
  );
  return { proc, origin: new URL(url).origin };
}

async function startAnchor(
  opts: Options,
  script: 'anchor-http.mjs' | 'anchor-fastify.mjs',
  bodyFile: string,
  contentType: string,
): Promise<{ proc: Proc; url: string }> {
  const [cmd, args] = pinned(opts.pin, 0, process.execPath, [join(ROOT, 'bench', script), bodyFile, contentType]);
  const proc = launch(script, cmd, args);
  const port = await waitForLine(
    proc,
    (line) => {
      try {
        const p = (JSON.parse(line) as { port?: unknown }).port;
        return typeof p === 'number' && p > 0 ? p : undefined;
      } catch {
        return undefined;
      }
    },
    15_000,
  );
  return { proc, url: `http://127.0.0.1:${port}/` };
}

/** A realistic definition: a BASH script of a few lines, three parameters, priority, description. */
const DEFINITION = {
  JobDefinitionType: 'BASH',
  Description: 'Nightly extract of the ledger into the reporting warehouse (benchmark object)',
  Script: [
    'set -euo pipefail',
    'echo "extracting $LEDGER from $FROM_DATE in batches of $BATCH_SIZE"',
    'rows=$(psql -Atc "select count(*) from $LEDGER where booked >= \'$FROM_DATE\'")',
    'echo "rows: $rows"',
    'exit 0',
  ].join('\n'),
  Parameters: [
    { Name: 'LEDGER', Direction: 'In', DataType: 'String', DefaultValue: 'gl_main' },
    { Name: 'FROM_DATE', Direction: 'In', DataType: 'Date', DefaultValue: '2026/11/01 00:00:00,000 UTC' },
    { Name: 'BATCH_SIZE', Direction: 'In', DataType: 'Number', DefaultValue: '5000' },
  ],
  Priority: 60,
};

async function createObject(base: string, apiKey: string): Promise<{ body: Buffer; contentType: string }> {
  const url = `${base}/JobDefinition/${OBJECT_KEY}`;
  const created = await fetch(url, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify(DEFINITION),
  });
  if (created.status !== 201) throw new Error(`POST ${url}: ${created.status} ${await created.text()}`);
  await created.arrayBuffer();
  const got = await fetch(url, { headers: { 'X-API-Key': apiKey } });
  const body = Buffer.from(await got.arrayBuffer());
  if (got.status !== 200) throw new Error(`GET ${url}: ${got.status} ${body.toString()}`);
  const contentType = got.headers.get('content-type') ?? '';
  if (!contentType.startsWith('application/json')) throw new Error(`GET ${url}: content-type ${contentType}`);
  const parsed = JSON.parse(body.toString('utf8')) as { businessKey?: unknown };
  if (parsed.businessKey !== `JobDefinition:${OBJECT_KEY}`) throw new Error(`GET ${url}: unexpected body ${body}`);
  return { body, contentType };
}

// ---------------------------------------------------------------------------------------------------------------
// Report.

interface RepInfo {
  rep: number;
  loadavg1: number;
  background: number;
  noisy: boolean;
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const command = `npm run bench:get${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  if (opts.pin) {
    const hasTaskset = (() => {
      try {
        execFileSync('taskset', ['-V'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    })();
    if (!hasTaskset || availableParallelism() < 2) {
      process.stderr.write('warning: taskset missing or fewer than 2 CPUs; running unpinned\n');
      opts.pin = false;
    }
  }

  const work = mkdtempSync(join(tmpdir(), 'millrace-bench-'));
  scratch.add(work);
  const dataDir = join(work, 'data');
  const apiKey = `bench_${randomBytes(16).toString('hex')}`;
  const loadStart = loadavg();
  const startedAt = new Date();
  try {
    process.stdout.write(
      `Millrace GET-by-key benchmark, ${startedAt.toISOString()}, node ${process.version}, ` +
        `${availableParallelism()} CPUs, loadavg ${loadStart.map((x) => x.toFixed(2)).join(' ')}\n` +
        `command: ${command}\n`,
    );
    const ours = await startOurs(opts, dataDir, apiKey);
    const base = `${ours.origin}${interfacePaths(DEFAULTS).jsonBase}`;
    const { body, contentType } = await createObject(base, apiKey);
    const bodyFile = join(work, 'body.json');
    writeFileSync(bodyFile, body);
    const anchor = await startAnchor(opts, 'anchor-http.mjs', bodyFile, contentType);
    const fastify = opts.withFastify ? await startAnchor(opts, 'anchor-fastify.mjs', bodyFile, contentType) : undefined;
    for (const a of [anchor, fastify]) {
      if (!a) continue;
      const res = await fetch(a.url);
      const check = Buffer.from(await res.arrayBuffer());
      if (!check.equals(body) || res.headers.get('content-type') !== contentType)
        throw new Error(`${a.proc.name} does not answer the same body and content type`);
    }

    const oursUrl = `${base}/JobDefinition/${OBJECT_KEY}`;
    const oursHeaders = { 'X-API-Key': apiKey };
    // The loader build on a data folder of its own, holding the same object.
    const loader = opts.withLoader ? await startOurs(opts, join(work, 'loader'), apiKey, [], 'loader') : undefined;
    const loaderUrl = loader ? `${loader.origin}${interfacePaths(DEFAULTS).jsonBase}/JobDefinition/${OBJECT_KEY}` : '';
    if (loader) await createObject(`${loader.origin}${interfacePaths(DEFAULTS).jsonBase}`, apiKey);
    const targets: Array<{ target: Target; proc: Proc; url: string; headers: Record<string, string> }> = [
      { target: 'ours', proc: ours.proc, url: oursUrl, headers: oursHeaders },
      { target: 'anchor', proc: anchor.proc, url: anchor.url, headers: {} },
      ...(fastify ? [{ target: 'fastify' as const, proc: fastify.proc, url: fastify.url, headers: {} }] : []),
      ...(loader ? [{ target: 'loader' as const, proc: loader.proc, url: loaderUrl, headers: oursHeaders }] : []),
    ];
    process.stdout.write(
      `ours:    GET ${new URL(oursUrl).pathname} (${body.length}-byte JSON body), X-API-Key, SQLite\n` +
        `anchor:  bare node:http answering the same ${body.length} bytes (${contentType})\n` +
        (fastify ? `fastify: plain fastify answering the same ${body.length} bytes\n` : '') +
        `load:    autocannon ${opts.connections} connections, no pipelining, ${opts.duration} s × ${opts.reps} reps ` +
        `interleaved, ${opts.warmup} s warm-up each; ` +
        (opts.pin ? 'servers on core 0, autocannon on core 1\n\n' : 'UNPINNED\n\n'),
    );

    if (opts.warmup > 0)
      for (const t of targets) {
        const w = await autocannon(opts, t.url, t.headers, opts.warmup);
        if (w.result.non2xx > 0 || w.result.errors > 0 || w.result.requests.total === 0)
          throw new Error(`warm-up of ${t.target}: ${w.result.non2xx} non-2xx, ${w.result.errors} errors`);
      }

    const all: Measurement[] = [];
    const reps: RepInfo[] = [];
    const widths = [16, 6, 5, 9, 5, 5, 6, 8, 6, 6, 7];
    process.stdout.write(
      `${row(['rep target', 'load1', 'bg%', 'req/s', 'p50', 'p99', 'max', 'srv CPU', 'core1', 'steal', 'non2xx'], widths)}\n`,
    );
    for (let rep = 1; rep <= opts.reps; rep++) {
      const b0 = coreTimes();
      await sleep(1000);
      const background = coreUse(b0, coreTimes(), 'cpu').busy;
      const info: RepInfo = {
        rep,
        loadavg1: loadavg()[0] ?? Number.NaN,
        background,
        noisy: background > opts.maxBackground,
      };
      reps.push(info);
      for (const t of targets) {
        const m = await measure(opts, t.target, rep, t.proc, t.url, t.headers);
        all.push(m);
        process.stdout.write(
          `${row(
            [
              `${rep} ${t.target}${info.noisy ? ' *' : ''}`,
              fixed(info.loadavg1, 2),
              fixed(info.background, 0),
              int(m.reqPerSec),
              String(m.p50),
              String(m.p99),
              String(m.max),
              `${fixed(m.serverCpu, 0)}%`,
              `${fixed(m.core1Busy, 0)}%`,
              `${fixed(m.steal, 1)}%`,
              String(m.non2xx),
            ],
            widths,
          )}\n`,
        );
        if (t.target === 'ours' || t.target === 'loader') assertClean(m, `our server, repetition ${rep}`);
        else if (m.errors > 0 || m.requests === 0) assertClean(m, `${t.target}, repetition ${rep}`);
      }
    }

    const memory = memoryOf(ours.proc.pid);
    const clean = reps.filter((r) => !r.noisy).map((r) => r.rep);
    const usedReps = clean.length > 0 ? clean : reps.map((r) => r.rep);
    const stats = (t: Target) => {
      const ms = all.filter((m) => m.target === t && usedReps.includes(m.rep));
      return {
        reqPerSec: median(ms.map((m) => m.reqPerSec)),
        p50: median(ms.map((m) => m.p50)),
        p99: median(ms.map((m) => m.p99)),
        serverCpu: median(ms.map((m) => m.serverCpu)),
        /** Server CPU per request, µs (from the process's CPU time, not the profiler). */
        cpuUsPerReq: median(ms.map((m) => m.cpuUsPerReq)),
      };
    };
    const o = stats('ours');
    const a = stats('anchor');
    const f = fastify ? stats('fastify') : undefined;
    const ratio = o.reqPerSec / a.reqPerSec;
    const perRep = (x: Target, y: Target) =>
      usedReps.map((rep) => {
        const mx = all.find((m) => m.rep === rep && m.target === x);
        const my = all.find((m) => m.rep === rep && m.target === y);
        return mx && my ? mx.reqPerSec / my.reqPerSec : Number.NaN;
      });
    const meets = ratio >= TARGET_RATIO && o.p99 < TARGET_P99_MS;

    const w2 = [28, 9, 7, 7, 8, 12];
    const line = (name: string, x: ReturnType<typeof stats>) =>
      `${row([name, int(x.reqPerSec), fixed(x.p50, 0), fixed(x.p99, 0), `${fixed(x.serverCpu, 0)}%`, fixed(x.cpuUsPerReq, 0)], w2)}\n`;
    const noisyNote = reps.some((r) => r.noisy)
      ? `* noisy: more than ${opts.maxBackground} % background CPU just before the repetition; ${clean.length ? 'left out of the medians' : 'every repetition was noisy, so all are used'}\n`
      : '';
    process.stdout.write(
      `\n${noisyNote}` +
        `(latencies in ms at autocannon's whole-ms resolution; srv CPU = server process, % of one core;\n` +
        ` core1 = the load generator's core; steal = CPU stolen by the hypervisor, whole machine)\n\n` +
        `${row([`median of ${usedReps.length} rep(s)`, 'req/s', 'p50 ms', 'p99 ms', 'srv CPU', 'CPU µs/req'], w2)}\n` +
        line('ours (Millrace)', o) +
        line('anchor (bare node:http)', a) +
        (f ? line('fastify (plain, same body)', f) : '') +
        (loader
          ? line('ours, sources through tsx', stats('loader')) +
            `${row(['ratio loader / anchor', pct((100 * stats('loader').reqPerSec) / a.reqPerSec), '', '', '', ''], w2)}\n` +
            `${row(['ratio compiled / loader', pct((100 * o.reqPerSec) / stats('loader').reqPerSec), '', '', '', ''], w2)}\n`
          : '') +
        `${row(['ratio ours / anchor', pct(100 * ratio), '', '', '', ''], w2)}\n` +
        (f
          ? `${row(['ratio ours / fastify', pct((100 * o.reqPerSec) / f.reqPerSec), '', '', '', ''], w2)}\n` +
            `${row(['ratio fastify / anchor', pct((100 * f.reqPerSec) / a.reqPerSec), '', '', '', ''], w2)}\n`
          : '') +
        `per-repetition ratios ours / anchor: ${perRep('ours', 'anchor')
          .map((r) => pct(100 * r))
          .join(', ')}\n` +
        `our server's RSS after the run: ${fixed(memory.rssMiB)} MiB (peak ${fixed(memory.peakMiB)} MiB); ` +
        `loadavg at the end ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}\n`,
    );

    let profileReport: string | undefined;
    if (opts.profile) profileReport = await profileOurs(opts, ours, dataDir, apiKey, oursUrl, oursHeaders);

    const summary =
      `SUMMARY GET JobDefinition by key (${body.length} B, c=${opts.connections}, ${usedReps.length}×${opts.duration} s): ` +
      `ours ${int(o.reqPerSec)} req/s p99 ${fixed(o.p99, 0)} ms | bare node:http ${int(a.reqPerSec)} req/s ` +
      `p99 ${fixed(a.p99, 0)} ms | ratio ${pct(100 * ratio)} (target >= ${TARGET_RATIO * 100} %, p99 < ${TARGET_P99_MS} ms): ` +
      `${meets ? 'MEETS TARGET' : 'BELOW TARGET'}`;
    if (profileReport) process.stdout.write(`\n${profileReport}\n`);
    process.stdout.write(`\n${summary}\n`);

    writeResults(opts.json, { command, startedAt, loadStart }, opts, {
      bodyBytes: body.length,
      reps,
      measurements: all,
      medians: { ours: o, anchor: a, ...(f ? { fastify: f } : {}), ratio },
      memory,
      meetsTarget: meets,
    });
    return opts.check && !meets ? 2 : 0;
  } finally {
    await stopAll();
    rmSync(work, { recursive: true, force: true });
    scratch.delete(work);
  }
}

/**
 * Restarts our server under `node --cpu-prof`, loads it for one measurement and summarises the profile over
 * the load window. The measured figures above come from the unprofiled server; this run is only for where
 * the time goes.
 */
async function profileOurs(
  opts: Options,
  ours: Ours,
  dataDir: string,
  apiKey: string,
  url: string,
  headers: Record<string, string>,
): Promise<string> {
  const dir = opts.profileDir ?? mkdtempSync(join(tmpdir(), 'millrace-bench-profile-'));
  mkdirSync(dir, { recursive: true });
  await stop(ours.proc);
  const before = new Set(existsSync(dir) ? readdirSync(dir) : []);
  const profiled = await startOurs(opts, dataDir, apiKey, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const path = new URL(url).pathname;
  const profiledUrl = `${profiled.origin}${path}`;
  if (opts.warmup > 0) await autocannon(opts, profiledUrl, headers, opts.warmup);
  const m = await measure(opts, 'ours', 0, profiled.proc, profiledUrl, headers);
  assertClean(m, 'profiled server');
  await stop(profiled.proc, 20_000);
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread (tsx's loader has its own).
  const mainThread = new RegExp(`\\.${profiled.proc.pid}\\.0\\.\\d+\\.cpuprofile$`);
  const file = readdirSync(dir).find((f) => mainThread.test(f) && !before.has(f));
  if (!file) return `(no .cpuprofile was written to ${dir})`;
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const summary = summarizeCpuProfile(profile, { window: { startUs: m.startUs, endUs: m.endUs }, root: ROOT });
  return (
    `CPU profile of our server under the same load (node --cpu-prof; ${int(m.reqPerSec)} req/s, p99 ${m.p99} ms ` +
    `while profiled): ${join(dir, file)}\n\n${formatProfileSummary(summary, m.requests)}`
  );
}

runBenchmark(main);
