import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { suiteServer } from '../../helpers/cli.ts';
import { maxRunPids, overrunScript } from '../../helpers/max-run.ts';
import { processRuns, until } from '../../helpers/processes.ts';
import { waitFor } from '../../helpers/wait.ts';

const KEY = 'max-run-crash-admin-key-0123456789';

/**
 * MaxRunTime is no timer of a server process (docs/architecture.md §6b): a real `millrace serve` killed by SIGKILL
 * while a limited job runs on its agent, and started again, still kills the job at its limit, with its processes.
 */
for (const backend of backends()) {
  describe(`MaxRunTime across a server crash (${backend.name})`, () => {
    const server = suiteServer(backend, { MILLRACE_ADMIN_API_KEY: KEY });
    const { api, start } = server;

    test('the job is killed at its limit by the restarted server, its process tree gone', async () => {
      const dir = server.db.dataDir;
      const r = await api('POST', '/JobDefinition/GLOBAL.Overrun', {
        JobDefinitionType: 'BASH',
        MaxRunTime: 2,
        Script: overrunScript(dir),
      });
      assert.equal(r.status, 201, r.body);
      const id = (await api('POST', '/Job/GLOBAL.Overrun')).json.jobId as number;
      const pids = await maxRunPids(dir, id);
      // The script wrote its pids before the agent's `started` report reached the server: wait for Running.
      await waitFor(
        'the job to run',
        async () => (await api('GET', `/Job/${id}`)).json.Status === 'Running' || undefined,
      );
      const gone = new Promise((resolve) => server.serve.child.once('exit', resolve));
      server.serve.child.kill('SIGKILL');
      await gone;
      await start();
      const job = await waitFor('the job to end', async () => {
        const j = (await api('GET', `/Job/${id}`)).json;
        return ['Completed', 'Error', 'Killed', 'Unknown'].includes(j.Status) ? j : undefined;
      });
      assert.equal(job.Status, 'Killed', JSON.stringify(job));
      const items = (await api('GET', `/Job/${id}/history`)).json.items as Array<Record<string, string>>;
      assert.deepEqual(
        items.filter((h) => h.Cause === 'maxruntime').map((h) => [h.ToStatus, h.Detail]),
        [
          ['Killing', `Job:${id} ran past its MaxRunTime of 2 s`],
          ['Killed', `Job:${id} ran past its MaxRunTime of 2 s`],
        ],
      );
      await until(() => pids.every((p) => !processRuns(p)), `the processes ${pids.join(', ')} to be gone`);
    });
  });
}
