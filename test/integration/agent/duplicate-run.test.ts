import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: the same run twice', () => {
  const suite = agentSuite({ autoAck: false });

  it('starts the attempt once, also when the copy comes after it finished (not yet acknowledged)', async () => {
    const peer = suite.peer();
    const marker = join(suite.dir(), 'marker');
    await startAgent(peer, suite.dir());
    const run = peer.run({ jobId: 5, scriptType: 'BASH', script: 'echo ran >> "$MARKER"', env: { MARKER: marker } });
    peer.send(run);
    await peer.finished(5);
    peer.send(run);
    // A different attempt of the same job is a new run.
    peer.send({ ...run, attempt: 2 });
    await peer.finished(5, 2);
    assert.equal(readFileSync(marker, 'utf8'), 'ran\nran\n');
    assert.deepEqual(
      peer.messages('started').map((m) => m.attempt),
      [1, 2],
    );
    assert.equal(peer.messages('finished').length, 2);
  });
});
