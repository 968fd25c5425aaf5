import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, type JobJson, submit, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** What reading a job needs: View on it and on what it refers to (its definition, queue and process server). */
const READ = ['Job:GLOBAL:View', 'JobDefinition:GLOBAL:View', 'Queue:GLOBAL:View', 'ProcessServer:GLOBAL:View'];

for (const backend of backends()) {
  describe(`job privileges (${backend.name})`, () => {
    let t: TestServer;
    let queued: JobJson;
    let done: JobJson;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/JobDefinition/GLOBAL.Echo', { body: { Script: 'echo hi' } })).status, 201);
      queued = await submit(t, 'GLOBAL.Echo');
      done = await submitSleep(t, 0);
      done = await waitForStatus(t, done.jobId, 'Completed');
    });
    after(() => t.close());

    test('without an API key → 401', async () => {
      const res = await t.req('GET', `/Job/${queued.jobId}`, { key: null });
      assert.equal(res.status, 401);
      assert.equal((await t.req('POST', '/Job/GLOBAL.Echo', { key: null })).status, 401);
    });

    test("without View on Job in the job's partition, GET /Job/<id> → 404 as for a missing job", async () => {
      for (const [user, grants] of [
        ['noview1', ['JobDefinition:GLOBAL:View', 'Queue:GLOBAL:View', 'ProcessServer:GLOBAL:View']],
        ['noview2', ['Job:Other:View,Control,Delete', 'JobDefinition:GLOBAL:View', 'Queue:GLOBAL:View']],
      ] as const) {
        const key = await t.keyWithGrants(user, [...grants]);
        assertError(
          await t.req('GET', `/Job/${queued.jobId}`, { key }),
          404,
          `Unable to find object Job:${queued.jobId}`,
        );
        assertError(
          await act(t, queued.jobId, 'cancel', undefined, key),
          404,
          `Unable to find object Job:${queued.jobId}`,
        );
        assertError(
          await t.req('DELETE', `/Job/${done.jobId}`, { key }),
          404,
          `Unable to find object Job:${done.jobId}`,
        );
      }
      assert.equal((await getJob(t, queued.jobId)).Status, 'Queued');
      assert.equal((await getJob(t, done.jobId)).Status, 'Completed');
    });

    test('with View on the job and what it refers to, GET /Job/<id> → 200', async () => {
      const key = await t.keyWithGrants('reader', READ);
      const res = await t.req('GET', `/Job/${done.jobId}`, { key });
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json, done);
    });

    test('with View on the job but not on its queue or process server → 403 naming it', async () => {
      const noQueue = await t.keyWithGrants('noqueue', [
        'Job:GLOBAL:View',
        'JobDefinition:GLOBAL:View',
        'ProcessServer:GLOBAL:View',
      ]);
      assertError(await t.req('GET', `/Job/${done.jobId}`, { key: noQueue }), 403, /Queue:GLOBAL\.System/);
      const noServer = await t.keyWithGrants('noserver', [
        'Job:GLOBAL:View',
        'JobDefinition:GLOBAL:View',
        'Queue:GLOBAL:View',
      ]);
      assertError(await t.req('GET', `/Job/${done.jobId}`, { key: noServer }), 403, /ProcessServer:GLOBAL\.System/);
      assert.equal(
        (await t.req('GET', `/Job/${queued.jobId}`, { key: noServer })).status,
        200,
        'a queued job has no process server yet',
      );
    });

    test('with View on the job but not on its definition → 403 naming the definition', async () => {
      const key = await t.keyWithGrants('nodef', ['Job:GLOBAL:View', 'Queue:GLOBAL:View', 'ProcessServer:GLOBAL:View']);
      assertError(await t.req('GET', `/Job/${done.jobId}`, { key }), 403, /JobDefinition:GLOBAL\.System_Sleep/);
    });

    test('with View but without Control, every action → 403 and the job is unchanged', async () => {
      const key = await t.keyWithGrants('viewonly', [...READ, 'JobDefinition:GLOBAL:Submit']);
      for (const action of [
        'cancel',
        'hold',
        'kill',
        'unknown',
        'runnow',
        'disable',
        'enable',
        'updateJob',
        'restart',
        'resubmit',
      ]) {
        const res = await act(t, queued.jobId, action, undefined, key);
        assertError(res, 403, /Control/);
      }
      assertError(await act(t, queued.jobId, '', { Description: 'x' }, key), 403, /Control/);
      assertError(await act(t, done.jobId, 'restart', undefined, key), 403, /Control/);
      assert.equal((await getJob(t, queued.jobId)).Status, 'Queued');
      assert.equal((await t.req('GET', `/Job/${done.jobId + 1}`)).status, 404, 'no job was made');
    });

    test('restart and resubmit need Submit on the definition as well as Control', async () => {
      const key = await t.keyWithGrants('controller', [...READ, 'Job:GLOBAL:Control']);
      assertError(await act(t, done.jobId, 'restart', undefined, key), 403, /Submit/);
      assertError(await act(t, done.jobId, 'resubmit', {}, key), 403, /Submit/);
      const hold = await act(t, queued.jobId, 'hold', undefined, key);
      assert.equal(hold.status, 200, hold.body);
      assert.equal((await act(t, queued.jobId, 'release', undefined, key)).status, 200);
    });

    test('without Delete on Job, DELETE /Job/<id> → 403 and the job is kept', async () => {
      const key = await t.keyWithGrants('nodelete', [...READ, 'Job:GLOBAL:Control']);
      assertError(await t.req('DELETE', `/Job/${done.jobId}`, { key }), 403, /Delete/);
      assert.equal((await getJob(t, done.jobId)).Status, 'Completed');
    });

    test('submit without Submit on the JobDefinition → 403, and no job', async () => {
      const key = await t.keyWithGrants('nosubmit', [...READ, 'Queue:GLOBAL:Submit']);
      const before = (await submit(t, 'GLOBAL.Echo')).jobId;
      assertError(await t.req('POST', '/Job/GLOBAL.Echo', { key, body: {} }), 403, /Submit/);
      assertError(await t.req('POST', '/Job/GLOBAL.System_Sleep/submit', { key }), 403, /Submit/);
      assert.equal((await t.req('GET', `/Job/${before + 1}`)).status, 404);
    });

    test('submit without View on the JobDefinition → 404 as for a missing one', async () => {
      const key = await t.keyWithGrants('nodefview', ['Job:GLOBAL:View', 'Queue:GLOBAL:View,Submit']);
      assertError(
        await t.req('POST', '/Job/GLOBAL.Echo', { key, body: {} }),
        404,
        'Unable to find object JobDefinition:GLOBAL.Echo',
      );
    });

    test('submit without Submit on the queue → 403 naming the queue', async () => {
      const key = await t.keyWithGrants('noqueuesubmit', [...READ, 'JobDefinition:GLOBAL:Submit']);
      assertError(await t.req('POST', '/Job/GLOBAL.Echo', { key, body: {} }), 403, /Queue:GLOBAL\.Default/);
    });

    test('with Submit on the definition and the queue, submit → 201 and the user is SubmittedBy', async () => {
      const key = await t.keyWithGrants('submitter', [...READ, 'JobDefinition:GLOBAL:Submit', 'Queue:GLOBAL:Submit']);
      const res = await t.req('POST', '/Job/GLOBAL.Echo', { key, body: {} });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.SubmittedBy, 'submitter');
    });

    test('built-in roles: a Viewer reads but cannot act; an Operator acts but cannot delete', async () => {
      const viewer = await t.keyWithRoles('viewer1', ['Viewer']);
      assert.equal((await t.req('GET', `/Job/${done.jobId}`, { key: viewer })).status, 200);
      assertError(await act(t, queued.jobId, 'hold', undefined, viewer), 403, /Control/);
      assertError(await t.req('POST', '/Job/GLOBAL.Echo', { key: viewer, body: {} }), 403, /Submit/);
      const operator = await t.keyWithRoles('operator1', ['Operator']);
      const job = await submit(t, 'GLOBAL.Echo', {}, operator);
      assert.equal((await act(t, job.jobId, 'cancel', undefined, operator)).status, 200);
      assertError(await t.req('DELETE', `/Job/${job.jobId}`, { key: operator }), 403, /Delete/);
    });
  });
}
