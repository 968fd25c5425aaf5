/**
 * The agent alone, without the server: a minimal protocol peer (this process, on core 1) drives `millrace agent`
 * (on core 0) through N BASH `true` runs with 8 in flight, acknowledging every report, and prints the agent's CPU per
 * job (user and kernel, its spawner's included: src/agent/spawner.ts), its job processes' CPU per job, and jobs/s.
 * MILLRACE_AGENT_SPAWNER=node measures the agent forking them itself. It separates the agent's own cost from the
 * server's, and shows what the file system under the agent's folder costs (run it with TMPDIR=/dev/shm to compare).
 *
 *   node --import tsx bench/agent-alone.ts [--jobs N] [--tree DIR] [--node-flags FLAGS]
 *
 * DIR: a checkout whose bin/millrace runs; FLAGS: node's flags for the agent (the local agent's by default).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { type AgentMessage, encode, LineDecoder, type ServerMessage } from '../src/agent/protocol.ts';
import { launch, pinned, agentCpu, type processCpu, ROOT } from './harness.ts';
import { benchmark } from './lib/benchmark.ts';
import { AGENT_HEAP } from '../src/engine/local-agent.ts';
import { count, path, text } from './lib/options.ts';
import { fixed, int, say } from './lib/report.ts';

const IN_FLIGHT = 8;

benchmark({
  title: 'agent alone',
  about:
    "The agent without the server: a protocol peer drives `millrace agent` through N BASH `true` jobs, 8 in flight; the agent's user and kernel CPU per job and its job processes'.",
  options: {
    jobs: count(1000, 'BASH `true` jobs'),
    tree: path('a checkout whose bin/millrace runs (default: this one)', 'DIR'),
    nodeFlags: text(AGENT_HEAP, "node's flags for the agent, space-separated (default: the local agent's)", {
      arg: 'FLAGS',
    }),
  },
  pin: 'self',
  async run({ opts, work }) {
    const n = opts.jobs;
    const tree = opts.tree ?? ROOT;
    writeFileSync(join(work, 'secret'), 'agent-alone-secret');
    let socket: Socket | undefined;
    let next = 1;
    let done = 0;
    let t0 = 0;
    let resolveDone = () => {};
    const finished = new Promise<void>((r) => {
      resolveDone = r;
    });
    const send = (m: ServerMessage) => socket?.write(encode(m));
    const run = () => {
      send({ type: 'run', jobId: next++, attempt: 1, scriptType: 'BASH', script: 'true', env: {}, outNames: [] });
    };

    const server = createServer();
    server.on('upgrade', (_req, s: Socket) => {
      s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: millrace-agent/1\r\nConnection: Upgrade\r\n\r\n');
      socket = s;
      const decoder = new LineDecoder(
        (raw) => {
          const m = raw as AgentMessage;
          if (m.type === 'hello') {
            send({ type: 'welcome', killGraceMs: 1000, heartbeatMs: 5000 });
            setTimeout(() => {
              t0 = performance.now();
              for (let i = 0; i < IN_FLIGHT; i++) run();
            }, 500);
          } else if (m.type === 'ping') send({ type: 'pong' });
          else if (m.type === 'finished') {
            send({ type: 'ack', jobId: m.jobId, attempt: m.attempt });
            done++;
            if (done === n) resolveDone();
            else if (next <= n) run();
          }
        },
        () => {},
      );
      s.on('data', (c: Buffer) => decoder.push(c));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const [cmd, args] = pinned(opts.pin, 0, process.execPath, [
      ...opts.nodeFlags.split(' ').filter((f) => f !== ''),
      join(tree, 'bin/millrace'),
      'agent',
      '--server',
      `http://127.0.0.1:${port}/millrace`,
      '--process-server',
      'GLOBAL.Local',
      '--secret-file',
      join(work, 'secret'),
      '--data',
      join(work, 'agent'),
    ]);
    const agent = launch('agent', cmd, args);
    try {
      let before: ReturnType<typeof processCpu> | undefined;
      let rss = { total: 0, anon: 0 };
      const sampler = setInterval(() => {
        if (!before && t0 > 0) before = agentCpu(agent.pid);
      }, 1);
      const rssSampler = setInterval(() => {
        if (before) rss = maxRss(agent.pid, rss);
      }, 100);
      await finished;
      clearInterval(sampler);
      clearInterval(rssSampler);
      const after = agentCpu(agent.pid);
      const seconds = (performance.now() - t0) / 1000;
      const b = before ?? after;
      const msPerJob = (s: number) => (1000 * s) / n;
      const r = {
        tree,
        dataDir: join(work, 'agent'),
        jobs: n,
        jobsPerSec: n / seconds,
        agentUserMsPerJob: msPerJob(after.user - b.user),
        agentSysMsPerJob: msPerJob(after.sys - b.sys),
        jobProcessMsPerJob: msPerJob(after.children - b.children),
        agentRssMiB: rss.total / 1024,
        agentAnonMiB: rss.anon / 1024,
      };
      say(
        `agent:   ${join(tree, 'bin/millrace')} agent${opts.pin ? ' on core 0; this process on core 1' : ' (UNPINNED)'}; ` +
          `data folder ${r.dataDir}`,
        `${int(n)} BASH true jobs, ${IN_FLIGHT} in flight: ${int(r.jobsPerSec)} jobs/s; node flags "${opts.nodeFlags}"`,
        `agent RSS max ${fixed(r.agentRssMiB, 1)} MiB, of which anonymous ${fixed(r.agentAnonMiB, 1)} MiB (what a fork copies)`,
        `CPU per job (ms): agent user ${fixed(r.agentUserMsPerJob, 2)}, agent kernel ${fixed(r.agentSysMsPerJob, 2)}, ` +
          `job process ${fixed(r.jobProcessMsPerJob, 2)}`,
      );
      return {
        summary:
          `agent alone, ${int(n)} BASH true jobs: ${int(r.jobsPerSec)} jobs/s; per job agent user ` +
          `${fixed(r.agentUserMsPerJob, 2)} ms + kernel ${fixed(r.agentSysMsPerJob, 2)} ms, job process ` +
          `${fixed(r.jobProcessMsPerJob, 2)} ms; agent RSS ${fixed(r.agentRssMiB, 1)} MiB (anonymous ${fixed(r.agentAnonMiB, 1)})`,
        results: r,
      };
    } finally {
      server.close();
      socket?.destroy();
    }
  },
});

/** The larger of `seen` and the process's VmRSS and RssAnon now (kB). */
function maxRss(pid: number, seen: { total: number; anon: number }): { total: number; anon: number } {
  let status = '';
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return seen;
  }
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { total: Math.max(seen.total, kb('VmRSS')), anon: Math.max(seen.anon, kb('RssAnon')) };
}
