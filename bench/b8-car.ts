/**
 * Benchmark B8: CAR import and export of 10,000 JobDefinitions through the XML interface (`api-rest`,
 * basic authentication), and the XML list of those 10,000 objects against a GET of one object, on a real
 * `millrace serve` (SQLite).
 *
 *   npm run bench:b8                          # 10,000 objects; 3 reps × 5 s of list / GET-one (≈ 1.5 min)
 *   npm run bench:b8 -- --quick               # 2,000 objects, 1 rep × 2 s (≈ 30 s)
 *   npm run bench:b8 -- --objects 20000 --json b8.json
 *
 * 1. This process builds a CAR of N BASH JobDefinitions (export form: every field, 3–9 script lines, 2–4
 *    parameters, a description; deterministic) with writeCar, plus META-INF/export-info.xml.
 * 2. `millrace serve` starts on a fresh data folder pinned to core 0 (MILLRACE_ADMIN_API_KEY, MILLRACE_ADMIN_PASSWORD,
 *    MILLRACE_STATS_FILE); this process pins itself to core 1.
 * 3. Import: `PUT /api-rest/car` (synchronous: the answer comes when the System_Import_Archive job is final). Wall
 *    clock of the request; the server's RSS before and its peak during the request (VmHWM after resetting it through
 *    /proc/<pid>/clear_refs, and VmRSS sampled every 20 ms: the larger); its CPU seconds; the worst event-loop
 *    stall (MILLRACE_STATS_FILE); the job's own times from the jobs table. Then `GET /api-rest/list/JobDefinition`
 *    must list exactly the N objects. The same CAR is then imported a second time (every object unchanged).
 * 4. Export: `POST /api-rest/scripts-get` --reps times, measured the same way; the CAR must hold exactly N
 *    JobDefinition entries (readCar).
 * 5. `GET /api-rest/list/JobDefinition` (N entries) against `GET /api-rest/object/JobDefinition/<one>` (basic auth)
 *    and the JSON interface's `GET …/v1/JobDefinition/<one>` (X-API-Key): autocannon on core 1, --connections (4) for
 *    the list (each answer is MiBs), --get-connections (50, as bench:get) for GET-one, so that each saturates the
 *    server's core; reps interleaved list, xml-get, json-get; medians, the ratios list ÷ GET-one, and server CPU per
 *    request (which does not depend on the connection count).
 * A wrong count or any non-2xx answer fails the run.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { type CarEntry, readCar } from '../src/car/archive.ts';
import { writeCar } from '../src/car/archive-writer.ts';
import { EXPORT_INFO, exportInfoXml, objectEntryName } from '../src/car/layout.ts';
import { DEFAULTS, interfacePaths } from '../src/config/config.ts';
import { formatInstant } from '../src/time/date-format.ts';
import { JobsReader, loopDelay, sampleRss, statsBetween } from './agent-harness.ts';
import { autocannon, backgroundBusy, memoryOf, processCpuSeconds, type Serve, startServe } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { startProbe } from './lib/get-probe.ts';
import { amount, count, flag, type Values } from './lib/options.ts';
import { dist, fixed, int, median, medians, ratiosByRep, row, say, Table } from './lib/report.ts';

const PREFIX = 'B8_';
const ADMIN = 'admin';
const MiB = 1024 * 1024;

const OPTIONS = {
  // readCar's default cap is 50,000 entries (and writeCar's 65,535); export-info.xml is one more.
  objects: count(10_000, 'JobDefinitions in the CAR', { max: 49_999 }),
  reps: count(3, 'exports, and repetitions of list / GET-one, interleaved', { env: 'BENCH_REPS' }),
  duration: amount(5, 'seconds per list / GET-one measurement', { min: 1, env: 'BENCH_DURATION' }),
  warmup: amount(2, 'warm-up seconds per target before the list / GET-one reps'),
  connections: count(4, 'autocannon connections for the list (each answer is ~250 bytes per object)'),
  getConnections: count(50, 'autocannon connections for GET-one, XML and JSON (as bench:get)'),
  quick: flag('a short smoke run (the defaults marked --quick; explicit options still win)', {
    sets: { objects: 2000, reps: 1, duration: 2, warmup: 1 },
  }),
  reimport: flag('leave out the second import of the same CAR', { default: true }),
};
type Options = Values<typeof OPTIONS> & { pin: boolean };

// ---------------------------------------------------------------------------------------------------------------
// The CAR: N realistic BASH definitions in the form an export writes them.

/** mulberry32: the same CAR on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const SUBJECTS = ['ledger', 'invoices', 'payroll', 'stock levels', 'customer master', 'shipments', 'GL balances'];
const VERBS = ['Nightly extract of', 'Hourly sync of', 'Month-end close of', 'Archive', 'Reconcile', 'Load'];
const TARGETS = ['the reporting warehouse', 'the data lake', 'SFTP drop', 'the audit store', 'the BI cache'];

const SCRIPT_LINES = [
  'set -euo pipefail',
  'echo "run $(date -u +%FT%TZ) on $(hostname)"',
  'export PGAPPNAME="millrace-$JOB_NAME"',
  'rows=$(psql -Atc "select count(*) from $TABLE where booked >= \'$FROM_DATE\'")',
  'echo "rows: $rows"',
  'test "$rows" -gt 0 || { echo "nothing to do" >&2; exit 0; }',
  'curl -fsS --retry 3 -o "/tmp/$JOB_NAME.csv" "https://files.example.com/export/$TABLE?from=$FROM_DATE"',
  'gzip -9 "/tmp/$JOB_NAME.csv" && mv "/tmp/$JOB_NAME.csv.gz" "$TARGET_DIR/"',
  'find "$TARGET_DIR" -name "*.csv.gz" -mtime +"$KEEP_DAYS" -delete',
  'for i in $(seq 1 "$BATCH_COUNT"); do echo "batch $i of $BATCH_COUNT"; done',
  'python3 /opt/etl/transform.py --table "$TABLE" --batch-size "$BATCH_SIZE" 2>&1',
];

const PARAMETERS: ReadonlyArray<[name: string, type: 'String' | 'Number' | 'Date', value: string]> = [
  ['TABLE', 'String', 'gl_main'],
  ['FROM_DATE', 'Date', '2026/11/01 00:00:00,000 UTC'],
  ['BATCH_SIZE', 'Number', '5000'],
  ['TARGET_DIR', 'String', '/srv/exports/finance'],
  ['KEEP_DAYS', 'Number', '14'],
  ['BATCH_COUNT', 'Number', '8'],
];

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

function definitionXml(name: string, rand: () => number, created: string): string {
  const description = `${pick(rand, VERBS)} ${pick(rand, SUBJECTS)} (${name}) into ${pick(rand, TARGETS)}`;
  const lines = 3 + Math.floor(rand() * 7);
  const script = [SCRIPT_LINES[0] as string];
  for (let i = 1; i < lines; i++) script.push(pick(rand, SCRIPT_LINES.slice(1)));
  const parameterCount = 2 + Math.floor(rand() * 3);
  const start = Math.floor(rand() * PARAMETERS.length);
  const parameters = Array.from({ length: parameterCount }, (_, i) => {
    const [pName, type, value] = PARAMETERS[(start + i) % PARAMETERS.length] as (typeof PARAMETERS)[number];
    return [
      '    <Parameter>',
      `      <Name>${pName}</Name>`,
      '      <Direction>In</Direction>',
      `      <DataType>${type}</DataType>`,
      `      <DefaultValue>${esc(value)}</DefaultValue>`,
      '      <Optional>false</Optional>',
      `      <DisplayOrder>${i + 1}</DisplayOrder>`,
      '      <Description/>',
      '    </Parameter>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<JobDefinition>',
    '  <Comment/>',
    `  <Description>${esc(description)}</Description>`,
    `  <Name>${name}</Name>`,
    '  <Partition type="Partition" path="GLOBAL"/>',
    '  <ParentApplication/>',
    '  <JobDefinitionType>BASH</JobDefinitionType>',
    `  <Script>${esc(script.join('\n'))}</Script>`,
    '  <Parameters>',
    ...parameters,
    '  </Parameters>',
    '  <DefaultQueue type="Queue" path="GLOBAL.Default"/>',
    `  <Priority>${40 + Math.floor(rand() * 40)}</Priority>`,
    '  <TimeWindow/>',
    '  <TimeZone/>',
    '  <HoldOnSubmit>false</HoldOnSubmit>',
    '  <CompletionStrategy>Default</CompletionStrategy>',
    '  <ReturncodeMapToCompleted>0</ReturncodeMapToCompleted>',
    '  <RestartBehaviour/>',
    '  <MaxStarts/>',
    '  <WaitEvents/>',
    '  <RaiseEvents/>',
    '  <Locks/>',
    '  <ActWhenOverdue>Scheduled</ActWhenOverdue>',
    '  <OverdueEvent/>',
    '  <MisfirePolicy>RunOnce</MisfirePolicy>',
    '  <Credential/>',
    '  <UserMessage/>',
    '  <KeepJobs/>',
    `  <CreationTime>${created}</CreationTime>`,
    `  <LastModificationTime>${created}</LastModificationTime>`,
    '</JobDefinition>',
    '',
  ].join('\n');
}

const objectName = (i: number, n: number): string => `${PREFIX}${String(i).padStart(String(n).length, '0')}`;

async function buildCar(n: number): Promise<{ car: Buffer; xmlBytes: number; seconds: number }> {
  const t0 = performance.now();
  const rand = prng(8);
  const created = formatInstant(Date.UTC(2026, 10, 1, 6, 0, 0), 'UTC');
  const entries: CarEntry[] = [];
  let xmlBytes = 0;
  for (let i = 1; i <= n; i++) {
    const name = objectName(i, n);
    const data = Buffer.from(definitionXml(name, rand, created));
    xmlBytes += data.length;
    entries.push({ name: objectEntryName('JobDefinition', `GLOBAL.${name}`), data });
  }
  const info = { sourceSystem: 'bench-b8', sourceAddress: 'http://bench.invalid/millrace', user: ADMIN, date: created };
  entries.push({ name: EXPORT_INFO, data: Buffer.from(exportInfoXml(info)) });
  const car = await writeCar(entries);
  return { car, xmlBytes, seconds: (performance.now() - t0) / 1000 };
}

// ---------------------------------------------------------------------------------------------------------------
// One timed request with the server's memory, CPU and event loop around it.

interface Phase {
  name: string;
  seconds: number;
  status: number;
  requestBytes: number;
  responseBytes: number;
  rssBeforeMiB: number;
  /** The larger of VmHWM (reset just before) and the 20 ms VmRSS samples. */
  peakMiB: number;
  /** Whether /proc/<pid>/clear_refs reset VmHWM, so that it is this request's peak. */
  hwmReset: boolean;
  rssAfterMiB: number;
  serverCpuS: number;
  /** Worst event-loop delay of any second of the request (MILLRACE_STATS_FILE), ms. */
  loopMaxMs: number;
  /** Other requests meanwhile: JSON GETs of one object (lib/get-probe.ts), their p99 and longest wait, ms. */
  getP99Ms: number;
  getMaxMs: number;
  gets: number;
  background: number;
  loadavg1: number;
  /** Date.now() when the request was sent and when its answer was read. */
  wallStart: number;
  wallEnd: number;
}

