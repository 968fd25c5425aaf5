import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentSuite, spooled, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: stopping', () => {
  const suite = agentSuite();

  it('on SIGTERM it sends draining, lets running jobs finish, waits for their ack and exits 0', async () => {
    const peer = suite.peer();
    const agent = await startAgent(peer, suite.dir(), { dataDir: join(suite.dir(), 'drain') });
    // The job runs until the test lets it go (the file `go`): it is surely running when the agent is told to stop.
    const go = join(suite.dir(), 'drain-go');
    peer.run({ jobId: 1, scriptType: 'SH', script: `while [ ! -e ${go} ]; do sleep 0.05; done; echo done` });
    await peer.waitFor((r) => r.message.type === 'started', 'started');
    agent.child.kill('SIGTERM');
    await peer.waitFor((r) => r.message.type === 'draining', 'draining');
    assert.equal(agent.child.exitCode, null, 'the agent waits for its running job');
    // A run that arrives anyway is refused.
    peer.run({ jobId: 2, scriptType: 'SH', script: 'echo should not run' });
    const refused = await peer.finished(2);
    assert.equal(refused.error, 'agent is shutting down');
    assert.equal(refused.returnCode, null);
    writeFileSync(go, '');
    const { code } = await agent.exited;
    assert.equal(code, 0);
    const f = await peer.finished(1);
    assert.equal(f.returnCode, 0);
    assert.equal(peer.file(1, 'stdout.log').toString(), 'done\n');
    assert.deepEqual([...spooled(agent.dataDir).keys()], []);
    assert.equal(existsSync(join(agent.dataDir, 'agent.pid')), false);
    assert.equal(peer.messages('started').length, 1);
  });

  it('a second signal exits at once, leaving the running job in the spool', async () => {
    const peer = suite.peer();
    const agent = await startAgent(peer, suite.dir(), { dataDir: join(suite.dir(), 'twice') });
    peer.run({ jobId: 3, scriptType: 'SH', script: 'sleep 30' });
    await peer.waitFor((r) => r.message.type === 'started' && r.message.jobId === 3, 'started');
    agent.child.kill('SIGTERM');
    await peer.waitFor((r) => r.message.type === 'draining' && r.connection === peer.connections, 'draining');
    agent.child.kill('SIGINT');
    const { code } = await agent.exited;
    assert.notEqual(code, null);
    const left = [...spooled(agent.dataDir).values()];
    assert.deepEqual(
      left.map((l) => l.ok && [l.entry.jobId, l.entry.attempt, l.entry.state]),
      [[3, 1, 'running']],
    );
  });

  it('with --parent-pid it exits once that process is gone and no job runs', async () => {
    const peer = suite.peer();
    const { spawn } = await import('node:child_process');
    const parent = spawn('sleep', ['0.3'], { stdio: 'ignore' });
    const agent = await startAgent(peer, suite.dir(), {
      dataDir: join(suite.dir(), 'orphan'),
      args: ['--parent-pid', String(parent.pid)],
    });
    const { code } = await agent.exited;
    assert.equal(code, 0);
    assert.match(agent.output(), /parent process \d+ is gone/);
  });
});
