/**
 * Benchmark (issue 19 point 3): overload at 500 connections. autocannon drives GETs of the JSON interface (API key)
 * and then of the XML interface (basic auth) at -c 500 for --duration seconds each, while this process probes a
 * health path (`/<context>/health/live`: exempt from shedding) one request at a time. Reported: autocannon's
 * errors and timeouts, answers by status (503 = shed), request p99, and the health probe's p99 under load against
 * its p99 on the idle server measured in the same run (the anchor; ratio loaded ÷ idle).
 *
 *   npm run bench:overload                               # 20 s per interface, 500 connections
 *   npm run bench:overload -- --duration 5 --connections 500 --json out.json
 *
 * The server runs on core 0, autocannon on core 1 (when taskset works). All 500 connections come from 127.0.0.1,
 * so the per-address connection cap is raised for this run (MILLRACE_MAX_CONNECTIONS_PER_ADDRESS=2000); every
 * other limit is the default. Exit status 0 unless the run failed.
 */
import { mkdtempSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DEFAULTS, interfacePaths } from '../src/config/config.ts';
import {
  type AutocannonResult,
  autocannon,
  canPin,
  commandLine,
  fixed,
  int,
  numberOption,
  quantile,
  runBenchmark,
  scratch,
  startServe,
  stopAll,
  writeResults,
} from './harness.ts';

const API_KEY = 'bench-overload-admin-key-0123456789';
const PASSWORD = 'bench-overload-password-01';

interface Probe {
  latencies: number[];
  failures: number;
  statuses: Record<string, number>;
}

/** GETs `url` one at a time (keep-alive, 10 s timeout) until `stopAt`, recording each latency. */
async function probe(url: string, stopAt: () => boolean, gapMs: number): Promise<Probe> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const out: Probe = { latencies: [], failures: 0, statuses: {} };
  while (!stopAt()) {
    const t0 = performance.now();
    const status = await new Promise<number>((resolve) => {
      const req = request(url, { agent, timeout: 10_000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve(0));
      req.end();
    });
    out.latencies.push(performance.now() - t0);
    out.statuses[status] = (out.statuses[status] ?? 0) + 1;
    if (status === 0 || status >= 500) out.failures += 1;
    if (gapMs > 0) await sleep(gapMs);
  }
  agent.destroy();
  return out;
}

runBenchmark(async () => {
  const { values } = parseArgs({
    options: { duration: { type: 'string' }, connections: { type: 'string' }, json: { type: 'string' } },
  });
  const duration = numberOption(values.duration, 'BENCH_DURATION', 20, 1);
  const connections = numberOption(values.connections, 'BENCH_CONNECTIONS', 500, 1);
  const pin = canPin();
  const startedAt = new Date();
  const loadStart = loadavg();
  const dataDir = mkdtempSync(join(tmpdir(), 'millrace-bench-overload-'));
  scratch.add(dataDir);
  const serve = await startServe({
    pin,
    core: 0,
    dataDir,
    apiKey: API_KEY,
    env: { MILLRACE_ADMIN_PASSWORD: PASSWORD, MILLRACE_MAX_CONNECTIONS_PER_ADDRESS: '2000' },
  });
  const paths = interfacePaths(DEFAULTS);
  const health = `${serve.origin}${paths.root}/health/live`;

  // Anchor: the health probe on the idle server.
  let until = performance.now() + 5000;
  const idle = await probe(health, () => performance.now() > until, 10);

  const runs: Record<string, { cannon: AutocannonResult; health: Probe }> = {};
  const targets = {
    json: { url: `${serve.base}/Queue/GLOBAL.System`, headers: { 'X-API-Key': API_KEY } },
    xml: {
      url: `${serve.origin}${paths.xmlBase}/object/Queue/GLOBAL.System`,
      headers: { Authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` },
    },
  };
  for (const [name, target] of Object.entries(targets)) {
    let loaded = false;
    const cannon = autocannon(pin, target.url, target.headers, duration, connections).finally(() => {
      loaded = true;
    });
    await sleep(1000); // connections open and the queue builds before probing
    until = performance.now() + (duration - 2) * 1000;
    const healthRun = await probe(health, () => loaded || performance.now() > until, 20);
    runs[name] = { cannon: await cannon, health: healthRun };
    await sleep(2000);
  }

  const p99 = (xs: number[]) => quantile(xs, 0.99);
  const idleP99 = p99(idle.latencies);
  const lines = [
    `Overload at c=${connections}, ${duration} s per interface; server on core 0, autocannon on core 1${pin ? '' : ' (not pinned)'}`,
    `health probe on the idle server (anchor): p99 ${fixed(idleP99, 2)} ms over ${idle.latencies.length} requests`,
    '',
    'interface  requests  2xx      503 shed  other  errors  timeouts  p99 ms   health p99 ms  ratio to idle  health failures',
  ];
  const results: Record<string, unknown> = { idleHealthP99Ms: idleP99 };
  for (const [name, { cannon, health: h }] of Object.entries(runs)) {
    const shed = cannon.statusCodeStats?.['503']?.count ?? 0;
    const other = cannon.non2xx - shed;
    const hp99 = p99(h.latencies);
    lines.push(
      [
        name.padEnd(9),
        int(cannon.requests.total).padStart(8),
        int(cannon['2xx']).padStart(7),
        int(shed).padStart(9),
        int(other).padStart(6),
        int(cannon.errors).padStart(7),
        int(cannon.timeouts).padStart(9),
        fixed(cannon.latency.p99, 0).padStart(7),
        fixed(hp99, 1).padStart(14),
        fixed(hp99 / idleP99, 1).padStart(14),
        `${h.failures}/${h.latencies.length}`.padStart(16),
      ].join('  '),
    );
    results[name] = {
      requests: cannon.requests.total,
      ok: cannon['2xx'],
      shed,
      otherNon2xx: other,
      errors: cannon.errors,
      timeouts: cannon.timeouts,
      p99Ms: cannon.latency.p99,
      healthP99Ms: hp99,
      healthMaxMs: Math.max(...h.latencies),
      healthFailures: h.failures,
      healthRequests: h.latencies.length,
      healthStatuses: h.statuses,
    };
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  writeResults(
    values.json,
    { command: commandLine('bench:overload'), startedAt, loadStart },
    { duration, connections, pin },
    results,
  );
  await stopAll();
  return 0;
});
