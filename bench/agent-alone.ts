/**
 * The agent alone, without the server: a minimal protocol peer (this process, on core 1) drives `millrace agent`
 * (on core 0) through N BASH `true` runs with 8 in flight, acknowledging every report, and prints the agent's CPU per
 * job (user and kernel), its job processes' CPU per job, and jobs/s. It separates the agent's own cost from the
 * server's, and shows what the file system under the agent's folder costs (run it with TMPDIR=/dev/shm to compare).
 *
 *   node --import tsx bench/agent-alone.ts [N] [TREE]     N default 1000; TREE: a checkout whose bin/millrace runs
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentMessage, encode, LineDecoder, type ServerMessage } from '../src/agent/protocol.ts';
import { canPin, pinSelf, ROOT } from './harness.ts';

const N = Number(process.argv[2] ?? 1000);
if (canPin()) pinSelf(1);
const tree = process.argv[3] ?? ROOT;
const IN_FLIGHT = 8;
const dir = mkdtempSync(join(tmpdir(), 'millrace-agent-alone-'));
writeFileSync(join(dir, 'secret'), 'agent-alone-secret');

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
        if (done === N) resolveDone();
        else if (next <= N) run();
      }
    },
    () => {},
  );
  s.on('data', (c: Buffer) => decoder.push(c));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as { port: number }).port;
const agent = spawn(
  'taskset',
  [
    '-c',
    '0',
    process.execPath,
    join(tree, 'bin/millrace'),
    'agent',
    '--server',
    `http://127.0.0.1:${port}/millrace`,
    '--process-server',
    'GLOBAL.Local',
    '--secret-file',
    join(dir, 'secret'),
    '--data',
    join(dir, 'agent'),
  ],
  { stdio: ['ignore', 'ignore', 'ignore'] },
);
try {
  const stat = () => {
    const s = readFileSync(`/proc/${agent.pid}/stat`, 'utf8');
    const f = s
      .slice(s.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return { user: f[11] ?? 0, sys: f[12] ?? 0, children: (f[13] ?? 0) + (f[14] ?? 0) };
  };
  let before: ReturnType<typeof stat> | undefined;
  const sampler = setInterval(() => {
    if (!before && t0 > 0) before = stat();
  }, 1);
  await finished;
  clearInterval(sampler);
  const after = stat();
  const seconds = (performance.now() - t0) / 1000;
  const b = before ?? after;
  const msPerJob = (ticks: number) => Number(((ticks * 10) / N).toFixed(2)); // CLK_TCK 100
  process.stdout.write(
    `${JSON.stringify({
      tree,
      dataDir: dir,
      jobs: N,
      jobsPerSec: Math.round(N / seconds),
      agentUserMsPerJob: msPerJob(after.user - b.user),
      agentSysMsPerJob: msPerJob(after.sys - b.sys),
      jobProcessMsPerJob: msPerJob(after.children - b.children),
    })}\n`,
  );
} finally {
  agent.kill('SIGKILL');
  server.close();
  socket?.destroy();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
