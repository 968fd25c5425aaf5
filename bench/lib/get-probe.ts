import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

/**
 * A GET probe for the benchmarks that ask how long other requests wait while something big runs (B8's import and
 * export, B11's running jobs): GETs of one URL with an API key at a fixed rate.
 */

/** A probe's answers: when each GET was sent (epoch ms), how long its answer took (ms), whether it failed. */
export type Samples = Array<{ at: number; ms: number; status: number }>;

/**
 * The probe, in a worker thread of its own: a harness's main thread is busy too (B11 polls a jobs table of 50,000
 * rows, tens of ms a poll), and an answer that arrived meanwhile would be timed late. Plain JS, so it needs no loader.
 */
const PROBE = `
const { parentPort, workerData: { url, apiKey, rate } } = require('node:worker_threads');
const samples = [];
const pending = new Set();
const timer = setInterval(() => {
  const t0 = performance.now();
  const at = Date.now();
  const done = (status) => samples.push({ at, ms: performance.now() - t0, status });
  const p = fetch(url, { headers: { 'X-API-Key': apiKey } })
    .then(async (r) => { await r.arrayBuffer(); done(r.status); }, () => done(0))
    .finally(() => pending.delete(p));
  pending.add(p);
}, 1000 / rate);
parentPort.once('message', async () => {
  clearInterval(timer);
  await Promise.all(pending);
  parentPort.postMessage(samples);
});
`;

/** GETs `url` at a fixed rate (open loop, so a stalled server shows as long answers rather than fewer requests). */
export function startProbe(url: string, apiKey: string, rate: number): { stop(): Promise<Samples> } {
  const worker = new Worker(PROBE, { eval: true, workerData: { url, apiKey, rate } });
  return {
    async stop() {
      const got = once(worker, 'message');
      worker.postMessage('stop');
      const [samples] = (await got) as [Samples];
      await worker.terminate();
      return samples;
    },
  };
}
