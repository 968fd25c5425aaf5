import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: files written to $MILLRACE_FILES', () => {
  const suite = agentSuite();

  it('ships plain files with safe names and reports their sizes; skips the rest', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir());
    peer.run({
      jobId: 3,
      scriptType: 'BASH',
      script: [
        'cd "$MILLRACE_FILES"',
        'printf "a,b\\n1,2\\n" > report.csv',
        'head -c 150000 /dev/urandom > blob.bin',
        ': > empty.txt',
        'echo hidden > .hidden',
        'echo fake > stdout.log',
        'mkdir sub && echo nested > sub/inner.txt',
        'ln -s report.csv link.csv',
        'mkfifo pipe',
        'echo out',
      ].join('\n'),
    });
    const f = await peer.finished(3);
    assert.equal(f.returnCode, 0, peer.file(3, 'stderr.log').toString());
    assert.deepEqual(
      f.files.map((x) => x.name),
      ['stdout.log', 'stderr.log', 'blob.bin', 'empty.txt', 'report.csv'],
    );
    assert.equal(f.files.find((x) => x.name === 'report.csv')?.size, 8);
    assert.equal(peer.file(3, 'report.csv').toString(), 'a,b\n1,2\n');
    assert.equal(peer.file(3, 'blob.bin').length, 150000);
    assert.equal(f.files.find((x) => x.name === 'blob.bin')?.size, 150000);
    assert.equal(peer.file(3, 'stdout.log').toString(), 'out\n');
    assert.deepEqual([...new Set(peer.messages('output').map((m) => m.file))].sort(), [
      'blob.bin',
      'report.csv',
      'stdout.log',
    ]);
  });
});
