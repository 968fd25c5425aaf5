/**
 * Benchmark: verbose jobs. N BASH jobs at once, each writing B bytes to stdout through the local agent, and what
 * they cost the server's and the agent's memory: their RSS sampled from /proc every 50 ms while the jobs run and
 * their output is stored, against the same processes idle (the anchor, measured in the same run just before).
 * Then every job must be Completed with its whole output stored: the size, and a SHA-256 of the content read back
 * through `GET /JobFile/<id>/content` against one computed here (test/helpers/numbered-lines.ts).
 *
 *   npm run bench:verbose                                    # 8 jobs × 1 GiB, job files in the data folder
 *   npm run bench:verbose -- --job-files database            # … in the database (job_file_chunks)
 *   npm run bench:verbose -- --jobs 2 --mib 256 --database postgres://u@h/db   # an existing empty database
 *
 * The target (docs/architecture.md §7, backpressure): the server's and the agent's peak RSS each within 150 MiB of
 * idle, whatever the jobs write. The server and its agent run on core 0 (with --pin), this process on core 1.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { numberedLinesDigest, numberedLinesScript } from '../test/helpers/numbered-lines.ts';
import { createBashDefinition, localAgentPid, sampleRss } from './agent-harness.ts';
import { memoryOf, pinSelf, startServe } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { count, text } from './lib/options.ts';
import { fixed, say } from './lib/report.ts';

const MiB = 1024 * 1024;
const TARGET_ABOVE_IDLE_MiB = 150;

interface StoredFile {
  size: number;
  digest: string;
}

/** Streams a job's stdout.log from the server and hashes it. */
async function storedStdout(base: string, apiKey: string, jobId: number): Promise<StoredFile & { status: string }> {
  const headers = { 'X-API-Key': apiKey };
  const job = (await (await fetch(`${base}/Job/${jobId}`, { headers })).json()) as {
    Status: string;
    JobFiles: { uniqueId: number; Name: string; Size: number }[];
  };
  const file = job.JobFiles.find((f) => f.Name === 'stdout.log');
  if (!file) return { status: job.Status, size: 0, digest: '' };
  const res = await fetch(`${base}/JobFile/${file.uniqueId}/content`, { headers });
  if (res.status !== 200 || !res.body) throw new Error(`GET JobFile/${file.uniqueId}/content: ${res.status}`);
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of res.body) {
    hash.update(chunk);
    size += chunk.length;
  }
  if (size !== file.Size) throw new Error(`Job ${jobId}: JobFiles says ${file.Size} bytes, the content has ${size}`);
  return { status: job.Status, size, digest: hash.digest('hex') };
}

