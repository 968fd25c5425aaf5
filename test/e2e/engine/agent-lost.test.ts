import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { cliEnv, ROOT } from '../../helpers/cli.ts';
import { heldTemplate, insertJobs } from '../../helpers/job-rows.ts';
import { utcMillis } from '../../helpers/jobs.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

/**
 * A process server served by a separate `millrace agent`: an agent killed with SIGKILL leaves its jobs
 * Unknown once its AgentTimeout has passed, and the process server's Status shows it; stop and start act on
 * dispatch to it.
 */
const SECRET = 'remote-secret-0123456789';

for (const backend of backends()) {
  describe(`an agent of its own (${backend.name})`, () => {
    let t: TestServer;
    let agent: ChildProcess | undefined;
    const get = (path: string) => t.req('GET', path);
    /** A real `millrace agent` for GLOBAL.Remote proving `secret`; its log is kept. */
    const spawnRemote = (secret: string, name: string) => {
      const { port } = t.server.app.server.address() as { port: number };
      const secretFile = join(t.config.dataDir, `${name}.secret`);
      writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
      const child = spawn(
        process.execPath,
        [
          'bin/millrace',
          'agent',
          '--server',
          `http://127.0.0.1:${port}/millrace`,
          '--process-server',
          'GLOBAL.Remote',
          '--secret-file',
          secretFile,
          '--data',
          join(t.config.dataDir, `${name}-agent`),
        ],
        { cwd: ROOT, env: cliEnv(), stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let log = '';
      child.stderr?.on('data', (c: Buffer) => {
        log += c.toString();
      });
      return { child, log: () => log };
    };
    const startAgent = () => {
      agent = spawnRemote(SECRET, 'remote').child;
    };
    before(async () => {
      t = await startE2eServer(backend);
      const setup: Array<[string, unknown]> = [
        ['/ProcessServer/GLOBAL.Remote', { DefinitionTypes: ['BASH'], AgentSecret: SECRET, AgentTimeout: 1 }],
        ['/Queue/GLOBAL.RemoteQ', {}],
        ['/QueueProvider/GLOBAL.Remote.GLOBAL.RemoteQ', {}],
        [
          '/JobDefinition/GLOBAL.Nap',
          { JobDefinitionType: 'BASH', Script: 'sleep 30', DefaultQueue: 'GLOBAL.RemoteQ' },
        ],
        [
          '/JobDefinition/GLOBAL.Slow',
          { JobDefinitionType: 'BASH', Script: 'sleep 4', DefaultQueue: 'GLOBAL.RemoteQ' },
        ],
        [
          '/JobDefinition/GLOBAL.Quick',
          { JobDefinitionType: 'BASH', Script: 'echo quick', DefaultQueue: 'GLOBAL.RemoteQ' },
        ],
      ];
      for (const [path, body] of setup) assert.equal((await t.req('POST', path, { body })).status, 201, path);
    });
    after(async () => {
      agent?.kill('SIGKILL');
      await t.close();
    });

    test('the right secret connects and Status becomes Running', async () => {
      assert.equal((await get('/ProcessServer/GLOBAL.Remote')).json.Status, 'Connecting');
      assert.equal((await get('/ProcessServer/GLOBAL.Remote')).json.AgentSecret, undefined, 'the secret is write-only');
      startAgent();
      await waitFor('Remote Running', async () =>
        (await get('/ProcessServer/GLOBAL.Remote')).json.Status === 'Running' ? true : undefined,
      );
    });

    test('an agent with a wrong secret, or a second agent, is refused; the job on the right agent is untouched', async () => {
      const id = (await t.req('POST', '/Job/GLOBAL.Slow')).json.jobId;
      await waitForJob(get, id, ['Running']);
      const others = [spawnRemote('not-the-secret-0123456789', 'wrong'), spawnRemote(SECRET, 'second')];
      try {
        await waitFor(
          'both refused, as their logs say',
          async () =>
            others[0]?.log().includes('the server answered 401: unknown process server or wrong secret') &&
            others[1]
              ?.log()
              .includes('the server answered 409: process server GLOBAL.Remote is served by another agent')
              ? true
              : undefined,
          30_000,
        );
        assert.equal((await get(`/Job/${id}`)).json.Status, 'Running', 'untouched while they knock');
        assert.equal((await get('/ProcessServer/GLOBAL.Remote')).json.Status, 'Running');
        for (const o of others)
          assert.equal(o.child.exitCode, null, 'a refused agent retries (an operator may fix it)');
      } finally {
        for (const o of others) o.child.kill('SIGKILL');
      }
      const done = await waitForJob(get, id, undefined, 60_000);
      assert.equal(done.Status, 'Completed', JSON.stringify(done.JobNotes));
    });

    test('stop: nothing new is dispatched, and start lets it run', async () => {
      const stopped = await t.req('PUT', '/ProcessServer/GLOBAL.Remote/stop');
      assert.equal(stopped.status, 200, stopped.body);
      assert.equal(stopped.json.Status, 'Shutdown');
      const id = (await t.req('POST', '/Job/GLOBAL.Quick')).json.jobId;
      await new Promise((r) => setTimeout(r, 500));
      assert.equal((await get(`/Job/${id}`)).json.Status, 'Queued');
      const started = await t.req('PUT', '/ProcessServer/GLOBAL.Remote/start');
      assert.equal(started.json.Status, 'Running');
      assert.equal((await waitForJob(get, id)).Status, 'Completed');
    });

    test('an attempt dispatched to an agent instance that no longer serves its process server ends Unknown', async () => {
      // As when a `run` went to a session dropped in that moment, after its successor's hello: a job row Dispatched
      // to instance "gone" of GLOBAL.Remote, which the connected agent serves.
      const template = await heldTemplate(t);
      const now = Date.now();
      const data = { ...template.data, agentInstance: 'gone' };
      const [orphan] = await insertJobs(t, template, [
        { status: 'Dispatched', processServer: 'GLOBAL.Remote', attempt: 1, modificationTime: now, data },
      ]);
      const ended = await waitForJob(get, orphan?.jobId as number, undefined, 30_000);
      assert.equal(ended.Status, 'Unknown');
      assert.ok(
        ended.JobNotes.includes('Dispatched to agent instance gone, which no longer serves GLOBAL.Remote'),
        JSON.stringify(ended.JobNotes),
      );
      assert.equal((await get('/ProcessServer/GLOBAL.Remote')).json.Status, 'Running', 'its agent carries on');
      const id = (await t.req('POST', '/Job/GLOBAL.Quick')).json.jobId;
      assert.equal((await waitForJob(get, id)).Status, 'Completed');
    });

    test('an agent killed with SIGKILL leaves its jobs Unknown after its timeout, not Error nor Completed', async () => {
      const ids = [
        (await t.req('POST', '/Job/GLOBAL.Nap')).json.jobId,
        (await t.req('POST', '/Job/GLOBAL.Nap')).json.jobId,
      ];
      for (const id of ids) await waitForJob(get, id, ['Running']);
      const killedAt = Date.now();
      agent?.kill('SIGKILL');
      for (const id of ids) {
        const job = await waitForJob(get, id, undefined);
        assert.equal(job.Status, 'Unknown');
        assert.ok(
          job.JobNotes.some((n: string) => /lost/.test(n)),
          JSON.stringify(job.JobNotes),
        );
      }
      // When the server declared them lost, from their histories: not when a poll of a loaded machine saw it.
      for (const id of ids) {
        const lost = (await get(`/Job/${id}/history`)).json.items.find(
          (e: { ToStatus: string }) => e.ToStatus === 'Unknown',
        );
        const after = utcMillis(lost.Time) - killedAt;
        // A 1 s AgentTimeout and a watchdog each second: well under 20 s even on a loaded machine, where the default
        // timeout (60 s) or no declaration at all would be far over it.
        assert.ok(after < 20_000, `Unknown ${after} ms after the kill, for a 1 s timeout`);
      }
      assert.equal((await get('/ProcessServer/GLOBAL.Remote')).json.Status, 'Unknown');
    });
  });
}
