/**
 * Benchmark: GET of a JobDefinition by key with an API key, against a bare node:http server answering a JSON
 * body of the same size, both measured in the same run (the method of bench/README.md).
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
 * Any non-2xx answer of our server fails the run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  autocannon,
  coreTimes,
  coreUse,
  launch,
  memoryOf,
  NoisyReps,
  type Proc,
  pinned,
  processCpuSeconds,
  type RepInfo,
  ROOT,
  startServe,
  stop,
  waitForLine,
} from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { amount, count, flag, shared } from './lib/options.ts';
import { profileRun } from './lib/profile.ts';
import { fixed, int, medians, pct, ratio, ratiosByRep, say, Table } from './lib/report.ts';

const TARGET_RATIO = 0.6;
const TARGET_P99_MS = 20;
const OBJECT_KEY = 'GLOBAL.BenchLoad';

/** ours: Millrace; anchor: bare node:http; fastify: plain fastify (optional); loader: ours from the sources. */
type Target = 'ours' | 'anchor' | 'fastify' | 'loader';

interface Measurement extends RepInfo {
  target: Target;
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

interface Server {
  target: Target;
  proc: Proc;
  url: string;
  headers: Record<string, string>;
}

async function measure(
  pin: boolean,
  s: Server,
  info: RepInfo,
  seconds: number,
  connections: number,
): Promise<Measurement> {
  const cores0 = coreTimes();
  const cpu0 = processCpuSeconds(s.proc.pid);
  const r = await autocannon(pin, s.url, s.headers, seconds, connections);
  const cpu1 = processCpuSeconds(s.proc.pid);
  const cores1 = coreTimes();
  const statusCodes: Record<string, number> = {};
  for (const [code, c] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = c.count;
  const m: Measurement = {
    ...info,
    target: s.target,
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
    startUs: r.startUs,
    endUs: r.endUs,
  };
  // Every answer of ours must be 2xx; an anchor only must not fail.
  const ours = s.target === 'ours' || s.target === 'loader';
  if ((ours && (m.non2xx > 0 || m.timeouts > 0)) || m.errors > 0 || m.requests === 0)
    throw new Error(
      `${s.target}, repetition ${info.rep}: ${m.requests} requests, ${m.non2xx} non-2xx, ${m.errors} errors, ` +
        `${m.timeouts} timeouts; status codes ${JSON.stringify(m.statusCodes)}. Every answer must be 2xx.`,
    );
  return m;
}

async function startAnchor(
  pin: boolean,
  script: 'anchor-http.mjs' | 'anchor-fastify.mjs',
  bodyFile: string,
  contentType: string,
): Promise<{ proc: Proc; url: string }> {
  const [cmd, args] = pinned(pin, 0, process.execPath, [join(ROOT, 'bench', script), bodyFile, contentType]);
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

const perRep = new Table<Measurement>([
  ['rep target', 16, (m) => `${m.rep} ${m.target}${m.noisy ? ' *' : ''}`],
  ['load1', 6, (m) => fixed(m.loadavg1, 2)],
  ['bg%', 5, (m) => fixed(m.background, 0)],
  ['req/s', 9, (m) => int(m.reqPerSec)],
  ['p50', 5, (m) => String(m.p50)],
  ['p99', 5, (m) => String(m.p99)],
  ['max', 6, (m) => String(m.max)],
  ['srv CPU', 8, (m) => `${fixed(m.serverCpu, 0)}%`],
  ['core1', 6, (m) => `${fixed(m.core1Busy, 0)}%`],
  ['steal', 6, (m) => `${fixed(m.steal, 1)}%`],
  ['non2xx', 7, (m) => String(m.non2xx)],
]);

const FIGURES = ['reqPerSec', 'p50', 'p99', 'serverCpu', 'cpuUsPerReq'] as const;
type Figures = Record<(typeof FIGURES)[number], number>;

const mediansTable = new Table<Figures>([
  ['', 28, () => ''],
  ['req/s', 9, (x) => int(x.reqPerSec)],
  ['p50 ms', 7, (x) => fixed(x.p50, 0)],
  ['p99 ms', 7, (x) => fixed(x.p99, 0)],
  ['srv CPU', 8, (x) => `${fixed(x.serverCpu, 0)}%`],
  ['CPU µs/req', 12, (x) => fixed(x.cpuUsPerReq, 0)],
]);

benchmark({
  script: 'bench:get',
  title: 'GET-by-key benchmark',
  about:
    'GET of a JobDefinition by key with an API key against a bare node:http server answering the same bytes, ' +
    'interleaved in the same run (servers on core 0, autocannon on core 1).',
  options: {
    duration: amount(10, 'seconds per measurement', { min: 1, env: 'BENCH_DURATION' }),
    reps: count(3, 'repetitions of each server, interleaved', { env: 'BENCH_REPS' }),
    warmup: amount(3, 'warm-up seconds per server before measuring (0 = none)', { env: 'BENCH_WARMUP' }),
    connections: count(50, 'autocannon connections', { env: 'BENCH_CONNECTIONS' }),
    maxBackground: shared.maxBackground,
    withFastify: flag('also measure plain fastify answering the same body (a third, interleaved target)'),
    withLoader: flag('also measure ours run from the sources through tsx; ours is then dist/ named explicitly'),
  },
  pin: 'servers',
  target: `a target is missed (ratio >= ${TARGET_RATIO * 100} %, p99 < ${TARGET_P99_MS} ms)`,
  profile: 'afterwards, run our server once more under node --cpu-prof and summarise the profile',
  async run({ opts, work, apiKey }) {
    const entry = opts.withLoader ? 'compiled' : 'bin';
    const dataDir = join(work, 'data');
    const ours = await startServe({ pin: opts.pin, dataDir, apiKey, entry });
    const { body, contentType } = await createObject(ours.base, apiKey);
    const bodyFile = join(work, 'body.json');
    writeFileSync(bodyFile, body);
    const anchor = await startAnchor(opts.pin, 'anchor-http.mjs', bodyFile, contentType);
    const fastify = opts.withFastify
      ? await startAnchor(opts.pin, 'anchor-fastify.mjs', bodyFile, contentType)
      : undefined;
    for (const a of [anchor, fastify]) {
      if (!a) continue;
      const res = await fetch(a.url);
      const check = Buffer.from(await res.arrayBuffer());
      if (!check.equals(body) || res.headers.get('content-type') !== contentType)
        throw new Error(`${a.proc.name} does not answer the same body and content type`);
    }
    const oursUrl = `${ours.base}/JobDefinition/${OBJECT_KEY}`;
    const headers = { 'X-API-Key': apiKey };
    // The loader build on a data folder of its own, holding the same object.
    const loader = opts.withLoader
      ? await startServe({ pin: opts.pin, dataDir: join(work, 'loader'), apiKey, entry: 'loader' })
      : undefined;
    if (loader) await createObject(loader.base, apiKey);
    const servers: Server[] = [
      { target: 'ours', proc: ours.proc, url: oursUrl, headers },
      { target: 'anchor', proc: anchor.proc, url: anchor.url, headers: {} },
      ...(fastify ? [{ target: 'fastify' as const, proc: fastify.proc, url: fastify.url, headers: {} }] : []),
      ...(loader
        ? [{ target: 'loader' as const, proc: loader.proc, url: `${loader.base}/JobDefinition/${OBJECT_KEY}`, headers }]
        : []),
    ];
    say(
      `ours:    GET ${new URL(oursUrl).pathname} (${body.length}-byte JSON body), X-API-Key, SQLite`,
      `anchor:  bare node:http answering the same ${body.length} bytes (${contentType})`,
      ...(fastify ? [`fastify: plain fastify answering the same ${body.length} bytes`] : []),
      `load:    autocannon ${opts.connections} connections, no pipelining, ${opts.duration} s × ${opts.reps} reps ` +
        `interleaved, ${opts.warmup} s warm-up each; ` +
        (opts.pin ? 'servers on core 0, autocannon on core 1' : 'UNPINNED'),
      '',
    );

    if (opts.warmup > 0)
      for (const s of servers) {
        const w = await autocannon(opts.pin, s.url, s.headers, opts.warmup, opts.connections);
        if (w.non2xx > 0 || w.errors > 0 || w.requests.total === 0)
          throw new Error(`warm-up of ${s.target}: ${w.non2xx} non-2xx, ${w.errors} errors`);
      }

    const all: Measurement[] = [];
    const noise = new NoisyReps(opts.maxBackground);
    say(perRep.header());
    for (let rep = 1; rep <= opts.reps; rep++) {
      const info = await noise.begin(rep);
      for (const s of servers) {
        const m = await measure(opts.pin, s, info, opts.duration, opts.connections);
        all.push(m);
        say(perRep.line(m));
      }
    }

    const memory = memoryOf(ours.proc.pid);
    const used = noise.used();
    const of = (t: Target) => all.filter((m) => m.target === t && used.includes(m.rep));
    const o = medians(of('ours'), FIGURES);
    const a = medians(of('anchor'), FIGURES);
    const f = fastify ? medians(of('fastify'), FIGURES) : undefined;
    const l = loader ? medians(of('loader'), FIGURES) : undefined;
    const ours2anchor = o.reqPerSec / a.reqPerSec;
    const meets = ours2anchor >= TARGET_RATIO && o.p99 < TARGET_P99_MS;
    const ratioLine = (name: string, x: Figures, y: Figures) =>
      mediansTable.only(name, 'req/s', ratio(x.reqPerSec, y.reqPerSec));
    say(
      '',
      `${noise.note()}(latencies in ms at autocannon's whole-ms resolution; srv CPU = server process, % of one core;`,
      ` core1 = the load generator's core; steal = CPU stolen by the hypervisor, whole machine)`,
      '',
      mediansTable.header(`median of ${used.length} rep(s)`),
      mediansTable.line(o, 'ours (Millrace)'),
      mediansTable.line(a, 'anchor (bare node:http)'),
      ...(f ? [mediansTable.line(f, 'fastify (plain, same body)')] : []),
      ...(l
        ? [
            mediansTable.line(l, 'ours, sources through tsx'),
            ratioLine('ratio loader / anchor', l, a),
            ratioLine('ratio compiled / loader', o, l),
          ]
        : []),
      ratioLine('ratio ours / anchor', o, a),
      ...(f ? [ratioLine('ratio ours / fastify', o, f), ratioLine('ratio fastify / anchor', f, a)] : []),
      `per-repetition ratios ours / anchor: ${ratiosByRep(of('ours'), of('anchor'), (m) => m.reqPerSec)
        .map((r) => pct(100 * r))
        .join(', ')}`,
      `our server's RSS after the run: ${fixed(memory.rssMiB)} MiB (peak ${fixed(memory.peakMiB)} MiB)`,
    );

    if (opts.profile) {
      // Our server once more under --cpu-prof, on the same data, loaded once; the profile is cut to the load.
      await stop(ours.proc);
      const report = await profileRun(
        opts.profileDir,
        async (nodeFlags) => {
          const p = await startServe({ pin: opts.pin, dataDir, apiKey, entry, nodeFlags });
          const s: Server = { target: 'ours', proc: p.proc, url: `${p.base}/JobDefinition/${OBJECT_KEY}`, headers };
          if (opts.warmup > 0) await autocannon(opts.pin, s.url, headers, opts.warmup, opts.connections);
          const m = await measure(
            opts.pin,
            s,
            { rep: 0, loadavg1: Number.NaN, background: Number.NaN, noisy: false },
            opts.duration,
            opts.connections,
          );
          await stop(p.proc, 20_000); // the profile is written when the server exits
          return m;
        },
        (m) => ({
          heading: `CPU profile of our server under the same load (node --cpu-prof; ${int(m.reqPerSec)} req/s, p99 ${m.p99} ms while profiled)`,
          items: m.requests,
        }),
      );
      say('', report);
    }

    return {
      summary:
        `GET JobDefinition by key (${body.length} B, c=${opts.connections}, ${used.length}×${opts.duration} s): ` +
        `ours ${int(o.reqPerSec)} req/s p99 ${fixed(o.p99, 0)} ms | bare node:http ${int(a.reqPerSec)} req/s ` +
        `p99 ${fixed(a.p99, 0)} ms | ratio ${pct(100 * ours2anchor)} (target >= ${TARGET_RATIO * 100} %, p99 < ${TARGET_P99_MS} ms)`,
      meets,
      results: {
        bodyBytes: body.length,
        reps: noise.reps,
        measurements: all,
        medians: { ours: o, anchor: a, ...(f ? { fastify: f } : {}), ...(l ? { loader: l } : {}), ratio: ours2anchor },
        memory,
      },
    };
  },
});
