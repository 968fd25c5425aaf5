import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: a BASH job with an In and an Out parameter', () => {
  const suite = agentSuite();

  it('passes In as a variable, reports the Out variable the script assigned, and ships stdout', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir());
    peer.run({
      jobId: 1,
      scriptType: 'BASH',
      script: 'echo "hello $WHO"\nRESULT="got $WHO"\nLINES=$\'one\\ntwo\'\nset -u\nexit 0\n',
      env: { WHO: 'world' },
      outNames: ['RESULT', 'LINES', 'UNSET_ONE'],
    });
    const started = await peer.waitFor((r) => r.message.type === 'started', 'started');
    assert.equal(started.message.type === 'started' && started.message.jobId, 1);
    const f = await peer.finished(1);
    assert.equal(f.returnCode, 0);
    assert.equal(f.signal, null);
    assert.equal(f.killed, false);
    assert.deepEqual(f.out, { RESULT: 'got world', LINES: 'one\ntwo' });
    assert.equal(peer.file(1, 'stdout.log').toString(), 'hello world\n');
    assert.deepEqual(
      f.files.map((x) => [x.name, x.size]),
      [
        ['stdout.log', 12],
        ['stderr.log', 0],
      ],
    );
    assert.ok(f.startTime <= f.endTime);
  });

  it('keeps the exit code of `exit 3` and of a failure under set -e, and still reports Out values', async () => {
    const peer = suite.peer();
    peer.run({ jobId: 2, scriptType: 'BASH', script: 'X=before\nexit 3\n', outNames: ['X'] });
    peer.run({ jobId: 3, scriptType: 'BASH', script: 'set -e\nX=set\nfalse\nX=never\n', outNames: ['X'] });
    peer.run({
      jobId: 4,
      scriptType: 'BASH',
      script: 'X=var\necho "X=from-file" >> "$MILLRACE_OUT"\necho "Y=a=b" >> "$MILLRACE_OUT"\n',
      outNames: ['X', 'Y'],
    });
    const [two, three, four] = await Promise.all([peer.finished(2), peer.finished(3), peer.finished(4)]);
    assert.equal(two.returnCode, 3);
    assert.deepEqual(two.out, { X: 'before' });
    assert.equal(three.returnCode, 1);
    assert.deepEqual(three.out, { X: 'set' });
    assert.equal(four.returnCode, 0);
    assert.deepEqual(four.out, { X: 'from-file', Y: 'a=b' });
  });
});
