import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';
import { pidFrom, processRuns, until } from '../../helpers/processes.ts';

describe('agent: kill', () => {
  const suite = agentSuite({ killGraceMs: 500 });

  it('takes the whole process tree, background children included, and reports killed', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir());
    const pidFile = join(suite.dir(), 'grandchild.pid');
    peer.run({
      jobId: 1,
      scriptType: 'BASH',
      script: 'sleep 1000 &\necho $! > "$PIDFILE"\nwait\n',
      env: { PIDFILE: pidFile },
    });
    const grandchild = await pidFrom(pidFile);
    assert.ok(processRuns(grandchild));
    peer.send({ type: 'kill', jobId: 1, attempt: 1 });
    const f = await peer.finished(1);
    assert.equal(f.killed, true);
    assert.equal(f.returnCode, null);
    assert.equal(f.signal, 'SIGTERM');
    await until(() => !processRuns(grandchild), 'the background sleep to be gone');
  });

  it('sends KILL to the group after the grace period when TERM is ignored', async () => {
    const peer = suite.peer();
    const pidFile = join(suite.dir(), 'stubborn.pid');
    peer.run({
      jobId: 2,
      scriptType: 'BASH',
      script: 'trap \'\' TERM\nsleep 1000 &\necho $! > "$PIDFILE"\nwait\nwait\n',
      env: { PIDFILE: pidFile },
    });
    const grandchild = await pidFrom(pidFile);
    const asked = Date.now();
    peer.send({ type: 'kill', jobId: 2, attempt: 1 });
    const f = await peer.finished(2);
    assert.ok(Date.now() - asked >= 400, 'KILL came before the grace period');
    assert.equal(f.killed, true);
    assert.equal(f.signal, 'SIGKILL');
    await until(() => !processRuns(grandchild), 'the background sleep to be gone');
  });

  it('ignores a kill of an attempt it does not run', async () => {
    const peer = suite.peer();
    peer.send({ type: 'kill', jobId: 999, attempt: 1 });
    peer.run({ jobId: 3, scriptType: 'SH', script: 'exit 0' });
    const f = await peer.finished(3);
    assert.equal(f.killed, false);
  });
});
