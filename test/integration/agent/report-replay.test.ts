import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentSuite, killAgent, spooled, startAgent } from '../../helpers/agent-peer.ts';
import { until } from '../../helpers/processes.ts';

describe('agent: restarted after a job finished but before the server acknowledged it', () => {
  const suite = agentSuite({ autoAck: false });

  it('reports the same final status again after reconnecting, and the job ran exactly once', async () => {
    const peer = suite.peer();
    const marker = join(suite.dir(), 'marker');
    const first = await startAgent(peer, suite.dir());
    peer.run({
      jobId: 15,
      scriptType: 'BASH',
      script: 'echo ran >> "$MARKER"\necho "the output"\nRESULT=42\nexit 4\n',
      env: { MARKER: marker },
      outNames: ['RESULT'],
    });
    const report = await peer.finished(15);
    const entry = spooled(first.dataDir).get('15.1');
    assert.ok(entry?.ok);
    assert.equal(entry.entry.state, 'finished');
    await killAgent(first);

    const before = peer.connections;
    const second = await startAgent(peer, suite.dir());
    const hello = peer.received.find((r) => r.connection > before && r.message.type === 'hello')?.message;
    assert.deepEqual(hello?.type === 'hello' && hello.known, [
      { jobId: 15, attempt: 1, state: 'finished', startTime: report.startTime, pid: peer.messages('started')[0]?.pid },
    ]);
    const again = await peer.finished(15, 1, before + 1);
    assert.deepEqual(again, report);
    // The files went again, from offset 0, before the report.
    const onSecond = peer.received.filter((r) => r.connection > before).map((r) => r.message);
    const output = onSecond.find((m) => m.type === 'output');
    assert.deepEqual(output?.type === 'output' && [output.file, output.offset], ['stdout.log', 0]);
    assert.ok(onSecond.findIndex((m) => m.type === 'output') < onSecond.findIndex((m) => m.type === 'finished'));
    assert.equal(peer.file(15, 'stdout.log').toString(), 'the output\n');

    peer.send({ type: 'ack', jobId: 15, attempt: 1 });
    await until(() => !spooled(second.dataDir).has('15.1'), 'the spool entry to go');
    await until(() => !existsSync(join(second.dataDir, 'work', '15.1')), 'the work folder to go');
    assert.equal(readFileSync(marker, 'utf8'), 'ran\n');
  });
});
