import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** kill, unknown and external completion of jobs running on the real local agent. */
for (const backend of backends()) {
  describe(`kill and external completion (${backend.name})`, () => {
    let t: TestServer;
    const get = (path: string) => t.req('GET', path);
    before(async () => {
      t = await startE2eServer(backend, { killGraceMs: 1000 });
    });
    after(() => t.close());

    test('kill takes the whole process tree: the job ends Killed and no child survives', async () => {
      const pidFile = join(t.config.dataDir, 'kill-tree.pid'); // removed with the data folder
      const r = await t.req('POST', '/JobDefinition/GLOBAL.Tree', {
        body: { JobDefinitionType: 'BASH', Script: `sleep 300 & echo $! > ${pidFile}; trap '' TERM; wait` },
      });
      assert.equal(r.status, 201, r.body);
      const id = (await t.req('POST', '/Job/GLOBAL.Tree')).json.jobId;
      await waitForJob(get, id, ['Running']);
      const child = await waitFor('the background child', async () => {
        const text = (() => {
          try {
            return readFileSync(pidFile, 'utf8').trim();
          } catch {
            return '';
          }
        })();
        return text ? Number(text) : undefined;
      });
      assert.ok(alive(child));
      const killed = await t.req('PUT', `/Job/${id}/kill`);
      assert.equal(killed.status, 200, killed.body);
      assert.equal(killed.json.Status, 'Killing');
      const job = await waitForJob(get, id);
      assert.equal(job.Status, 'Killed');
      await waitFor('the background child to be gone', async () => (alive(child) ? undefined : true));
      const again = await t.req('PUT', `/Job/${id}/kill`);
      assert.equal(again.status, 409);
      assert.match(again.json.message, /Killed/);
    });

    test('an External job stays Running after its script until updateJob sets its final status', async () => {
      const r = await t.req('POST', '/JobDefinition/GLOBAL.Ext', {
        body: {
          JobDefinitionType: 'BASH',
          Script: 'echo started',
          CompletionStrategy: 'External',
          Parameters: [
            { Name: 'TICKET', Direction: 'Out' },
            { Name: 'ROWS', Direction: 'Out', DataType: 'Number' },
          ],
        },
      });
      assert.equal(r.status, 201, r.body);
      const id = (await t.req('POST', '/Job/GLOBAL.Ext')).json.jobId;
      const running = await waitFor('the script to end', async () => {
        const j = (await get(`/Job/${id}`)).json;
        return j.Status === 'Running' && j.ReturnCode === 0 ? j : undefined;
      });
      assert.equal(running.RunEnd, null);
      const bad = await t.req('PUT', `/Job/${id}/updateJob`, { body: { Status: 'Running' } });
      assert.equal(bad.status, 400);
      const badParam = await t.req('PUT', `/Job/${id}/updateJob`, {
        body: { JobParameters: [{ Name: 'ROWS', OutValue: 'many' }] },
      });
      assert.equal(badParam.status, 400);
      assert.match(badParam.json.message, /ROWS/);
      const notes = await t.req('PUT', `/Job/${id}/updateJob`, { body: { JobNotes: ['half way'] } });
      assert.equal(notes.json.Status, 'Running');
      const done = await t.req('PUT', `/Job/${id}/updateJob`, {
        body: {
          Status: 'Completed',
          Description: 'closed by the ticket system',
          JobNotes: ['ticket closed'],
          JobParameters: [
            { Name: 'TICKET', OutValue: 'T-17' },
            { Name: 'ROWS', OutValue: 5 },
          ],
        },
      });
      assert.equal(done.status, 200, done.body);
      assert.equal(done.json.Status, 'Completed');
      const job = (await get(`/Job/${id}`)).json;
      assert.equal(job.Description, 'closed by the ticket system');
      assert.ok(
        job.JobNotes.includes('half way') && job.JobNotes.includes('ticket closed'),
        JSON.stringify(job.JobNotes),
      );
      assert.deepEqual(
        job.JobParameters.map(
          (p: { OutValueString: string | null; OutValueNumber: number | null }) => p.OutValueString ?? p.OutValueNumber,
        ),
        ['T-17', 5],
      );
      assert.notEqual(job.RunEnd, null);
      const twice = await t.req('PUT', `/Job/${id}/updateJob`, { body: { Status: 'Error' } });
      assert.equal(twice.status, 409);
      assert.match(twice.json.message, /Completed/);
    });

    test('unknown abandons a running process: the job is Unknown at once, the process is not killed', async () => {
      const pidFile = join(t.config.dataDir, 'abandoned.pid');
      await t.req('POST', '/JobDefinition/GLOBAL.Long', {
        // Long enough to be seen Running on any machine; the test kills it at the end.
        body: { JobDefinitionType: 'BASH', Script: `echo $$ > ${pidFile}; exec sleep 300` },
      });
      const id = (await t.req('POST', '/Job/GLOBAL.Long')).json.jobId;
      await waitForJob(get, id, ['Running']);
      const pid = await waitFor('the pid', async () => {
        try {
          return Number(readFileSync(pidFile, 'utf8').trim()) || undefined;
        } catch {
          return undefined;
        }
      });
      const r = await t.req('PUT', `/Job/${id}/unknown`);
      assert.equal(r.status, 200, r.body);
      assert.equal(r.json.Status, 'Unknown');
      assert.ok(alive(pid), 'the abandoned process keeps running');
      process.kill(pid, 'SIGKILL');
    });
  });
}
