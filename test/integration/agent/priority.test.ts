import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it, test } from 'node:test';
import { DEFAULTS, loadConfig } from '../../../src/config/config.ts';
import { agentSuite, killAgent, spawnAgent, startAgent } from '../../helpers/agent-peer.ts';
import { backends } from '../../helpers/backends.ts';
import { getJob, postCreated, submit, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** `nice` without arguments prints the niceness it runs at: what a job sees of its CPU priority. */
const PRINT_NICE = 'nice';

describe('agent: its CPU priority (--nice), which its job processes inherit', () => {
  const suite = agentSuite();
  let jobId = 0;
  for (const spawner of ['python3', 'node']) {
    it(`--nice 7: a job started through --spawner ${spawner} runs at nice 7`, async () => {
      const peer = suite.peer();
      const agent = await startAgent(peer, suite.dir(), {
        args: ['--nice', '7', '--spawner', spawner],
        dataDir: join(suite.dir(), spawner),
      });
      try {
        const id = ++jobId;
        peer.run({ jobId: id, scriptType: 'BASH', script: PRINT_NICE });
        const end = await peer.finished(id);
        assert.equal(end.returnCode, 0);
        assert.equal(peer.file(id, 'stdout.log').toString(), '7\n');
      } finally {
        await killAgent(agent);
      }
    });
  }

  it('--nice outside 0 to 19, or not a number: the agent refuses to start and says why', async () => {
    const peer = suite.peer();
    for (const [i, value] of ['20', 'ten', '-5'].entries()) {
      const agent = spawnAgent(peer, suite.dir(), { args: [`--nice=${value}`], dataDir: join(suite.dir(), `bad${i}`) });
      const { code } = await agent.exited;
      assert.notEqual(code, 0);
      assert.match(agent.output(), new RegExp(`--nice.*"${value}" is not a whole number from 0 to 19`));
    }
  });
});

test('local-agent-nice: 10 unless given, a whole number from 0 to 19', () => {
  assert.equal(loadConfig({}, {}).localAgentNice, 10);
  assert.equal(loadConfig({}, { MILLRACE_LOCAL_AGENT_NICE: '0' }).localAgentNice, 0);
  assert.throws(
    () => loadConfig({}, { MILLRACE_LOCAL_AGENT_NICE: '20' }),
    /MILLRACE_LOCAL_AGENT_NICE.*"20" is not a whole number from 0 to 19/,
  );
});

// One backend is enough: the priority is the agent process's, whatever the database.
const [backend] = backends();
if (backend) {
  describe('the local agent runs below the server (local-agent-nice)', () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend, { localAgentNice: DEFAULTS.localAgentNice }, { listen: true });
      await postCreated(t, '/JobDefinition/GLOBAL.PrintNice', { JobDefinitionType: 'BASH', Script: PRINT_NICE });
    });
    after(() => t.close());

    it("a job of GLOBAL.Local prints the local agent's nice value, 10 by default", async () => {
      const job = await submit(t, 'GLOBAL.PrintNice');
      await waitForStatus(t, job.jobId, 'Completed', 30_000);
      const files = (await getJob(t, job.jobId)).JobFiles as { Name: string; uniqueId: string }[];
      const stdout = files.find((f) => f.Name === 'stdout.log');
      assert.ok(stdout, 'the job has its stdout.log');
      const r = await t.req('GET', `/JobFile/${stdout.uniqueId}/content`);
      assert.equal(r.status, 200, r.body);
      assert.equal(r.body, '10\n');
    });
  });
}
