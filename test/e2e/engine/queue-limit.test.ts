import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { mostAtOnce } from '../../helpers/processes.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitForJob } from '../../helpers/wait.ts';

/**
 * A queue's ExecutionSize is never exceeded, not even for a moment: the jobs themselves record when their process
 * started and ended, and the intervals never overlap more than the limit.
 */
for (const backend of backends()) {
  describe(`queue limit with real processes (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startE2eServer(backend);
    });
    after(() => t.close());

    test('ExecutionSize 2 on a queue served by an 8-slot agent: at most 2 processes at any instant', async () => {
      const log = join(t.config.dataDir, 'intervals.txt');
      for (const [path, body] of [
        ['/Queue/GLOBAL.Two', { ExecutionSize: 2 }],
        ['/QueueProvider/GLOBAL.Local.GLOBAL.Two', {}],
        [
          '/JobDefinition/GLOBAL.Interval',
          {
            JobDefinitionType: 'BASH',
            DefaultQueue: 'GLOBAL.Two',
            // The first jobs wait until two have started, so the limit is reached however slowly processes start
            // (a hang, not a pass, should it never allow two); the rest run 0.2 s each.
            Script: `echo "start $(date +%s%N) $MILLRACE_JOB_ID" >> ${log}; while [ "$(grep -c start ${log})" -lt 2 ]; do sleep 0.05; done; sleep 0.2; echo "end $(date +%s%N) $MILLRACE_JOB_ID" >> ${log}`,
          },
        ],
      ] as const)
        assert.equal((await t.req('POST', path, { body })).status, 201, path);
      const ids = await Promise.all(
        Array.from({ length: 10 }, async () => (await t.req('POST', '/Job/GLOBAL.Interval')).json.jobId as number),
      );
      for (const id of ids) assert.equal((await waitForJob((p) => t.req('GET', p), id)).Status, 'Completed');
      const { most, lines } = mostAtOnce(log);
      assert.equal(lines, 20);
      assert.equal(most, 2, 'the limit is used and never exceeded');
    });
  });
}
