import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentSuite, spooled, startAgent } from '../../helpers/agent-peer.ts';
import { until } from '../../helpers/processes.ts';

/**
 * A final report the server did not acknowledge (it could not store it, for whatever reason) is sent again on the
 * same connection after two heartbeats, without its files, until it is acknowledged (docs/architecture.md §7).
 */
describe('agent: a report not acknowledged is sent again on the same connection', () => {
  const suite = agentSuite({ autoAck: false, heartbeatMs: 300 });

  it('re-sends the same report, not the files, and stops once it is acknowledged', async () => {
    const peer = suite.peer();
    const agent = await startAgent(peer, suite.dir());
    const connection = peer.connections;
    peer.run({ jobId: 21, scriptType: 'BASH', script: 'echo "some output"\nexit 2\n' });
    const first = await peer.finished(21);
    const at = peer.received.findIndex((r) => r.message.type === 'finished');
    const again = await peer.waitFor(
      (r) => r.message.type === 'finished' && r.message.jobId === 21 && peer.received.indexOf(r) > at,
      'the report sent again',
      30_000,
    );
    assert.equal(again.connection, connection, 'on the same connection, not after a reconnect');
    assert.deepEqual(again.message, first);
    const between = peer.received.slice(at + 1, peer.received.indexOf(again)).map((r) => r.message.type);
    assert.ok(!between.includes('output'), `no files shipped again: ${between}`);
    assert.equal(peer.file(21, 'stdout.log').toString(), 'some output\n');

    peer.send({ type: 'ack', jobId: 21, attempt: 1 });
    await until(() => !spooled(agent.dataDir).has('21.1'), 'the spool entry to go');
  });
});
