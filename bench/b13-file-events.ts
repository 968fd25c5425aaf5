/**
 * Benchmark B13 (method in bench/README.md): file events against jobs submitted over HTTP. One `millrace serve`
 * (pinned to core 0, its local agent started with `MILLRACE_WATCH_ROOTS`) first runs N BASH jobs submitted as B2
 * submits them, each printing a line as long as a file's path, then N files dropped at once into a folder watched by
 * an event definition (PollSeconds 1, StableSeconds 1) whose waiting definition has ClearsEvent and AutoSubmit
 * Always: one job per file, each printing the file's path. Both kinds of job write the same output, so the ratio is
 * the cost of the event path. For both: the time from the first submit (or file) to the last Completed job, and the
 * CPU the server and the agent spent per job. Target: a file event costs at most 1.5 times the CPU of an HTTP submit.
 *
 *   npm run bench:b13                    # 10,000 of each
 *   npm run bench:b13 -- --files 1000
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBashDefinition, pollUntil, startJobServer, submitMany } from './agent-harness.ts';
import { agentCpu, processCpuSeconds } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { amount, count, shared } from './lib/options.ts';
import { fixed, int, say } from './lib/report.ts';

const TARGET_RATIO = 1.5;

interface Drain {
  seconds: number;
  serverCpuS: number;
  agentCpuS: number;
}

benchmark({
  script: 'bench:b13',
  title: (o) => `B13 file events: ${int(o.files)} files against ${int(o.files)} HTTP submits`,
  about: 'file events (one job per file) against BASH jobs submitted over HTTP: time and CPU per job',
  options: {
    files: count(10_000, 'files, and HTTP-submitted jobs', { env: 'BENCH_FILES' }),
    concurrency: count(50, 'HTTP submits in flight'),
    maxLoad: shared.maxLoad,
    quietTimeout: shared.quietTimeout,
    timeout: amount(3600, 'give up on a drain after S seconds', { min: 1 }),
  },
  pin: 'self',
  target: `a file event's CPU per job is more than ${TARGET_RATIO} times an HTTP submit's`,
  async run({ opts, work, apiKey }) {
    const watched = join(work, 'watched');
    const inbox = join(watched, 'in');
    mkdirSync(inbox, { recursive: true });
    const js = await startJobServer({
      pin: opts.pin,
      work,
      name: 'b13',
      apiKey,
      concurrency: opts.concurrency,
      env: { MILLRACE_WATCH_ROOTS: watched },
    });
    const { serve, agentPid, reader, http } = js;
    const post = async (path: string, body: unknown) => {
      const r = await fetch(`${serve.base}${path}`, {
        method: 'POST',
        headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (r.status !== 201) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    };
    const drain = async (start: () => Promise<unknown>, what: string): Promise<Drain> => {
      const after = reader.maxJobId();
      const srv0 = processCpuSeconds(serve.proc.pid);
      const ag0 = agentCpu(agentPid);
      const t0 = Date.now();
      await start();
      await pollUntil(
        () => reader.completed(after) >= opts.files,
        50,
        opts.timeout,
        () => `${what}: ${JSON.stringify(reader.statuses(after))}`,
      );
      const rows = reader.rows(after);
      if (rows.length !== opts.files) throw new Error(`${what}: ${rows.length} jobs for ${opts.files}`);
      const last = Math.max(...rows.map((r) => r.modification_time));
      const ag1 = agentCpu(agentPid);
      return {
        seconds: (last - t0) / 1000,
        serverCpuS: processCpuSeconds(serve.proc.pid) - srv0,
        agentCpuS: ag1.user + ag1.sys - ag0.user - ag0.sys,
      };
    };
    try {
      // The HTTP jobs print a line as long as a file job's (its path), so both drains carry the same job output and
      // the ratio is what the event path costs, not what shipping a job's stdout costs.
      await createBashDefinition(serve.base, apiKey, 'Echo', `echo "${join(inbox, `f${opts.files - 1}.dat`)}"`);
      const viaHttp = await drain(
        () => submitMany(http, 'GLOBAL.Echo', Buffer.from('{}'), opts.files, opts.concurrency),
        'HTTP',
      );
      await post('/EventDefinition/GLOBAL.Landed', {
        FileEvents: [
          { ProcessServer: 'GLOBAL.Local', Directory: inbox, Pattern: '*.dat', PollSeconds: 1, StableSeconds: 1 },
        ],
      });
      await post('/JobDefinition/GLOBAL.OnFile', {
        JobDefinitionType: 'BASH',
        Script: 'echo "$MILLRACE_EVENT_COMMENT"',
        WaitEvents: [{ EventDefinition: 'GLOBAL.Landed', ClearsEvent: true, AutoSubmit: 'Always' }],
      });
      const viaFiles = await drain(async () => {
        for (let i = 0; i < opts.files; i++) writeFileSync(join(inbox, `f${i}.dat`), `${i}\n`);
      }, 'files');
      const perJob = (d: Drain) => (1000 * (d.serverCpuS + d.agentCpuS)) / opts.files;
      const ratio = perJob(viaFiles) / perJob(viaHttp);
      const line = (name: string, d: Drain) =>
        `  ${name}  ${fixed(d.seconds, 1)} s to the last Completed (${fixed(opts.files / d.seconds, 1)} jobs/s); CPU per job: ` +
        `server ${fixed((1000 * d.serverCpuS) / opts.files, 2)} ms, agent ${fixed((1000 * d.agentCpuS) / opts.files, 2)} ms`;
      say(
        '',
        line('HTTP submits ', viaHttp),
        line('file events  ', viaFiles),
        `  CPU per job, file events / HTTP submits: ${fixed(ratio, 2)} (target <= ${TARGET_RATIO})`,
        '  (ClearsEvent releases one file at a time: the file jobs run one after another, the HTTP ones 8 at a time)',
      );
      return {
        summary:
          `B13 ${int(opts.files)} files: ${fixed(viaFiles.seconds, 1)} s, ${fixed(perJob(viaFiles), 2)} ms CPU/job | ` +
          `${int(opts.files)} HTTP jobs: ${fixed(viaHttp.seconds, 1)} s, ${fixed(perJob(viaHttp), 2)} ms CPU/job | ` +
          `ratio ${fixed(ratio, 2)} (target <= ${TARGET_RATIO})`,
        meets: ratio <= TARGET_RATIO,
        results: { viaHttp, viaFiles, ratio },
      };
    } finally {
      await js.close();
    }
  },
});
