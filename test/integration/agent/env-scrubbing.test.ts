import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';

describe("agent: a job's environment", () => {
  const suite = agentSuite();

  it('holds no MILLRACE_ variable of the agent, only the job ones, the parameters and the rest', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir(), {
      env: {
        MILLRACE_ADMIN_PASSWORD: 'secret-1',
        MILLRACE_DATABASE: 'secret-2',
        Millrace_Mixed: 'secret-3',
        KEEP_ME: 'kept',
      },
    });
    const env = (id: number) =>
      Object.fromEntries(
        peer
          .file(id, 'stdout.log')
          .toString()
          .split('\0')
          .filter(Boolean)
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      ) as Record<string, string>;
    const params = { PARAM_ONE: 'one', MILLRACE_JOB_ID: 'a parameter cannot override this' };
    peer.run({ jobId: 1, scriptType: 'BASH', script: 'env -0', env: params });
    peer.run({
      jobId: 2,
      scriptType: 'PYTHON',
      script: 'import os, sys\nfor k, v in os.environ.items(): sys.stdout.write(k + "=" + v + "\\0")',
      env: params,
    });
    await Promise.all([peer.finished(1), peer.finished(2)]);
    for (const id of [1, 2]) {
      const e = env(id);
      const millrace = Object.keys(e)
        .filter((k) => k.toUpperCase().startsWith('MILLRACE_'))
        .sort();
      assert.deepEqual(millrace, ['MILLRACE_ATTEMPT', 'MILLRACE_FILES', 'MILLRACE_JOB_ID', 'MILLRACE_OUT']);
      assert.equal(e.MILLRACE_JOB_ID, String(id));
      assert.equal(e.MILLRACE_ATTEMPT, '1');
      assert.match(e.MILLRACE_FILES ?? '', new RegExp(`/work/${id}\\.1/files$`));
      assert.equal(e.KEEP_ME, 'kept');
      assert.equal(e.PARAM_ONE, 'one');
      assert.ok(!Object.values(e).some((v) => v.startsWith('secret-')));
    }
  });
});
