/**
 * Benchmark: the server's peak RSS under hostile imports. One crafted archive of 33 entries,
 * each inflating to 15 MiB at about 89:1 (about 5.5 MiB in all, within every per-archive cap), is sent by
 * `POST /Import` once alone (the anchor) and then 8 times at once. The server's RSS is sampled every 20 ms from
 * /proc until every import job has ended; reported: idle RSS, peak RSS above idle for 1 and for 8 imports, their
 * ratio (1.0 means the imports were read one at a time), and the limit README states (1 GiB above idle).
 *
 *   npm run bench:import-memory                      # 8 concurrent imports
 *   npm run bench:import-memory -- --concurrent 16 --json out.json
 *
 * The entries are Queues whose Description is 15 MiB: every import is read and parsed in full and then refused
 * (Description is at most 255 characters), as a user who may create nothing would have it.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { deflateRawSync } from 'node:zlib';
import { writeCar } from '../src/car/archive-writer.ts';
import { memoryOf, startServe } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { count } from './lib/options.ts';
import { fixed, say } from './lib/report.ts';

const MiB = 1024 * 1024;
const LIMIT_ABOVE_IDLE_MiB = 1024;
/** One random letter every SPACING spaces: about 89:1 with deflate, under the 100:1 cap. */
const SPACING = 220;

/** A Queue entry of `size` bytes whose Description compresses about 89:1 (random letters among spaces). */
function hostileEntry(i: number, size: number): Buffer {
  const head = `<?xml version="1.0"?><Queue><Name>Hostile${i}</Name><Partition type="Partition" path="GLOBAL"/><Description>`;
  const tail = '</Description></Queue>';
  const body = Buffer.alloc(size - head.length - tail.length, 0x20);
  const noise = randomBytes(Math.ceil(body.length / SPACING));
  for (let j = 0; j < noise.length; j++) body[j * SPACING] = 0x61 + ((noise[j] as number) % 26);
  return Buffer.concat([Buffer.from(head), body, Buffer.from(tail)]);
}

benchmark({
  script: 'bench:import-memory',
  title: 'hostile imports',
  about:
    "The server's peak RSS while one crafted archive (33 entries of 15 MiB at about 89:1) is " +
    'imported alone (the anchor) and then by several requests at once.',
  options: { concurrent: count(8, 'imports sent at once after the one alone', { env: 'BENCH_CONCURRENT' }) },
  pin: 'servers',
  target: `the concurrent imports add more than ${LIMIT_ABOVE_IDLE_MiB} MiB above idle (the limit README states)`,
  async run({ opts, work, apiKey }) {
    const { concurrent } = opts;
    const entries = Array.from({ length: 33 }, (_, i) => ({
      name: `Queue/GLOBAL.Hostile${i}.xml`,
      data: hostileEntry(i, 15 * MiB),
    }));
    const first = entries[0]?.data as Buffer;
    const ratio = first.length / deflateRawSync(first).length;
    const car = await writeCar(entries);
    entries.length = 0;

    const serve = await startServe({ pin: opts.pin, dataDir: join(work, 'data'), apiKey });
    const pid = serve.proc.pid;
    const headers = { 'X-API-Key': apiKey, 'Content-Type': 'application/zip' };
    await sleep(2000);
    const idle = memoryOf(pid).rssMiB;

    /** Sends `n` imports at once and samples RSS until every job has ended; returns the peak RSS seen. */
    const round = async (n: number) => {
      let peak = memoryOf(pid).rssMiB;
      let done = false;
      const sampler = (async () => {
        while (!done) {
          peak = Math.max(peak, memoryOf(pid).rssMiB);
          await sleep(20);
        }
      })();
      const answers = await Promise.all(
        Array.from({ length: n }, () =>
          fetch(`${serve.base}/Import?WaitForCompletion=true`, {
            method: 'POST',
            headers,
            body: new Uint8Array(car),
          }).then(async (r) => ({ status: r.status, body: await r.text() })),
        ),
      );
      done = true;
      await sampler;
      return { peak, statuses: answers.map((a) => a.status) };
    };

    const one = await round(1);
    await sleep(2000);
    const many = await round(concurrent);
    const oneAbove = one.peak - idle;
    const manyAbove = many.peak - idle;
    const held = manyAbove <= LIMIT_ABOVE_IDLE_MiB;
    say(
      `Hostile archive: ${(car.length / MiB).toFixed(1)} MiB, 33 entries of 15 MiB at ${ratio.toFixed(0)}:1`,
      `idle RSS ${fixed(idle, 0)} MiB`,
      `1 import:  peak ${fixed(one.peak, 0)} MiB (${fixed(oneAbove, 0)} above idle), answers ${one.statuses.join(' ')}`,
      `${concurrent} imports: peak ${fixed(many.peak, 0)} MiB (${fixed(manyAbove, 0)} above idle), answers ${many.statuses.join(' ')}`,
      `ratio ${concurrent} ÷ 1 (above idle): ${fixed(manyAbove / oneAbove, 2)}; limit ${LIMIT_ABOVE_IDLE_MiB} MiB above idle: ${held ? 'held' : 'EXCEEDED'}`,
    );
    return {
      summary:
        `hostile imports: idle ${fixed(idle, 0)} MiB, 1 import +${fixed(oneAbove, 0)} MiB, ${concurrent} at once ` +
        `+${fixed(manyAbove, 0)} MiB (ratio ${fixed(manyAbove / oneAbove, 2)}; limit ${LIMIT_ABOVE_IDLE_MiB} MiB above idle)`,
      meets: held,
      results: { idleMiB: idle, onePeakMiB: one.peak, manyPeakMiB: many.peak, manyStatuses: many.statuses, ratio },
    };
  },
});
