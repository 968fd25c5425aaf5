import { appendFileSync } from 'node:fs';
import { loopDelayMonitor } from './loop-delay.ts';

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/**
 * Measures this process for benchmarks (enabled by MILLRACE_STATS_FILE): every second appends one JSON line
 * `{time, rssBytes, eventLoopDelayP50Ms, eventLoopDelayP99Ms, eventLoopDelayMaxMs}` to `file`, the event-loop delay
 * being that of the second just ended (src/loop-delay.ts; reset after each line). Returns the function that stops it
 * (writing a last line for the part-second since the previous one).
 */
export function startRuntimeStats(file: string): () => void {
  const loop = loopDelayMonitor();
  const write = () => {
    const line = {
      time: Date.now(),
      rssBytes: process.memoryUsage.rss(),
      eventLoopDelayP50Ms: round(loop.percentileMs(50)),
      eventLoopDelayP99Ms: round(loop.percentileMs(99)),
      eventLoopDelayMaxMs: round(loop.maxMs()),
    };
    loop.reset();
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      // A benchmark aid: a missing folder must not disturb the server.
    }
  };
  const timer = setInterval(write, 1000);
  timer.unref();
  // Under `node --expose-gc`, SIGUSR2 collects garbage at once: a benchmark's RSS anchor must not depend on where
  // the heap stands in its cycle (B11's came out far apart a few seconds later).
  const global: { gc?: () => void } = globalThis;
  const gc = global.gc;
  const collect = () => gc?.();
  if (gc) process.on('SIGUSR2', collect);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    process.off('SIGUSR2', collect);
    write();
    loop.stop();
  };
}
