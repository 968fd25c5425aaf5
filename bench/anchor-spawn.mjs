// The spawn anchor of B2 and B4 (bench/README.md): a small, separate Node process (plain JS, no loader)
// that spawns a program N times with C in flight and reaps it, stdio ignored. It prints one JSON line and exits:
//
//   node bench/anchor-spawn.mjs N C [program [args…]]      default program /bin/true
//   → {"n":N,"concurrency":C,"program":"/bin/true","seconds":…,"perSec":…,
//      "startMs":{"p50":…,"p99":…,"max":…},"exitMs":{"p50":…,"p99":…,"max":…},"failed":0}
//
// startMs: from spawn() until its 'spawn' event (the child exists and exec succeeded); exitMs: from spawn() until
// 'exit'. With C = 1 the spawns are sequential, which is the spawn latency anchor of B4.
import { spawn } from 'node:child_process';

const n = Number(process.argv[2] ?? 3000);
const concurrency = Number(process.argv[3] ?? 8);
const program = process.argv[4] ?? '/bin/true';
const args = process.argv.slice(5);
if (!Number.isSafeInteger(n) || n < 1 || !Number.isSafeInteger(concurrency) || concurrency < 1) {
  process.stderr.write('usage: node bench/anchor-spawn.mjs N CONCURRENCY [program [args…]]\n');
  process.exit(1);
}

const startMs = [];
const exitMs = [];
let failed = 0;
let next = 0;

function one() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(program, args, { stdio: 'ignore' });
    child.once('spawn', () => startMs.push(performance.now() - t0));
    child.once('error', () => {
      failed++;
      resolve();
    });
    child.once('exit', (code) => {
      exitMs.push(performance.now() - t0);
      if (code !== 0) failed++;
      resolve();
    });
  });
}

async function worker() {
  while (next < n) {
    next++;
    await one();
  }
}

const quantile = (xs, q) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
const summary = (xs) => ({ p50: quantile(xs, 0.5), p99: quantile(xs, 0.99), max: quantile(xs, 1) });

const t0 = performance.now();
await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(
  `${JSON.stringify({
    n,
    concurrency,
    program,
    seconds,
    perSec: n / seconds,
    startMs: summary(startMs),
    exitMs: summary(exitMs),
    failed,
    rssBytes: process.memoryUsage.rss(),
  })}\n`,
);
