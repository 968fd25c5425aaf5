import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';

describe('agent: a job that cannot start', () => {
  const suite = agentSuite();

  it('is reported finished with an error and no return code when the interpreter is missing', async () => {
    const peer = suite.peer();
    const emptyBin = join(suite.dir(), 'empty-bin');
    await mkdir(emptyBin);
    await startAgent(peer, suite.dir(), { env: { PATH: emptyBin } });
    peer.run({ jobId: 1, scriptType: 'PYTHON', script: 'print(1)' });
    peer.run({ jobId: 2, scriptType: 'BASH', script: 'echo 1' });
    peer.run({ jobId: 3, scriptType: 'NODE', script: 'console.log(1)' });
    const [py, bash, node] = await Promise.all([1, 2, 3].map((id) => peer.finished(id)));
    assert.equal(py?.returnCode, null);
    assert.match(py?.error ?? '', /python3 not found/);
    assert.match(bash?.error ?? '', /bash not found/);
    assert.deepEqual(py?.files, []);
    // NODE runs the agent's own node binary, so it needs no PATH.
    assert.equal(node?.returnCode, 0);
    assert.equal(node?.error, undefined);
    assert.equal(peer.messages('started').length, 1);
  });

  it('is reported finished with an error when a parameter cannot be an environment variable', async () => {
    const peer = suite.peer();
    peer.run({ jobId: 4, scriptType: 'NODE', script: '', env: { 'A=B': 'x' } });
    const f = await peer.finished(4);
    assert.match(f.error ?? '', /cannot be an environment variable name/);
  });
});