/** Resets the process's VmHWM to its current RSS ("5" > clear_refs, Linux ≥ 4.0); false when not allowed. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Other requests while a long one runs: GETs of one JSON object (a built-in, there before the import), 100 a second. */
const PROBE_RATE = 100;

async function timed(
  serve: Serve,
  c: Client,
  name: string,
  request: () => Promise<{ status: number; body: Buffer; requestBytes: number }>,
): Promise<{ phase: Phase; body: Buffer }> {
  const pid = serve.proc.pid;
  const background = await backgroundBusy();
  const loadavg1 = loadavg()[0] ?? Number.NaN;
  const rssBeforeMiB = memoryOf(pid).rssMiB;
  const hwmReset = resetPeak(pid);
  const sampler = sampleRss(pid, 20);
  const cpu0 = processCpuSeconds(pid);
  const wall0 = Date.now();
  const t0 = performance.now();
  const probe = startProbe(`${c.json}/JobDefinition/GLOBAL.System_Sleep`, c.apiKey, PROBE_RATE);
  const r = await request();
  const seconds = (performance.now() - t0) / 1000;
  const wall1 = Date.now();
  const samples = await probe.stop();
  const failed = samples.filter((x) => x.status !== 200);
  if (failed.length > 0) throw new Error(`${name}: ${failed.length} probe GETs failed (status ${failed[0]?.status})`);
  const probed = samples.map((x) => x.ms);
  const waits = dist(probed);
  const sampled = sampler.stop().maxBytes / MiB;
  const mem = memoryOf(pid);
  const serverCpuS = processCpuSeconds(pid) - cpu0;
  // The stats line of the second the request ended in is written up to a second later.
  await new Promise((res) => setTimeout(res, 1100));
  const loop = loopDelay(statsBetween(serve.statsFile, wall0, wall1));
  return {
    body: r.body,
    phase: {
      name,
      seconds,
      status: r.status,
      requestBytes: r.requestBytes,
      responseBytes: r.body.length,
      rssBeforeMiB,
      peakMiB: Math.max(hwmReset ? mem.peakMiB : 0, sampled),
      hwmReset,
      rssAfterMiB: mem.rssMiB,
      serverCpuS,
      loopMaxMs: loop.max,
      getP99Ms: waits.p99,
      getMaxMs: waits.max,
      gets: probed.length,
      background,
      loadavg1,
      wallStart: wall0,
      wallEnd: wall1,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The XML interface.

interface Client {
  xml: string;
  json: string;
  basic: string;
  apiKey: string;
}

async function call(url: string, init: RequestInit): Promise<{ status: number; body: Buffer }> {
  const r = await fetch(url, init);
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
}

async function importCar(serve: Serve, c: Client, car: Buffer, name: string): Promise<{ phase: Phase; jobId: number }> {
  const payload = new Uint8Array(car); // a copy whose type fetch's BodyInit takes
  const { phase, body } = await timed(serve, c, name, async () => ({
    ...(await call(`${c.xml}/car`, {
      method: 'PUT',
      headers: { Authorization: c.basic, 'Content-Type': 'application/zip' },
      body: payload,
    })),
    requestBytes: car.length,
  }));
  const text = body.toString('utf8');
  if (phase.status !== 200 || !text.includes('<status>Completed</status>'))
    throw new Error(`${name}: PUT /api-rest/car answered ${phase.status}: ${text.slice(0, 600)}`);
  const jobId = Number(/<job-id>(\d+)<\/job-id>/.exec(text)?.[1]);
  if (!Number.isSafeInteger(jobId)) throw new Error(`${name}: no job id in ${text.slice(0, 300)}`);
  return { phase, jobId };
}

/** The list of every JobDefinition; throws unless exactly `n` of ours are in it. */
async function checkList(c: Client, n: number, when: string): Promise<{ bytes: number; count: number }> {
  const r = await call(`${c.xml}/list/JobDefinition`, { headers: { Authorization: c.basic } });
  const text = r.body.toString('utf8');
  if (r.status !== 200) throw new Error(`GET /api-rest/list/JobDefinition ${when}: ${r.status} ${text.slice(0, 300)}`);
  const ours = text.split(`<business-key>JobDefinition:GLOBAL.${PREFIX}`).length - 1;
  const count = Number(/<rest-list [^>]*count="(\d+)"/.exec(text)?.[1]);
  if (ours !== n) throw new Error(`${when}: the list holds ${ours} of our JobDefinitions (count="${count}"), not ${n}`);
  return { bytes: r.body.length, count };
}

interface JobTimes {
  /** PUT sent → job created (archive read, checked and stored), s. */
  accept: number;
  /** Job created → RunStart, s. */
  queued: number;
  /** RunStart → RunEnd, s. */
  run: number;
  /** RunEnd → the answer, s (waitForEnd polls the job every ≤ 200 ms). */
  reply: number;
}

function jobTimes(dataDir: string, jobId: number, wallStart: number, wallEnd: number): JobTimes | undefined {
  const reader = new JobsReader(dataDir);
  try {
    const job = reader.rows(jobId - 1).find((r) => r.job_id === jobId);
    if (!job || job.run_start === null) return undefined;
    const end = job.run_end ?? job.modification_time;
    return {
      accept: (job.creation_time - wallStart) / 1000,
      queued: (job.run_start - job.creation_time) / 1000,
      run: (end - job.run_start) / 1000,
      reply: (wallEnd - end) / 1000,
    };
  } finally {
    reader.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// List against GET-one.

type Target = 'list' | 'xml-get' | 'json-get';

interface LoadM {
  target: Target;
  rep: number;
  background: number;
  reqPerSec: number;
  requests: number;
  p50: number;
  p99: number;
  serverCpu: number;
  cpuMsPerReq: number;
  non2xx: number;
  errors: number;
}

async function measureLoad(
  opts: Options,
  serve: Serve,
  target: Target,
  url: string,
  headers: Record<string, string>,
  connections: number,
  rep: number,
  background: number,
): Promise<LoadM> {
  const pid = serve.proc.pid;
  const cpu0 = processCpuSeconds(pid);
  const t0 = performance.now();
  const r = await autocannon(opts.pin, url, headers, opts.duration, connections);
  const wallS = (performance.now() - t0) / 1000;
  const cpu = processCpuSeconds(pid) - cpu0;
  const requests = r.requests.total;
  const m: LoadM = {
    target,
    rep,
    background,
    reqPerSec: requests / (r.duration || opts.duration),
    requests,
    p50: r.latency.p50,
    p99: r.latency.p99,
    serverCpu: (100 * cpu) / wallS,
    cpuMsPerReq: (1000 * cpu) / Math.max(1, requests),
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
  if (m.non2xx > 0 || m.errors > 0 || requests === 0)
    throw new Error(
      `${target} rep ${rep}: ${requests} requests, ${m.non2xx} non-2xx, ${m.errors} errors/timeouts ` +
        `(${JSON.stringify(r.statusCodeStats)}); every answer must be 2xx`,
    );
  return m;
}

// ---------------------------------------------------------------------------------------------------------------

const mib = (n: number) => `${fixed(n, 0)} MiB`;

function phaseLine(p: Phase, extra = ''): string {
  return `${row(
    [
      p.name,
      fixed(p.seconds, 2),
      mib(p.rssBeforeMiB),
      mib(p.peakMiB),
      `+${fixed(p.peakMiB - p.rssBeforeMiB, 0)}`,
      fixed(p.serverCpuS, 2),
      int(p.loopMaxMs),
      `${int(p.getP99Ms)}/${int(p.getMaxMs)}`,
      `${fixed(p.requestBytes / MiB, 2)}/${fixed(p.responseBytes / MiB, 2)}`,
      fixed(p.background, 0),
    ],
    PHASE_WIDTHS,
  )}${extra}`;
}
const PHASE_WIDTHS = [16, 8, 9, 9, 6, 8, 9, 12, 13, 4];

const perRep = new Table<LoadM>([
  ['rep target', 14, (m) => `${m.rep} ${m.target}`],
  ['bg%', 4, (m) => fixed(m.background, 0)],
  ['req/s', 9, (m) => int(m.reqPerSec)],
  ['p50 ms', 7, (m) => String(m.p50)],
  ['p99 ms', 7, (m) => String(m.p99)],
  ['srv CPU', 8, (m) => `${fixed(m.serverCpu, 0)}%`],
  ['CPU ms/req', 10, (m) => fixed(m.cpuMsPerReq, m.cpuMsPerReq < 1 ? 3 : 1)],
  ['requests', 9, (m) => int(m.requests)],
]);

type Figures = Record<'reqPerSec' | 'p50' | 'p99' | 'serverCpu' | 'cpuMsPerReq', number> & { size: number };

const mediansTable = new Table<Figures>([
  ['', 26, () => ''],
  ['req/s', 9, (x) => fixed(x.reqPerSec, x.reqPerSec < 100 ? 1 : 0)],
  ['p50 ms', 7, (x) => fixed(x.p50, 0)],
  ['p99 ms', 7, (x) => fixed(x.p99, 0)],
  ['srv CPU', 8, (x) => `${fixed(x.serverCpu, 0)}%`],
  ['CPU ms/req', 10, (x) => fixed(x.cpuMsPerReq, 3)],
  ['bytes', 11, (x) => int(x.size)],
]);

benchmark({
  script: 'bench:b8',
  title: (o) => `B8 CAR import/export and list of ${int(o.objects)} JobDefinitions`,
  about:
    'B8: CAR import and export of JobDefinitions through the XML interface (seconds, server peak RSS), and the XML ' +
    'list of them against a GET of one object, on a real millrace serve (SQLite).',
  options: OPTIONS,
  pin: 'self',
  async run({ opts, work, apiKey }) {
    const password = `pw_${randomBytes(12).toString('hex')}`;
    say(`pinning: ${opts.pin ? 'server on core 0; this process and autocannon on core 1' : 'UNPINNED'}; SQLite`, '');

    const built = await buildCar(opts.objects);
    say(
      `CAR: ${int(opts.objects)} BASH definitions + export-info.xml, ${fixed(built.xmlBytes / MiB, 2)} MiB of XML ` +
        `(${int(built.xmlBytes / opts.objects)} B/object) → ${fixed(built.car.length / MiB, 2)} MiB zip, ` +
        `built in ${fixed(built.seconds, 2)} s`,
    );

    const dataDir = join(work, 'data');
    const serve = await startServe({
      pin: opts.pin,
      dataDir,
      apiKey,
      statsFile: join(work, 'stats.ndjson'),
      env: { MILLRACE_ADMIN_PASSWORD: password },
    });
    const paths = interfacePaths(DEFAULTS);
    const c: Client = {
      xml: `${serve.origin}${paths.xmlBase}`,
      json: serve.base,
      basic: `Basic ${Buffer.from(`${ADMIN}:${password}`).toString('base64')}`,
      apiKey,
    };
    // The first basic login runs scrypt (~100 ms); later ones hit the login cache. Not part of any measurement.
    const warm = await call(`${c.xml}/version`, { headers: { Authorization: c.basic } });
    if (warm.status !== 200) throw new Error(`GET /api-rest/version: ${warm.status} ${warm.body.toString()}`);
    say(`server: pid ${serve.proc.pid}, RSS ${mib(memoryOf(serve.proc.pid).rssMiB)} when idle`, '');

    // --- import, verify, re-import -----------------------------------------------------------------------------
    const phases: Phase[] = [];
    say(
      row(
        ['', 'seconds', 'RSS bef.', 'peak RSS', 'Δ MiB', 'srv CPU', 'loop max', 'GET p99/max', 'MiB in/out', 'bg%'],
        PHASE_WIDTHS,
      ),
      row(['', 's', '', '', '', 's', 'ms', 'ms', '', ''], PHASE_WIDTHS),
    );
    const first = await importCar(serve, c, built.car, 'import');
    const firstTimes = jobTimes(dataDir, first.jobId, first.phase.wallStart, first.phase.wallEnd);
    phases.push(first.phase);
    const split = (t: JobTimes | undefined) =>
      t
        ? `  (accept ${fixed(t.accept, 2)} s, queued ${fixed(t.queued, 2)} s, job ran ${fixed(t.run, 2)} s, ` +
          `reply ${fixed(t.reply, 2)} s)`
        : '';
    say(phaseLine(first.phase, split(firstTimes)));
    const listAfter = await checkList(c, opts.objects, 'after the import');

    let again: { phase: Phase; jobId: number } | undefined;
    let againTimes: JobTimes | undefined;
    if (opts.reimport) {
      again = await importCar(serve, c, built.car, 're-import (same)');
      againTimes = jobTimes(dataDir, again.jobId, again.phase.wallStart, again.phase.wallEnd);
      phases.push(again.phase);
      say(phaseLine(again.phase, split(againTimes)));
      await checkList(c, opts.objects, 'after the second import');
    }

    // --- export ------------------------------------------------------------------------------------------------
    let exportEntries = 0;
    for (let rep = 1; rep <= opts.reps; rep++) {
      const { phase, body } = await timed(serve, c, `export ${rep}`, async () => ({
        ...(await call(`${c.xml}/scripts-get`, { method: 'POST', headers: { Authorization: c.basic } })),
        requestBytes: 0,
      }));
      if (phase.status !== 200)
        throw new Error(`POST /api-rest/scripts-get: ${phase.status} ${body.toString().slice(0, 300)}`);
      const entries = await readCar(body);
      exportEntries = entries.filter((e) => e.name.startsWith('JobDefinition/')).length;
      const ours = entries.filter((e) => e.name.startsWith(`JobDefinition/GLOBAL.${PREFIX}`)).length;
      if (exportEntries !== opts.objects || ours !== opts.objects)
        throw new Error(
          `export ${rep}: the CAR holds ${exportEntries} JobDefinition entries (${ours} ours), not ${opts.objects}`,
        );
      phases.push(phase);
      say(phaseLine(phase, `  (${int(entries.length)} entries, ${int(exportEntries)} JobDefinition)`));
    }
    say(
      `(peak RSS = max of VmHWM${phases.every((p) => p.hwmReset) ? ' reset through clear_refs just before' : ' (NOT reset: since start)'} ` +
        'and VmRSS sampled every 20 ms; loop max = worst event-loop delay of the server in those seconds)',
      '',
    );

    // --- list against GET-one ----------------------------------------------------------------------------------
    const one = `GLOBAL.${objectName(1, opts.objects)}`;
    const basic = { Authorization: c.basic };
    const targets: Array<{ target: Target; url: string; headers: Record<string, string>; connections: number }> = [
      { target: 'list', url: `${c.xml}/list/JobDefinition`, headers: basic, connections: opts.connections },
      {
        target: 'xml-get',
        url: `${c.xml}/object/JobDefinition/${one}`,
        headers: basic,
        connections: opts.getConnections,
      },
      {
        target: 'json-get',
        url: `${c.json}/JobDefinition/${one}`,
        headers: { 'X-API-Key': apiKey },
        connections: opts.getConnections,
      },
    ];
    const sizes = new Map<Target, number>();
    for (const t of targets) {
      const r = await call(t.url, { headers: t.headers });
      if (r.status !== 200) throw new Error(`GET ${t.url}: ${r.status} ${r.body.toString().slice(0, 300)}`);
      sizes.set(t.target, r.body.length);
    }
    const size = (t: Target) => sizes.get(t) ?? 0;
    say(
      `list:     GET ${new URL(targets[0]?.url ?? '').pathname} (basic auth): ${int(listAfter.count)} entries ` +
        `(${int(opts.objects)} ours + built-ins), ${int(size('list'))} bytes (${fixed(size('list') / MiB, 2)} MiB)`,
      `xml-get:  GET ${new URL(targets[1]?.url ?? '').pathname} (basic auth): ${int(size('xml-get'))} bytes`,
      `json-get: GET ${new URL(targets[2]?.url ?? '').pathname} (X-API-Key): ${int(size('json-get'))} bytes`,
      `load:     autocannon, list ${opts.connections} connections, GET-one ${opts.getConnections}, no pipelining, ` +
        `${opts.duration} s × ${opts.reps} reps interleaved, ${opts.warmup} s warm-up each`,
      '',
    );
    if (opts.warmup > 0)
      for (const t of targets) {
        const w = await autocannon(opts.pin, t.url, t.headers, opts.warmup, t.connections);
        if (w.non2xx > 0 || w.errors > 0 || w.requests.total === 0)
          throw new Error(`warm-up of ${t.target}: ${w.non2xx} non-2xx, ${w.errors} errors`);
      }
    say(perRep.header());
    const loads: LoadM[] = [];
    for (let rep = 1; rep <= opts.reps; rep++) {
      const background = await backgroundBusy();
      for (const t of targets) {
        const m = await measureLoad(opts, serve, t.target, t.url, t.headers, t.connections, rep, background);
        loads.push(m);
        say(perRep.line(m));
      }
    }
    const of = (t: Target) => loads.filter((m) => m.target === t);
    const med = (t: Target): Figures => ({
      ...medians(of(t), ['reqPerSec', 'p50', 'p99', 'serverCpu', 'cpuMsPerReq']),
      size: size(t),
    });
    const list = med('list');
    const xmlGet = med('xml-get');
    const jsonGet = med('json-get');
    const perRepText = (b: Target) =>
      ratiosByRep(of('list'), of(b), (m) => m.reqPerSec)
        .map((r) => `${fixed(100 * r, 2)} %`)
        .join(', ');
    const ratio = (a: number, b: number) => (a / b >= 0.01 ? `${fixed((100 * a) / b, 2)} %` : `1 : ${int(b / a)}`);
    const listUsPerObject = (1000 * list.cpuMsPerReq) / listAfter.count;
    say(
      '',
      mediansTable.header(`median of ${opts.reps} rep(s)`),
      mediansTable.line(list, `list (${int(listAfter.count)} entries)`),
      mediansTable.line(xmlGet, 'xml-get (one object)'),
      mediansTable.line(jsonGet, 'json-get (one object)'),
      `ratio list ÷ xml-get:  ${ratio(list.reqPerSec, xmlGet.reqPerSec)} (per rep ${perRepText('xml-get')})`,
      `ratio list ÷ json-get: ${ratio(list.reqPerSec, jsonGet.reqPerSec)} (per rep ${perRepText('json-get')})`,
      `list server CPU per listed object: ${fixed(listUsPerObject, 2)} µs; ` +
        `xml-get ${fixed(1000 * xmlGet.cpuMsPerReq, 0)} µs and json-get ${fixed(1000 * jsonGet.cpuMsPerReq, 0)} µs per request`,
      `server RSS at the end: ${mib(memoryOf(serve.proc.pid).rssMiB)}`,
    );

    const exports = phases.filter((p) => p.name.startsWith('export'));
    const exportS = median(exports.map((p) => p.seconds));
    const exportPeak = Math.max(...exports.map((p) => p.peakMiB));
    return {
      summary:
        `B8 ${int(opts.objects)} JobDefinitions (SQLite): import ${fixed(first.phase.seconds, 2)} s, ` +
        `RSS ${mib(first.phase.rssBeforeMiB)} → peak ${mib(first.phase.peakMiB)}` +
        (again ? `; re-import ${fixed(again.phase.seconds, 2)} s, peak ${mib(again.phase.peakMiB)}` : '') +
        ` | export (scripts-get) ${fixed(exportS, 2)} s (median of ${exports.length}), peak ${mib(exportPeak)} | ` +
        `list ${fixed(list.reqPerSec, 1)} req/s vs GET-one ${int(xmlGet.reqPerSec)} (XML) / ${int(jsonGet.reqPerSec)} (JSON) req/s ` +
        `(c=${opts.connections} / ${opts.getConnections}): list ÷ xml-get ${ratio(list.reqPerSec, xmlGet.reqPerSec)}, ` +
        `list ÷ json-get ${ratio(list.reqPerSec, jsonGet.reqPerSec)}`,
      results: {
        car: { objects: opts.objects, bytes: built.car.length, xmlBytes: built.xmlBytes, buildSeconds: built.seconds },
        phases,
        jobTimes: { import: firstTimes, reimport: againTimes },
        exportEntries,
        list: { bytes: sizes.get('list'), entries: listAfter.count },
        sizes: Object.fromEntries(sizes),
        loads,
        medians: { list, xmlGet, jsonGet },
        ratios: {
          listOverXmlGet: list.reqPerSec / xmlGet.reqPerSec,
          listOverJsonGet: list.reqPerSec / jsonGet.reqPerSec,
        },
      },
    };
  },
});
