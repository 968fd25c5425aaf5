import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { assertError, staysIn, submit, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`process server start, stop and restart (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/JobDefinition/GLOBAL.Echo', { body: { Script: 'echo hi' } })).status, 201);
    });
    after(() => t.close());

    const statusOf = async (key: string) => {
      const res = await t.req('GET', `/ProcessServer/${key}`);
      assert.equal(res.status, 200, res.body);
      return { Status: res.json.Status, DesiredStatus: res.json.DesiredStatus };
    };

    test('GLOBAL.Local without an agent is Connecting', async () => {
      assert.deepEqual(await statusOf('GLOBAL.Local'), { Status: 'Connecting', DesiredStatus: 'Running' });
      assert.deepEqual(await statusOf('GLOBAL.System'), { Status: 'Running', DesiredStatus: 'Running' });
    });

    test('stop → Shutdown (no agent, nothing running), answered with the process server', async () => {
      const res = await t.req('PUT', '/ProcessServer/GLOBAL.Local/stop');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.businessKey, 'ProcessServer:GLOBAL.Local');
      assert.equal(res.json.Status, 'Shutdown');
      assert.equal(res.json.DesiredStatus, 'Shutdown');
      assert.deepEqual(await statusOf('GLOBAL.Local'), { Status: 'Shutdown', DesiredStatus: 'Shutdown' });
    });

    test('a job for a stopped process server waits Queued', async () => {
      const job = await submit(t, 'GLOBAL.Echo');
      await staysIn(t, job.jobId, 'Queued', 150);
    });

    test('start → back to waiting for its agent (Connecting), DesiredStatus Running', async () => {
      const res = await t.req('PUT', '/ProcessServer/GLOBAL.Local/start');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Status, 'Connecting');
      assert.equal(res.json.DesiredStatus, 'Running');
      assert.deepEqual(await statusOf('GLOBAL.Local'), { Status: 'Connecting', DesiredStatus: 'Running' });
    });

    test('restart of a started process server leaves it started', async () => {
      const res = await t.req('PUT', '/ProcessServer/Local/restart');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.DesiredStatus, 'Running');
      assert.equal(res.json.businessKey, 'ProcessServer:GLOBAL.Local', 'a bare name is GLOBAL');
    });

    test('an unknown action → 400 naming it; the process server is unchanged', async () => {
      assertError(await t.req('PUT', '/ProcessServer/GLOBAL.Local/pause'), 400, /pause/);
      assert.deepEqual(await statusOf('GLOBAL.Local'), { Status: 'Connecting', DesiredStatus: 'Running' });
    });

    test('GLOBAL.System cannot be stopped → 409; it keeps running jobs', async () => {
      assertError(await t.req('PUT', '/ProcessServer/GLOBAL.System/stop'), 409, /GLOBAL\.System/);
      assert.deepEqual(await statusOf('GLOBAL.System'), { Status: 'Running', DesiredStatus: 'Running' });
      const job = await submitSleep(t, 0);
      await waitForStatus(t, job.jobId, 'Completed');
      const start = await t.req('PUT', '/ProcessServer/GLOBAL.System/start');
      assert.equal(start.status, 200, start.body);
      assert.equal(start.json.Status, 'Running');
    });

    test('a process server that does not exist → 404', async () => {
      assertError(
        await t.req('PUT', '/ProcessServer/GLOBAL.Nope/stop'),
        404,
        'Unable to find object ProcessServer:GLOBAL.Nope',
      );
    });

    test('stop needs Control on the process server: View alone → 403, no View → 404', async () => {
      const viewer = await t.keyWithRoles('psviewer', ['Viewer']);
      assertError(await t.req('PUT', '/ProcessServer/GLOBAL.Local/stop', { key: viewer }), 403, /Control/);
      const blind = await t.keyWithGrants('psblind', ['Job:GLOBAL:View']);
      assertError(
        await t.req('PUT', '/ProcessServer/GLOBAL.Local/stop', { key: blind }),
        404,
        'Unable to find object ProcessServer:GLOBAL.Local',
      );
      assert.deepEqual(await statusOf('GLOBAL.Local'), { Status: 'Connecting', DesiredStatus: 'Running' });
    });
  });
}
