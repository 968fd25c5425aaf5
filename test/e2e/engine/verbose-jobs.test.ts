import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Backend, backends } from '../../helpers/backends.ts';
import { JSON_BASE, killServers, type ServeProcess, startServe } from '../../helpers/cli.ts';
import { apiClient, fetchRetryingStale } from '../../helpers/http-client.ts';
import { processRuns, until } from '../../helpers/processes.ts';
import { numberedLinesDigest, numberedLinesScript } from '../../helpers/numbered-lines.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

const KEY = 'verbose-admin-key-0123456789abcdef';
const MiB = 1024 * 1024;
const JOBS = 2;
const BYTES = 256 * MiB;
/**
 * What the server or the agent may grow above idle while the jobs run. Without backpressure the server holds the
 * output it has read and not yet stored: its RSS grew by more than the output in flight (834 MiB for one job of
 * 500 MiB), so 512 MiB of output at once break this bound; with it, the growth does not depend on the output at all
 * (bench:verbose measures it with 8 jobs × 1 GiB, bench/README.md).
 */
const BOUND_MiB = 400;

/** VmRSS of a process in MiB, from /proc. */
function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** The local agent's pid (its pid file) and its server's (the agent's --parent-pid), once it runs. */
async function pids(dataDir: string): Promise<{ agent: number; server: number }> {
  const agent = await waitFor(
    'the local agent',
    async () => {
      const pid = Number.parseInt(readFileSync(join(dataDir, 'agents', 'GLOBAL.Local', 'agent.pid'), 'utf8'), 10);
      return Number.isSafeInteger(pid) && rssMiB(pid) > 0 ? pid : undefined;
    },
    60_000,
  );
  const args = readFileSync(`/proc/${agent}/cmdline`, 'utf8').split('\0');
  const server = Number(args[args.indexOf('--parent-pid') + 1]);
  return { agent, server };
}

/** A job's stdout.log read through the JSON interface: its size and SHA-256. */
async function stdoutOf(port: number, jobId: number): Promise<{ size: number; digest: string }> {
  const api = apiClient(port, KEY);
  const job = (await api('GET', `/Job/${jobId}`)).json;
  const file = job.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
  assert.ok(file, `Job ${jobId} has a stdout.log`);
  const res = await fetchRetryingStale(`http://127.0.0.1:${port}${JSON_BASE}/JobFile/${file.uniqueId}/content`, {
    headers: { 'X-API-Key': KEY },
  });
  assert.equal(res.status, 200);
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of res.body ?? []) {
    hash.update(chunk);
    size += chunk.length;
  }
  assert.equal(file.Size, size, 'the size the job shows is what its content has');
  return { size, digest: hash.digest('hex') };
}

/**
 * Verbose jobs through the local agent of a real `millrace serve` (docs/architecture.md §7, backpressure): two BASH
 * jobs at once each write 256 MiB to stdout, with job files in the data folder and in the database. Every byte is
 * stored (sizes, and checksums against what the job writes, computed here), and neither the server's nor the
 * agent's RSS (sampled from /proc) grows by anything near the output in flight. (Before the backpressure the server
 * grew by 807 MiB with the folder on SQLite and 829 MiB with the database on PostgreSQL here; with the database on
 * SQLite, whose writes block the server's event loop while they run, it kept up by itself.)
 */
const cases: Array<{ backend: Backend; jobFiles: 'folder' | 'database' }> = backends().flatMap((backend) =>
  backend.name === 'sqlite'
    ? [
        { backend, jobFiles: 'folder' as const },
        { backend, jobFiles: 'database' as const },
      ]
    : [{ backend, jobFiles: 'database' as const }],
);
for (const { backend, jobFiles } of cases)
  describe(`verbose jobs (${backend.name}, job files in the ${jobFiles})`, () => {
    let db: Awaited<ReturnType<Backend['create']>>;
    let serve: ServeProcess;
    let agentPid = 0;
    before(async () => {
      db = await backend.create();
      serve = await startServe(
        [
          '--data',
          db.dataDir,
          ...(db.databaseUrl ? ['--database', db.databaseUrl] : []),
          ...(jobFiles === 'database' ? ['--job-files', 'database'] : []),
        ],
        { MILLRACE_ADMIN_API_KEY: KEY },
      );
    });
    after(async () => {
      await serve?.stop();
      await killServers();
      // The agent leaves once its server is gone (within a second or two); its folder goes after it.
      if (agentPid > 0) await until(() => !processRuns(agentPid), 'the local agent to stop', 60_000);
      await db?.cleanup();
    });

    test(`${JOBS} jobs × ${BYTES / MiB} MiB: every byte stored, server and agent memory bounded`, async (t) => {
      const api = apiClient(serve.port, KEY);
      const { agent, server } = await pids(db.dataDir);
      agentPid = agent;
      const define = await api('POST', '/JobDefinition/GLOBAL.Verbose', {
        JobDefinitionType: 'BASH',
        Script: numberedLinesScript(BYTES),
      });
      assert.equal(define.status, 201, define.body);
      const idle = { server: rssMiB(server), agent: rssMiB(agent) };
      const peak = { ...idle };
      const sampler = setInterval(() => {
        peak.server = Math.max(peak.server, rssMiB(server));
        peak.agent = Math.max(peak.agent, rssMiB(agent));
      }, 100);
      let ids: number[];
      try {
        ids = [];
        for (let i = 0; i < JOBS; i++) {
          const r = await api('POST', '/Job/GLOBAL.Verbose', {});
          assert.equal(r.status, 201, r.body);
          ids.push(r.json.jobId);
        }
        for (const id of ids) {
          const job = await waitForJob((p) => api('GET', p), id, undefined, 600_000);
          assert.equal(job.Status, 'Completed', JSON.stringify(job.JobNotes));
        }
      } finally {
        clearInterval(sampler);
      }
      for (const id of ids) {
        const stdout = await stdoutOf(serve.port, id);
        assert.equal(stdout.size, BYTES, `Job ${id}: bytes stored`);
        assert.equal(stdout.digest, numberedLinesDigest(id, BYTES), `Job ${id}: content`);
      }
      const grew = { server: peak.server - idle.server, agent: peak.agent - idle.agent };
      const text = (w: 'server' | 'agent') =>
        `${w} RSS ${idle[w].toFixed(0)} MiB idle, ${peak[w].toFixed(0)} MiB at most (+${grew[w].toFixed(0)})`;
      t.diagnostic(`${text('server')}; ${text('agent')}`);
      assert.ok(grew.server < BOUND_MiB, text('server'));
      assert.ok(grew.agent < BOUND_MiB, text('agent'));
    });
  });
