/**
 * Dashboard under load: B1's in-server no-op jobs drained with the job monitor open in Chromium,
 * against the same drain with no page open, in the same run. It shows that the page keeps up with thousands of
 * job updates a second by batching the feed (events per repaint) and that it does not slow the engine.
 *
 *   npm run bench:ui-feed                       # 2 reps × 5,000 jobs, SQLite
 *   npm run bench:ui-feed -- --jobs 20000 --reps 3
 *
 * Each repetition starts `millrace serve` on a fresh data folder, adds a user with a password through the CLI,
 * then submits N × `POST …/Job/GLOBAL.System_Sleep` (MilliSeconds 0) at concurrency 20 over keep-alive HTTP and
 * polls `GET …/Job?Status=<every non-final status>&Limit=1` until nothing is left: jobs/s = N ÷ (first submit →
 * that poll). "page" runs do the same with Chromium signed in and showing the job monitor; afterwards the page
 * reports the feed events it received, the batches (repaints) they came in, and its long tasks (> 50 ms).
 * Output: medians of jobs/s without and with the page and their ratio (target ≥ 0.9), events per batch.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { FINAL } from '../src/domain/job-status.ts';
import { JOB_STATUS_NAMES } from '../src/model/fields.ts';
import { ROOT, startServe, stop } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { count } from './lib/options.ts';
import { fixed, int, median, say } from './lib/report.ts';

const PASSWORD = 'ui-bench-password-0123';
const PENDING = JOB_STATUS_NAMES.filter((s) => !FINAL.includes(s)).join(',');

interface Run {
  jobsPerSecond: number;
  events?: number;
  batches?: number;
  longTaskMs?: number;
}

async function drain(base: string, apiKey: string, jobs: number): Promise<number> {
  const headers = { 'X-API-Key': apiKey, 'Content-Type': 'application/json' };
  const body = JSON.stringify({ JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] });
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < jobs) {
      next += 1;
      const res = await fetch(`${base}/Job/GLOBAL.System_Sleep?fields=jobId`, { method: 'POST', headers, body });
      if (res.status !== 201) throw new Error(`submit answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  for (;;) {
    const res = await fetch(`${base}/Job?Status=${PENDING}&Limit=1&fields=jobId`, { headers });
    const page = (await res.json()) as { items: unknown[] };
    if (page.items.length === 0) break;
    await sleep(50);
  }
  return jobs / ((performance.now() - t0) / 1000);
}

async function once(withPage: boolean, dataDir: string, apiKey: string, jobs: number): Promise<Run> {
  const serve = await startServe({ pin: false, dataDir, apiKey });
  try {
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'bin/millrace'),
        'user',
        'add',
        'bench',
        '--role',
        'Operator',
        '--password',
        PASSWORD,
        '--data',
        dataDir,
      ],
      { stdio: 'ignore' },
    );
    if (!withPage) return { jobsPerSecond: await drain(serve.base, apiKey, jobs) };
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`${serve.origin}/millrace/ui/`);
      // The CLI's user reaches the server's cache within seconds: retry the sign-in until it works.
      await page.locator('#signin').waitFor();
      for (let i = 0; ; i += 1) {
        await page.fill('#user', 'bench');
        await page.fill('#password', PASSWORD);
        await page.click('#signin button[type=submit]');
        const signedIn = await page
          .locator('#who', { hasText: 'bench' })
          .waitFor({ timeout: 3000 })
          .then(
            () => true,
            () => false,
          );
        if (signedIn) break;
        if (i > 10) throw new Error('could not sign in');
        await page.waitForTimeout(500);
      }
      await page.locator('#feed-state.on').waitFor({ timeout: 30_000 });
      await page.evaluate(() => {
        const w = window as unknown as { longTaskMs: number };
        w.longTaskMs = 0;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) w.longTaskMs += e.duration;
        }).observe({ type: 'longtask' });
      });
      const jobsPerSecond = await drain(serve.base, apiKey, jobs);
      await page.waitForTimeout(1000);
      const stats = await page.evaluate(() => {
        const el = document.getElementById('feed-state') as HTMLElement;
        return {
          events: Number(el.dataset.events ?? 0),
          batches: Number(el.dataset.batches ?? 0),
          longTaskMs: (window as unknown as { longTaskMs: number }).longTaskMs,
        };
      });
      return { jobsPerSecond, ...stats };
    } finally {
      await browser.close();
    }
  } finally {
    await stop(serve.proc);
  }
}

benchmark({
  script: 'bench:ui-feed',
  title: 'dashboard under load',
  about:
    "B1's no-op jobs drained with the job monitor open in Chromium, against the same drain with no page open, in " +
    'the same run; and the feed events per repaint the page saw.',
  options: {
    jobs: count(5000, 'no-op jobs per drain'),
    reps: count(2, 'repetitions, each without and then with the page'),
  },
  target: 'the ratio with ÷ without the page is below 0.9',
  async run({ opts, work, apiKey }) {
    const without: Run[] = [];
    const withPage: Run[] = [];
    for (let r = 0; r < opts.reps; r += 1) {
      without.push(await once(false, join(work, `${r}-without`), apiKey, opts.jobs));
      const w = await once(true, join(work, `${r}-page`), apiKey, opts.jobs);
      withPage.push(w);
      say(
        `rep ${r + 1}: without page ${int(without.at(-1)?.jobsPerSecond ?? 0)} jobs/s, with page ${int(w.jobsPerSecond)} jobs/s; ` +
          `page got ${int(w.events ?? 0)} events in ${int(w.batches ?? 0)} batches, long tasks ${int(w.longTaskMs ?? 0)} ms`,
      );
    }
    const a = median(without.map((r) => r.jobsPerSecond));
    const b = median(withPage.map((r) => r.jobsPerSecond));
    const perBatch = median(withPage.map((r) => (r.events ?? 0) / Math.max(1, r.batches ?? 0)));
    say(
      '',
      `${int(opts.jobs)} no-op jobs × ${opts.reps} reps`,
      `without page: ${int(a)} jobs/s   with the job monitor open: ${int(b)} jobs/s   ratio ${fixed(b / a, 2)}`,
      `feed events per repaint (median): ${fixed(perBatch, 1)}`,
    );
    return {
      summary:
        `dashboard under load, ${int(opts.jobs)} no-op jobs × ${opts.reps} reps: ${fixed(perBatch, 1)} feed events per ` +
        `repaint; without page ${int(a)} jobs/s, with the job monitor open ${int(b)} jobs/s, ratio ${fixed(b / a, 2)} ` +
        '(target >= 0.9)',
      meets: b / a >= 0.9,
      results: { without, withPage, medians: { without: a, withPage: b, ratio: b / a, eventsPerRepaint: perBatch } },
    };
  },
});