benchmark({
  script: 'bench:verbose',
  title: 'verbose jobs',
  about:
    'N BASH jobs at once each writing B bytes to stdout through the local agent: peak RSS of the server and of the ' +
    'agent against both idle, and every byte stored (size and SHA-256 read back).',
  options: {
    jobs: count(8, 'BASH jobs at once', { env: 'BENCH_JOBS' }),
    mib: count(1024, 'MiB each job writes to stdout', { env: 'BENCH_MIB' }),
    jobFiles: text('folder', 'where the server keeps job files: `folder` (its data folder) or `database`', {
      arg: 'WHERE',
      pattern: /^(folder|database)$/,
      expected: 'folder or database',
    }),
    database: text(undefined, 'an empty PostgreSQL database to use instead of SQLite', {
      arg: 'URL',
      pattern: /^postgres(ql)?:\/\//,
      expected: 'a postgres:// URL',
    }),
    timeout: count(3600, 'seconds to wait for the jobs to end'),
  },
  pin: 'servers',
  target: `the server's or the agent's peak RSS is more than ${TARGET_ABOVE_IDLE_MiB} MiB above its idle RSS`,
  async run({ opts, work, apiKey }) {
    const bytes = opts.mib * MiB;
    if (opts.pin) pinSelf(1);
    const dataDir = join(work, 'data');
    const serve = await startServe({
      pin: opts.pin,
      dataDir,
      apiKey,
      ...(opts.database ? { database: opts.database } : {}),
      ...(opts.jobFiles === 'database' ? { serveArgs: ['--job-files', 'database'] } : {}),
    });
    const serverPid = serve.proc.pid;
    const agentPid = await localAgentPid(dataDir);
    await createBashDefinition(serve.base, apiKey, 'Verbose', numberedLinesScript(bytes));
    const headers = { 'X-API-Key': apiKey, 'Content-Type': 'application/json' };
    const submit = async () => {
      const r = await fetch(`${serve.base}/Job/GLOBAL.Verbose`, { method: 'POST', headers, body: '{}' });
      const body = (await r.json()) as { jobId?: number };
      if (r.status !== 201 || typeof body.jobId !== 'number') throw new Error(`submit: ${r.status}`);
      return body.jobId;
    };
    const waitFinal = async (ids: number[]) => {
      const deadline = Date.now() + opts.timeout * 1000;
      const pending = new Set(ids);
      while (pending.size > 0) {
        if (Date.now() > deadline) throw new Error(`jobs ${[...pending].join(', ')} not final in ${opts.timeout} s`);
        for (const id of [...pending]) {
          // A poll that fails on the network (a keep-alive connection the server closed meanwhile) is tried again.
          const r = await fetch(`${serve.base}/Job/${id}`, { headers }).catch(() => undefined);
          if (!r) continue;
          const s = ((await r.json()) as { Status?: string }).Status ?? '';
          if (['Completed', 'Error', 'Killed', 'Canceled', 'Unknown'].includes(s)) pending.delete(id);
        }
        await sleep(500);
      }
    };

    await sleep(3000);
    const idle = { server: memoryOf(serverPid).rssMiB, agent: memoryOf(agentPid).rssMiB };
    const server = sampleRss(serverPid, 50);
    const agent = sampleRss(agentPid, 50);
    const t0 = performance.now();
    const ids = await Promise.all(Array.from({ length: opts.jobs }, submit));
    await waitFinal(ids);
    const seconds = (performance.now() - t0) / 1000;
    const peaks = { server: server.stop(), agent: agent.stop() };
    await sleep(3000);
    const after = { server: memoryOf(serverPid).rssMiB, agent: memoryOf(agentPid).rssMiB };

    const above = {
      server: peaks.server.maxBytes / MiB - idle.server,
      agent: peaks.agent.maxBytes / MiB - idle.agent,
    };
    const totalMiB = opts.jobs * opts.mib;
    const where = `${opts.jobFiles}, ${opts.database ? 'PostgreSQL' : 'SQLite'}`;
    say(
      `${opts.jobs} jobs × ${opts.mib} MiB to stdout (job files: ${where}): ${fixed(seconds, 1)} s, ` +
        `${fixed(totalMiB / seconds, 1)} MiB/s stored`,
      `server RSS: idle ${fixed(idle.server, 0)} MiB, peak ${fixed(peaks.server.maxBytes / MiB, 0)} MiB ` +
        `(+${fixed(above.server, 0)}), after ${fixed(after.server, 0)} MiB (${peaks.server.samples} samples)`,
      `agent RSS:  idle ${fixed(idle.agent, 0)} MiB, peak ${fixed(peaks.agent.maxBytes / MiB, 0)} MiB ` +
        `(+${fixed(above.agent, 0)}), after ${fixed(after.agent, 0)} MiB (${peaks.agent.samples} samples)`,
    );

    const wrong: string[] = [];
    for (const id of ids) {
      const stored = await storedStdout(serve.base, apiKey, id);
      if (stored.status !== 'Completed') wrong.push(`Job ${id} ${stored.status}`);
      else if (stored.size !== bytes) wrong.push(`Job ${id}: ${stored.size} bytes stored of ${bytes}`);
      else if (stored.digest !== numberedLinesDigest(id, bytes)) wrong.push(`Job ${id}: content differs`);
    }
    const meets = above.server <= TARGET_ABOVE_IDLE_MiB && above.agent <= TARGET_ABOVE_IDLE_MiB;
    say(`stored: ${wrong.length === 0 ? `every byte of every job (size and SHA-256)` : wrong.join('; ')}`);
    return {
      summary:
        `${opts.jobs} × ${opts.mib} MiB (${where}) in ${fixed(seconds, 1)} s: server +${fixed(above.server, 0)} MiB, ` +
        `agent +${fixed(above.agent, 0)} MiB above idle (target ≤ ${TARGET_ABOVE_IDLE_MiB})`,
      meets,
      ...(wrong.length > 0 ? { failure: wrong.join('; ') } : {}),
      results: {
        seconds,
        idle,
        peaksMiB: { server: peaks.server.maxBytes / MiB, agent: peaks.agent.maxBytes / MiB },
        after,
        above,
        wrong,
      },
    };
  },
});
