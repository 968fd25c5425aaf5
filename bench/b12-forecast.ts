/**
 * Benchmark B12: the forecast of 1,000 recurrences for 7 days, against the job list in the same run.
 *
 *   npm run bench:b12                              # 1,000 definitions, 7 days (about 88,000 starts)
 *   npm run bench:b12 -- --definitions 200 --samples 20    # quick run
 *
 * 1. `millrace serve` starts on a fresh data folder (SQLite) under --expose-gc with its statistics file (event-loop
 *    delay and RSS once a second, src/runtime-stats.ts). Through the JSON interface: a TimeWindow Office (Monday to
 *    Friday 09:00–17:00 Europe/Amsterdam, DisabledDuring the Dutch public holidays, and shifting: a day of three
 *    closing days in the week opens on the next Dutch working day instead), two SubmitFrames
 *    (every hour; every day at 06:00 Europe/Amsterdam), and N BASH definitions, half hourly and half daily, one in
 *    ten with TimeWindow Office (its starts wait for the office to open). One recurrence of each is submitted to
 *    start tomorrow (the hourly ones at every minute of the hour, 60 anchors), so nothing runs meanwhile: N jobs
 *    wait, and the forecast of the 7 days after tomorrow holds about N/2 × 168 + N/2 × 7 starts.
 * 2. First page: `GET /forecast?From&Until&Limit=1000` against `GET /Job?Limit=1000` (the N waiting jobs), sequential
 *    on one keep-alive connection, interleaved, after a warm-up; p99 of each and their ratio (target <= 2).
 * 3. The walk: every page of the forecast (Limit=1000, following `next`) while a probe GETs one object at 20/s. The
 *    longest event-loop block is the largest per-second maximum delay in the statistics file over the walk (target
 *    < 50 ms); RSS: the largest VmRSS sampled every 50 ms during the walk against the idle RSS after a full garbage
 *    collection just before it (target < 50 MiB above). The walk's entries are counted and checked to be in order.
 */
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loopDelay, sampleRss, statsBetween } from './agent-harness.ts';
import { memoryOf, pinSelf, startServe, stop } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { startProbe } from './lib/get-probe.ts';
import { count } from './lib/options.ts';
import { dist, fixed, int, say } from './lib/report.ts';

const TARGET_RATIO = 2;
const TARGET_BLOCK_MS = 50;
const TARGET_RSS_MIB = 50;
const DAY = 86_400_000;

