import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentSuite, killAgent, spooled, startAgent } from '../../helpers/agent-peer.ts';
import { until } from '../../helpers/processes.ts';

describe('agent: SIGKILLed while a job runs, then restarted', () => {
  const suite = agentSuite();

  it('reports the attempt lost (it cannot know the outcome) and drops it once acknowledged', async () => {
    const peer = suite.peer();
    const first = await startAgent(peer, suite.dir());
    peer.run({ jobId: 8, scriptType: 'SH', script: 'sleep 30' });
    const started = await peer.waitFor((r) => r.message.type === 'started', 'started');
    await killAgent(first);

    const before = peer.connections;
    const second = await startAgent(peer, suite.dir());
    const hello = peer.received.find((r) => r.connection > before && r.message.type === 'hello')?.message;
    assert.ok(hello?.type === 'hello' && started.message.type === 'started');
    assert.deepEqual(hello.known, [
      { jobId: 8, attempt: 1, state: 'running', startTime: started.message.startTime, pid: started.message.pid },
    ]);
    await peer.waitFor((r) => r.connection > before && r.message.type === 'lost' && r.message.jobId === 8, 'lost');
    await until(() => !spooled(second.dataDir).has('8.1'), 'the spool entry to go');
    assert.equal(peer.messages('finished').length, 0);
  });
});
