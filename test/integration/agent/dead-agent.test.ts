import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  AGENT_PATH,
  HEADER_AGENT_INSTANCE,
  HEADER_PROCESS_SERVER,
  UPGRADE_PROTOCOL,
} from '../../../src/agent/protocol.ts';
import type { Clock } from '../../../src/time/clock.ts';
import { type AgentProcess, spawnAgent } from '../../helpers/agent-peer.ts';
import { backends } from '../../helpers/backends.ts';
import { postCreated, staysIn, submit, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * With real agent processes: a killed agent's session ends when its connection does (the process
 * server stops showing Running at once), a new agent with the secret is accepted in place of a dead session, and a
 * silent agent's jobs become Unknown one watchdog tick after AgentTimeout has passed since it was last heard of.
 */

const SECRET = 'dead-agent-test-secret-0123456789';
const PS = 'GLOBAL.Remote';
const TIMEOUT_S = 600;

/** Real time plus an offset the test moves forward, so AgentTimeout can pass without waiting for it. */
class OffsetClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
}

for (const backend of backends()) {
  describe(`a dead or silent agent (${backend.name})`, () => {
    let t: TestServer;
    let dir = '';
    let url = '';
    const clock = new OffsetClock();
    const agents: AgentProcess[] = [];
    before(async () => {
      t = await startTestServer(backend, { localAgent: false }, { listen: true, clock });
      const { port } = t.server.app.server.address() as { port: number };
      url = `http://127.0.0.1:${port}${t.xmlBase.replace(/\/api-rest$/, '')}`;
      dir = await mkdtemp(join(tmpdir(), 'millrace-dead-agent-'));
      await writeFile(join(dir, 'secret'), `${SECRET}\n`);
      await postCreated(t, `/ProcessServer/${PS}`, { AgentSecret: SECRET, AgentTimeout: TIMEOUT_S });
      await postCreated(t, '/Queue/GLOBAL.RemoteQ');
      await postCreated(t, `/QueueProvider/${PS}.GLOBAL.RemoteQ`);
      await postCreated(t, '/JobDefinition/GLOBAL.Nap', { JobDefinitionType: 'BASH', Script: 'sleep 20' });
    });
    after(async () => {
      for (const a of agents) {
        a.child.kill('SIGCONT');
        a.child.kill('SIGKILL');
      }
      await Promise.all(agents.map((a) => a.exited));
      await t.close();
      await rm(dir, { recursive: true, force: true });
    });

    const status = async () => (await t.req('GET', `/ProcessServer/${PS}`)).json.Status as string;
    const start = async () => {
      const a = spawnAgent({ url, processServer: PS }, dir);
      agents.push(a);
      await waitFor('the agent to connect', async () => ((await status()) === 'Running' ? true : undefined), 30_000);
      return a;
    };
    const runningJob = async () => {
      const job = await submit(t, 'GLOBAL.Nap', { Queue: 'GLOBAL.RemoteQ' });
      await waitForStatus(t, job.jobId, 'Running', 30_000);
      return job.jobId as number;
    };

    test('SIGKILL: the session ends with the connection and a restarted agent settles its jobs at once', async () => {
      const first = await start();
      const jobId = await runningJob();
      first.child.kill('SIGKILL');
      await first.exited;
      // Nothing restarts it here: the status can only change because the server saw the connection close.
      await waitFor('the process server to stop showing Running', async () =>
        (await status()) !== 'Running' ? true : undefined,
      );
      assert.equal(t.server.engine.hub.isConnected(PS), false);
      await start();
      // AgentTimeout is 10 minutes: only the restarted agent's report can end the job this soon.
      const ended = await waitForStatus(t, jobId, ['Unknown', 'Error', 'Killed', 'Completed'], 60_000);
      assert.notEqual(ended.Status, 'Running');
    });

    test('a connection with the secret replaces a session that died without closing', async () => {
      // The agent serving it goes (a second live agent would be refused: one serves a process server at a time)...
      const previous = agents.at(-1) as AgentProcess;
      previous.child.kill('SIGKILL');
      await previous.exited;
      await waitFor('its session to end', async () => (t.server.engine.hub.isConnected(PS) ? undefined : true));
      // ... and a connection upgrades and then says nothing, like a cut cable.
      const ghost = connect(Number(new URL(url).port), '127.0.0.1');
      ghost.on('error', () => {});
      const path = `${new URL(url).pathname}${AGENT_PATH}`;
      ghost.write(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: ${UPGRADE_PROTOCOL}\r\n` +
          `${HEADER_PROCESS_SERVER}: ${PS}\r\n${HEADER_AGENT_INSTANCE}: ghost\r\nAuthorization: Bearer ${SECRET}\r\n\r\n`,
      );
      let answer = '';
      ghost.on('data', (d: Buffer) => {
        answer += d.toString();
      });
      await waitFor('the ghost to be accepted', async () => (answer.includes(' 101 ') ? true : undefined));
      const ghostClosed = new Promise((r) => ghost.once('close', r));
      await start(); // a real agent with the secret: accepted, not 409
      await ghostClosed; // and the ghost's session was dropped
    });

    test(`a silent agent: its jobs become Unknown one watchdog tick after AgentTimeout (${TIMEOUT_S} s)`, async () => {
      const agent = agents.at(-1) as AgentProcess;
      const jobId = await runningJob();
      agent.child.kill('SIGSTOP');
      await staysIn(t, jobId, 'Running', 1500);
      // AgentTimeout plus a second and a half since it was last heard of: before the fix another whole
      // AgentTimeout had to pass after the session was dropped, which cannot happen within this test's wait.
      clock.offset += TIMEOUT_S * 1000 + 1500;
      const lost = await waitForStatus(t, jobId, 'Unknown', 30_000);
      assert.equal(lost.Status, 'Unknown');
      assert.equal(await status(), 'Unknown');
      agent.child.kill('SIGCONT');
    });
  });
}
