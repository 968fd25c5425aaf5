/**
 * Benchmark B17 (bench/README.md): what the audit trail costs (docs/architecture.md §18).
 *
 *   npm run bench:b17                                        # 3 reps × 10,000 jobs each way; 1,000,000 entries
 *   npm run bench:b17 -- --jobs 2000 --reps 1 --entries 100000 --samples 100      # quick run
 *
 * 1. Drain: N × `POST …/Job/GLOBAL.System_Sleep` (MilliSeconds 0) at concurrency 50 over keep-alive HTTP into a fresh
 *    `millrace serve` (SQLite, core 0) with job actions audited (the default: every submit writes an entry) or not
 *    (`--no-audit-job-actions`), repetitions interleaved (every other one in reverse order), each after 500 untimed
 *    jobs. Drain jobs/s = N ÷ (first submit → the 50 ms poll of the jobs table that sees all N Completed), and the
 *    server's CPU time per job. Reported: the medians and the cost 1 − audited ÷ not audited (target < 5 %).
 * 2. Reads: E entries are appended through the store (transactions of 10,000, hash-chained as the server writes
 *    them; a tenth by another user). The server starts again; sequential requests (one keep-alive connection,
 *    client on core 1) of the first page of `GET /AuditEntry?Limit=100`, of the page after the oldest 100 entries'
 *    cursor (the deepest page), and of the deepest page filtered by User, interleaved round by round after 50 of each.
 *    Reported: p50 and p99 of each, and deepest p99 ÷ first p99 (target <= 2).
 */
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import { pinSelf, startServe, stop } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { drainCost } from './lib/drain-cost.ts';
import { count } from './lib/options.ts';
import { dist, fixed, int, pct, say, Table } from './lib/report.ts';

const TARGET_COST = 0.05;
const TARGET_RATIO = 2;
const CHUNK = 10_000;

/** Appends `n` entries through the store, as the server writes them (a change of a definition each). */
async function insertEntries(dataDir: string, n: number): Promise<number> {
  const t0 = performance.now();
  const store = await openStore({ dataDir });
  try {
    const start = Date.now() - 300 * 24 * 3600_000;
    for (let done = 0; done < n; done += CHUNK) {
      const size = Math.min(CHUNK, n - done);
      await store.transaction(async (tx) => {
        for (let i = 0; i < size; i++) {
          const k = done + i;
          await tx.audit.add({
            time: start + Math.floor((k * 299 * 24 * 3600_000) / n),
            actor: { user: k % 10 === 0 ? 'bob' : 'alice', interface: 'json', address: '10.0.0.7', apiKeyId: 'k1' },
            action: 'update',
            object: { type: 'JobDefinition', key: `GLOBAL.Def${k % 5000}`, uniqueId: 1000 + (k % 5000) },
            detail: null,
            diff: { Priority: { before: k % 100, after: (k + 1) % 100 } },
            restore: { Priority: k % 100, Script: 'echo bench' },
          });
        }
      });
    }
    return (performance.now() - t0) / 1000;
  } finally {
    await store.close();
  }
}

type Stats = ReturnType<typeof dist> & { n: number; bytes: number };

const reads = new Table<Stats & { name: string }>([
  ['target', 44, (s) => s.name],
  ['n', 6, (s) => int(s.n)],
  ['p50 ms', 8, (s) => fixed(s.p50, 2)],
  ['p99 ms', 8, (s) => fixed(s.p99, 2)],
  ['bytes', 8, (s) => int(s.bytes)],
]);

const cursor = (id: number) => Buffer.from(`a:${id}`, 'utf8').toString('base64url');

