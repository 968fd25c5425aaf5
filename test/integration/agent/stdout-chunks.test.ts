import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OUTPUT_CHUNK_BYTES } from '../../../src/agent/protocol.ts';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: stdout of a job writing more than 200 KiB', () => {
  const suite = agentSuite();

  it('arrives whole, in chunks of at most OUTPUT_CHUNK_BYTES, all before finished', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir());
    // 300 KiB of numbered lines on stdout while the job runs (with a pause, so some ships during the run), a bit on
    // stderr at the end.
    peer.run({
      jobId: 7,
      scriptType: 'PYTHON',
      script: [
        'import sys, time',
        'for i in range(3):',
        '    for j in range(1024):',
        '        sys.stdout.write(("%d.%04d " % (i, j)).ljust(99, "x") + "\\n")',
        '    sys.stdout.flush()',
        '    time.sleep(0.3)',
        'sys.stderr.write("done\\n")',
      ].join('\n'),
    });
    const f = await peer.finished(7);
    assert.equal(f.returnCode, 0);
    const stdout = peer.file(7, 'stdout.log');
    assert.equal(stdout.length, 3 * 1024 * 100);
    const lines = stdout.toString().split('\n');
    assert.equal(lines[0], '0.0000 '.padEnd(99, 'x'));
    assert.equal(lines[3071], '2.1023 '.padEnd(99, 'x'));
    assert.equal(peer.file(7, 'stderr.log').toString(), 'done\n');
    assert.deepEqual(f.files, [
      { name: 'stdout.log', size: 307200 },
      { name: 'stderr.log', size: 5 },
    ]);

    const ofJob = peer.received.filter((r) => 'jobId' in r.message && r.message.jobId === 7).map((r) => r.message);
    const outputs = ofJob.filter((m) => m.type === 'output');
    assert.ok(outputs.length >= 5, `${outputs.length} chunks`);
    for (const m of outputs) assert.ok(Buffer.from(m.data, 'base64').length <= OUTPUT_CHUNK_BYTES);
    assert.equal(ofJob.at(-1)?.type, 'finished');
    assert.equal(ofJob[0]?.type, 'started');
  });
});