benchmark({
  script: 'bench:b12',
  title: 'B12 forecast',
  about:
    'B12: the forecast of N recurrences (half hourly, half daily, one in ten behind a window) for 7 days: first page ' +
    'p99 against GET /Job?Limit=1000, the longest event-loop block and the RSS while walking every page.',
  options: {
    definitions: count(1000, 'definitions with a recurrence each', { min: 10, env: 'BENCH_DEFINITIONS' }),
    samples: count(100, 'requests of each first-page target', { min: 10, env: 'BENCH_SAMPLES' }),
    days: count(7, 'days forecast', { min: 1, max: 366 }),
  },
  pin: 'servers',
  target: `first page p99 ÷ job list p99 > ${TARGET_RATIO}, a block >= ${TARGET_BLOCK_MS} ms or RSS >= ${TARGET_RSS_MIB} MiB above idle`,
  async run({ opts, work, apiKey }) {
    const statsFile = join(work, 'stats.ndjson');
    const serve = await startServe({
      pin: opts.pin,
      dataDir: join(work, 'data'),
      apiKey,
      statsFile,
      nodeFlags: ['--expose-gc'],
    });
    if (opts.pin) pinSelf(1);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const call = (method: string, path: string, body?: unknown) =>
      new Promise<{ status: number; text: string }>((done, fail) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const headers: Record<string, string> = { 'x-api-key': apiKey };
        if (payload !== undefined) headers['content-type'] = 'application/json';
        const req = request(`${serve.base}${path}`, { method, agent, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', fail);
        });
        req.on('error', fail);
        req.end(payload);
      });
    const must = async (method: string, path: string, body?: unknown) => {
      const res = await call(method, path, body);
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
      return res.text;
    };

    // The workload.
    const t0 = performance.now();
    const tomorrow = Math.ceil(Date.now() / DAY) * DAY + DAY;
    // Closing days within the week, so that the Office window's shifting happens during the measured range.
    const closing = [0, 2, 4].map((d) => {
      const at = new Date(tomorrow + d * DAY).toISOString().slice(0, 10);
      return { FromDate: `${at}T00:00:00Z`, UntilDate: `${at}T00:00:00Z` };
    });
    const AMS = 'Europe/Amsterdam';
    await must('POST', '/TimeWindow/GLOBAL.HolidaysNL', { TimeZone: AMS, Holidays: 'NL' });
    await must('POST', '/TimeWindow/GLOBAL.ClosingDays', { TimeZone: AMS, Elements: closing });
    await must('POST', '/TimeWindow/GLOBAL.WorkdaysNL', {
      TimeZone: AMS,
      Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }],
      DisabledDuring: 'GLOBAL.HolidaysNL',
    });
    await must('POST', '/TimeWindow/GLOBAL.Office', {
      TimeZone: AMS,
      Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '09:00', UntilTime: '17:00' }],
      DisabledDuring: 'GLOBAL.HolidaysNL',
      Workdays: 'GLOBAL.WorkdaysNL',
      ShiftWhen: 'GLOBAL.ClosingDays',
      ShiftWorkdays: 1,
    });
    await must('POST', '/SubmitFrame/GLOBAL.Hourly', {
      TimeZone: 'UTC',
      Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }],
    });
    await must('POST', '/SubmitFrame/GLOBAL.Daily', {
      TimeZone: 'Europe/Amsterdam',
      Elements: [{ Kind: 'Every', Every: 1, Unit: 'Days', StartTime: '06:00' }],
    });
    const start = new Date(tomorrow).toISOString();
    const make = async (i: number) => {
      const name = `GLOBAL.B12_${String(i).padStart(4, '0')}`;
      await must('POST', `/JobDefinition/${name}`, {
        JobDefinitionType: 'BASH',
        Script: 'true',
        ...(i % 10 === 0 ? { TimeWindow: 'GLOBAL.Office' } : {}),
      });
      // Hourly ones at every minute of the hour (60 anchors), so their series are not all one computation.
      const frame = i % 2 === 0 ? 'GLOBAL.Hourly' : 'GLOBAL.Daily';
      const at = new Date(tomorrow + (i % 60) * 60_000).toISOString();
      await must('POST', `/Job/${name}`, { SubmitFrame: frame, RequestedStartTime: at });
    };
    for (let i = 0; i < opts.definitions; i += 4)
      await Promise.all([i, i + 1, i + 2, i + 3].filter((j) => j < opts.definitions).map(make));
    say(
      `workload: ${int(opts.definitions)} definitions and recurrences (half hourly, half daily at 06:00 ` +
        `Europe/Amsterdam; ${int(Math.ceil(opts.definitions / 10))} behind TimeWindow Office: Dutch holidays ` +
        `off, closing days shifted to the next working day) made in ${fixed((performance.now() - t0) / 1000, 1)} s`,
    );

    const range = `From=${start}&Until=${new Date(tomorrow + opts.days * DAY).toISOString()}`;
    const targets = [
      { name: 'GET /Job?Limit=1000', path: '/Job?Limit=1000' },
      { name: 'forecast first page', path: `/forecast?${range}&Limit=1000` },
    ];
    const timed = async (path: string) => {
      const t = performance.now();
      await must('GET', path);
      return performance.now() - t;
    };
    for (const t of targets) for (let i = 0; i < 10; i++) await timed(t.path);
    const samples = targets.map(() => [] as number[]);
    for (let i = 0; i < opts.samples; i++)
      for (const [k, t] of targets.entries()) samples[k]?.push(await timed(t.path));
    const [list, first] = samples.map(dist) as [ReturnType<typeof dist>, ReturnType<typeof dist>];
    const ratio = first.p99 / list.p99;

    // The walk.
    process.kill(serve.proc.pid, 'SIGUSR2'); // a full collection: the idle RSS does not depend on the heap's cycle
    await sleep(2000);
    const idleMiB = memoryOf(serve.proc.pid).rssMiB;
    const probe = startProbe(`${serve.base}/Queue/GLOBAL.System`, apiKey, 20);
    await sleep(1000);
    const rss = sampleRss(serve.proc.pid, 50);
    const walkFrom = Date.now();
    const w0 = performance.now();
    let pages = 0;
    let entries = 0;
    let last = '';
    let after = '';
    for (;;) {
      const page = JSON.parse(await must('GET', `/forecast?${range}&Limit=1000${after}`)) as {
        items: Array<{ Start: string }>;
        next: string | null;
      };
      pages++;
      for (const e of page.items) {
        if (e.Start < last) throw new Error(`the forecast is out of order at ${e.Start} after ${last}`);
        last = e.Start;
      }
      entries += page.items.length;
      if (page.next === null) break;
      after = `&After=${page.next}`;
    }
    const walkMs = performance.now() - w0;
    const walkTo = Date.now();
    const peak = rss.stop();
    const probed = await probe.stop();
    agent.destroy();
    await sleep(1200); // the statistics line of the walk's last second
    const loop = loopDelay(statsBetween(statsFile, walkFrom, walkTo));
    await stop(serve.proc);
    const peakMiB = peak.maxBytes / 1048576;
    const probeMs = dist(probed.filter((s) => s.at >= walkFrom && s.at <= walkTo).map((s) => s.ms));

    say(
      '',
      `first page (${opts.samples} sequential samples each, interleaved; ` +
        `${opts.pin ? 'server on core 0, client on core 1' : 'UNPINNED'}):`,
      `  GET /Job?Limit=1000      p50 ${fixed(list.p50, 1)} ms  p99 ${fixed(list.p99, 1)} ms`,
      `  forecast Limit=1000      p50 ${fixed(first.p50, 1)} ms  p99 ${fixed(first.p99, 1)} ms`,
      `  ratio forecast p99 ÷ job list p99: ${fixed(ratio, 2)} (target <= ${TARGET_RATIO})`,
      '',
      `walk: ${int(entries)} starts in ${pages} pages in ${fixed(walkMs / 1000, 1)} s ` +
        `(${fixed(walkMs / pages, 0)} ms a page)`,
      `  event loop: longest block ${fixed(loop.max, 1)} ms (target < ${TARGET_BLOCK_MS}), worst second's p99 ` +
        `${fixed(loop.worstP99, 1)} ms over ${loop.seconds} s`,
      `  probe GET /Queue/GLOBAL.System at 20/s meanwhile: p50 ${fixed(probeMs.p50, 1)} ms, p99 ` +
        `${fixed(probeMs.p99, 1)} ms, max ${fixed(probeMs.max, 1)} ms`,
      `  server RSS: idle ${fixed(idleMiB, 0)} MiB, peak during the walk ${fixed(peakMiB, 0)} MiB ` +
        `(+${fixed(peakMiB - idleMiB, 0)} MiB, target < ${TARGET_RSS_MIB})`,
    );
    const meets =
      ratio <= TARGET_RATIO && loop.max < TARGET_BLOCK_MS && peakMiB - idleMiB < TARGET_RSS_MIB && entries > 0;
    return {
      summary:
        `B12 definitions=${opts.definitions} days=${opts.days} entries=${entries} list_p99=${fixed(list.p99, 1)} ` +
        `first_p99=${fixed(first.p99, 1)} ratio=${fixed(ratio, 2)} block_max=${fixed(loop.max, 1)} ` +
        `rss_above_idle=${fixed(peakMiB - idleMiB, 0)}`,
      meets,
      results: { list, first, ratio, entries, pages, walkMs, loop, probe: probeMs, idleMiB, peakMiB },
    };
  },
});
