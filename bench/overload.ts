/**
 * Benchmark: overload at 500 connections. autocannon drives GETs of the JSON interface (API key)
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
 * other limit is the default.
 */
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULTS, interfacePaths } from '../src/config/config.ts';
import { type AutocannonResult, autocannon, startServe } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { amount, count } from './lib/options.ts';
import { fixed, int, quantile, say, Table } from './lib/report.ts';

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

interface Run {
  name: string;
  cannon: AutocannonResult;
  health: Probe;
  shed: number;
  healthP99: number;
}

const p99 = (xs: number[]) => quantile(xs, 0.99);

benchmark({
  script: 'bench:overload',
  title: 'overload',
  about:
    'GETs of the JSON and then the XML interface at 500 connections, while a health path is ' +
    'probed one request at a time; its p99 under load against its p99 on the idle server in the same run.',
  options: {
    duration: amount(20, 'seconds of load per interface', { min: 1, env: 'BENCH_DURATION' }),
    connections: count(500, 'autocannon connections', { env: 'BENCH_CONNECTIONS' }),
  },
  pin: 'servers',
  async run({ opts, work, apiKey }) {
    const { duration, connections, pin } = opts;
    const serve = await startServe({
      pin,
      dataDir: join(work, 'data'),
      apiKey,
      env: { MILLRACE_ADMIN_PASSWORD: PASSWORD, MILLRACE_MAX_CONNECTIONS_PER_ADDRESS: '2000' },
    });
    const paths = interfacePaths(DEFAULTS);
    const health = `${serve.origin}${paths.root}/health/live`;

    // Anchor: the health probe on the idle server.
    let until = performance.now() + 5000;
    const idle = await probe(health, () => performance.now() > until, 10);
    const idleP99 = p99(idle.latencies);

    const runs: Run[] = [];
    const targets = {
      json: { url: `${serve.base}/Queue/GLOBAL.System`, headers: { 'X-API-Key': apiKey } },
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
      const h = await probe(health, () => loaded || performance.now() > until, 20);
      const c = await cannon;
      runs.push({
        name,
        cannon: c,
        health: h,
        shed: c.statusCodeStats?.['503']?.count ?? 0,
        healthP99: p99(h.latencies),
      });
      await sleep(2000);
    }

    const table = new Table<Run>([
      ['interface', 9, (r) => r.name],
      ['requests', 8, (r) => int(r.cannon.requests.total)],
      ['2xx', 7, (r) => int(r.cannon['2xx'])],
      ['503 shed', 9, (r) => int(r.shed)],
      ['other', 6, (r) => int(r.cannon.non2xx - r.shed)],
      ['errors', 7, (r) => int(r.cannon.errors)],
      ['timeouts', 9, (r) => int(r.cannon.timeouts)],
      ['p99 ms', 7, (r) => fixed(r.cannon.latency.p99, 0)],
      ['health p99 ms', 14, (r) => fixed(r.healthP99, 1)],
      ['ratio to idle', 14, (r) => fixed(r.healthP99 / idleP99, 1)],
      ['health failures', 16, (r) => `${r.health.failures}/${r.health.latencies.length}`],
    ]);
    say(
      `Overload at c=${connections}, ${duration} s per interface; server on core 0, autocannon on core 1${pin ? '' : ' (not pinned)'}`,
      `health probe on the idle server (anchor): p99 ${fixed(idleP99, 2)} ms over ${idle.latencies.length} requests`,
      '',
      table.header(),
      ...runs.map((r) => table.line(r)),
    );
    return {
      summary:
        `overload c=${connections}, ${duration} s per interface: ` +
        runs
          .map(
            (r) =>
              `${r.name} p99 ${fixed(r.cannon.latency.p99, 0)} ms, ${int(r.shed)} shed, ${int(r.cannon.errors)} errors, ` +
              `${int(r.cannon.timeouts)} timeouts, health p99 ${fixed(r.healthP99, 1)} ms (${fixed(r.healthP99 / idleP99, 1)} × idle)`,
          )
          .join(' | '),
      results: {
        idleHealthP99Ms: idleP99,
        ...Object.fromEntries(
          runs.map((r) => [
            r.name,
            {
              requests: r.cannon.requests.total,
              ok: r.cannon['2xx'],
              shed: r.shed,
              otherNon2xx: r.cannon.non2xx - r.shed,
              errors: r.cannon.errors,
              timeouts: r.cannon.timeouts,
              p99Ms: r.cannon.latency.p99,
              healthP99Ms: r.healthP99,
              healthMaxMs: Math.max(...r.health.latencies),
              healthFailures: r.health.failures,
              healthRequests: r.health.latencies.length,
              healthStatuses: r.health.statuses,
            },
          ]),
        ),
      },
    };
  },
});
