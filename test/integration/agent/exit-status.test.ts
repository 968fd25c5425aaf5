import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: how a job ended', () => {
  const suite = agentSuite();

  it('reports the exit code of every script type', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir());
    peer.run({ jobId: 1, scriptType: 'BASH', script: 'exit 42' });
    peer.run({ jobId: 2, scriptType: 'SH', script: 'exit 7' });
    peer.run({ jobId: 3, scriptType: 'PYTHON', script: 'import sys\nsys.exit(5)' });
    peer.run({ jobId: 4, scriptType: 'NODE', script: 'process.exitCode = 9;' });
    peer.run({ jobId: 5, scriptType: 'PYTHON', script: 'def broken(:' });
    const codes = await Promise.all([1, 2, 3, 4, 5].map(async (id) => (await peer.finished(id)).returnCode));
    assert.deepEqual(codes, [42, 7, 5, 9, 1]);
    assert.match(peer.file(5, 'stderr.log').toString(), /SyntaxError/);
  });

  it('reports a signal with a null return code, killed false when no kill was asked', async () => {
    const peer = suite.peer();
    peer.run({ jobId: 10, scriptType: 'BASH', script: 'kill -TERM $$' });
    peer.run({ jobId: 11, scriptType: 'SH', script: 'kill -KILL $$' });
    peer.run({
      jobId: 12,
      scriptType: 'NODE',
      script: "process.kill(process.pid, 'SIGUSR2'); setTimeout(() => {}, 5000);",
    });
    const [a, b, c] = await Promise.all([10, 11, 12].map((id) => peer.finished(id)));
    assert.deepEqual([a?.returnCode, a?.signal, a?.killed], [null, 'SIGTERM', false]);
    assert.deepEqual([b?.returnCode, b?.signal, b?.killed], [null, 'SIGKILL', false]);
    assert.deepEqual([c?.returnCode, c?.signal, c?.killed], [null, 'SIGUSR2', false]);
  });
});