benchmark({
  script: 'bench:b17',
  title: 'B17 audit trail cost',
  about:
    'B17: no-op jobs drained with job actions audited against not audited, and GET /AuditEntry deep in a long ' +
    'log against its first page, on the same server in the same run.',
  options: {
    jobs: count(10_000, 'timed jobs per drain', { env: 'BENCH_JOBS' }),
    reps: count(3, 'drain repetitions of each way, interleaved', { env: 'BENCH_REPS' }),
    entries: count(1_000_000, 'audit entries for the reads', { min: 1000, env: 'BENCH_ENTRIES' }),
    samples: count(300, 'requests of each read per round', { min: 10, env: 'BENCH_SAMPLES' }),
    rounds: count(3, 'rounds of the reads', { env: 'BENCH_ROUNDS' }),
  },
  pin: 'servers',
  target: `drain cost >= ${pct(TARGET_COST * 100)} or deepest p99 ÷ first p99 > ${TARGET_RATIO}`,
  async run({ opts, work, apiKey }) {
    const { rates, cpu, on, off, cost, cpuCost } = await drainCost({
      opts,
      work,
      apiKey,
      offArgs: ['--no-audit-job-actions'],
      labels: { on: 'audited', off: 'not audited' },
      targetCost: TARGET_COST,
    });

    // 2. Reads deep in a long log.
    const dataDir = join(work, 'log');
    const first = await startServe({ pin: opts.pin, dataDir, apiKey, serveArgs: ['--no-local-agent'] });
    await stop(first.proc);
    const seconds = await insertEntries(dataDir, opts.entries);
    say(`log: ${int(opts.entries)} entries appended through the store in ${fixed(seconds, 1)} s`);
    const serve = await startServe({ pin: opts.pin, dataDir, apiKey, serveArgs: ['--no-local-agent'] });
    if (opts.pin) pinSelf(1);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<{ status: number; text: string }>((done, fail) => {
        const req = request(`${serve.base}${path}`, { agent, headers: { 'x-api-key': apiKey } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', fail);
        });
        req.on('error', fail);
        req.end();
      });
    const top = JSON.parse((await get('/AuditEntry?Limit=1')).text) as { items: { Id: number }[] };
    const newest = top.items[0]?.Id ?? 0;
    if (newest < opts.entries) throw new Error(`the log holds ${newest} entries`);
    // The oldest entries are the first start's and the bench's first ones: the page after id 201 is the deepest.
    const deep = cursor(201);
    const targets = [
      { name: 'GET /AuditEntry?Limit=100 (first page)', path: '/AuditEntry?Limit=100' },
      { name: 'GET /AuditEntry?Limit=100&After=<deepest>', path: `/AuditEntry?Limit=100&After=${deep}` },
      {
        name: 'GET /AuditEntry?User=bob&Limit=100&After=…',
        path: `/AuditEntry?User=bob&Limit=100&After=${cursor(2001)}`,
      },
    ];
    const sizes = new Map<string, number>();
    for (const t of targets) {
      const res = await get(t.path);
      if (res.status !== 200) throw new Error(`${t.path}: ${res.status} ${res.text.slice(0, 300)}`);
      const items = (JSON.parse(res.text) as { items: unknown[] }).items;
      if (items.length === 0) throw new Error(`${t.path}: no entries`);
      sizes.set(t.name, Buffer.byteLength(res.text));
    }
    const once = async (path: string) => {
      const t0 = performance.now();
      const res = await get(path);
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      return performance.now() - t0;
    };
    for (const t of targets) for (let i = 0; i < 50; i++) await once(t.path);
    const samples = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < opts.rounds; round++)
      for (const t of targets) for (let i = 0; i < opts.samples; i++) samples.get(t.name)?.push(await once(t.path));
    agent.destroy();
    await stop(serve.proc);
    const of = (name: string): Stats => {
      const xs = samples.get(name) ?? [];
      return { ...dist(xs), n: xs.length, bytes: sizes.get(name) ?? 0 };
    };
    const [firstPage, deepest, byUser] = targets.map((t) => of(t.name)) as [Stats, Stats, Stats];
    const ratio = deepest.p99 / firstPage.p99;
    say(
      `sequential requests (1 connection, keep-alive), ${opts.rounds} round(s) × ${opts.samples} of each, ` +
        (opts.pin ? 'server on core 0, client on core 1' : 'UNPINNED'),
      '',
      reads.header(),
      ...targets.map((t) => reads.line({ name: t.name, ...of(t.name) })),
      '',
      `ratio deepest p99 ÷ first page p99: ${fixed(ratio, 2)} (target <= ${TARGET_RATIO})`,
    );
    return {
      summary:
        `B17 drain audited=${int(on)}/s off=${int(off)}/s cost=${pct(cost * 100)} cpu_cost=${pct(cpuCost * 100)} | ` +
        `entries=${opts.entries} first_p99=${fixed(firstPage.p99, 2)} deepest_p99=${fixed(deepest.p99, 2)} ` +
        `by_user_p99=${fixed(byUser.p99, 2)} ratio=${fixed(ratio, 2)}`,
      meets: cost < TARGET_COST && ratio <= TARGET_RATIO,
      results: { rates, cpu, on, off, cost, cpuCost, reads: { firstPage, deepest, byUser }, ratio },
    };
  },
});
