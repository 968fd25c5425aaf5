import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { suiteServer } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';

const KEY = 'graceful-test-admin-key-0123456789';

/**
 * SIGTERM stops the server within seconds while a job runs; the local agent lets the job finish,
 * keeps its report in its spool, and delivers it to the next server, which records it once.
 */
for (const backend of backends()) {
  describe(`SIGTERM while a job runs (${backend.name})`, () => {
    const server = suiteServer(backend, { MILLRACE_ADMIN_API_KEY: KEY });
    const { api, start } = server;

    test('the server exits promptly, the job finishes on the agent, and its outcome arrives after the restart', async () => {
      const marker = join(server.db.dataDir, 'graceful.txt');
      // The job runs until the test lets it go (the file `go`), so it is Running however slow the machine, and
      // ends (writing `ended`) only once no server runs.
      const go = join(server.db.dataDir, 'graceful-go');
      const ended = join(server.db.dataDir, 'graceful-ended');
      await api('POST', '/JobDefinition/GLOBAL.Slow', {
        JobDefinitionType: 'BASH',
        Script: `echo "$MILLRACE_JOB_ID:$$" >> ${marker}; while [ ! -e ${go} ]; do sleep 0.1; done; echo done; touch ${ended}; exit 5`,
        ReturncodeMapToCompleted: '5',
      });
      const id = (await api('POST', '/Job/GLOBAL.Slow')).json.jobId;
      await waitFor('Running', async () =>
        (await api('GET', `/Job/${id}`)).json.Status === 'Running' ? true : undefined,
      );
      const t0 = Date.now();
      const code = await server.serve.stop();
      assert.equal(code, 0);
      // Exit code 0 says it did not wait for the job into its grace (10 s, then exit 1); the bound only catches a hang.
      assert.ok(Date.now() - t0 < 30_000, `stopping took ${Date.now() - t0} ms`);
      writeFileSync(go, '');
      await waitFor('the job to end while no server runs', async () => (existsSync(ended) ? true : undefined));
      await start();
      const job = await waitFor('the spooled report', async () => {
        const j = (await api('GET', `/Job/${id}`)).json;
        return j.Status === 'Completed' ? j : undefined;
      });
      assert.equal(job.ReturnCode, 5);
      const stdout = job.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
      assert.equal(stdout.Size, 'done\n'.length);
      assert.equal(readFileSync(marker, 'utf8').trim().split('\n').length, 1, 'ran once');
    });
  });
}
