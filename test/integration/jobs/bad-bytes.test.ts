import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { ADMIN_KEY, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * A JSON body that is not UTF-8 is refused (not stored as U+FFFD), and job fields follow the
 * characters rule of objects (every value must have an XML form): submit, resubmit, parameter values.
 */
for (const backend of backends()) {
  describe(`bad bytes in JSON bodies (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      const def = await t.req('POST', '/JobDefinition/GLOBAL.Texts', {
        body: { JobDefinitionType: 'BASH', Script: 'true', Parameters: [{ Name: 'Text', DataType: 'String' }] },
      });
      assert.equal(def.status, 201, def.body);
    });
    after(() => t.close());

    const jobCount = async () =>
      (await t.server.store.jobs.listByStatus(['Queued', 'Scheduled', 'Held', 'Completed', 'Running'], { limit: 1000 }))
        .length;

    test('invalid UTF-8 in a body → 400, nothing stored', async () => {
      for (const bytes of [
        Buffer.from([
          0x7b, 0x22, 0x44, 0x65, 0x73, 0x63, 0x72, 0x69, 0x70, 0x74, 0x69, 0x6f, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0x22,
          0x7d,
        ]),
        Buffer.concat([Buffer.from('{"Description":"'), Buffer.from([0xc3]), Buffer.from('"}')]), // truncated sequence
        Buffer.concat([Buffer.from('{"Description":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), // surrogate
      ]) {
        const put = await t.req('POST', '/Queue/GLOBAL.Bytes', {
          payload: bytes,
          headers: { 'content-type': 'application/json' },
        });
        assertError(put, 400, /UTF-8/);
        const before = await jobCount();
        const sub = await t.req('POST', '/Job/GLOBAL.System_Sleep', {
          payload: bytes,
          headers: { 'content-type': 'application/json' },
        });
        assertError(sub, 400, /UTF-8/);
        assert.equal(await jobCount(), before);
      }
      assert.equal((await t.req('GET', '/Queue/GLOBAL.Bytes')).status, 404);
      // Valid multi-byte UTF-8 still works.
      const ok = await t.req('POST', '/Queue/GLOBAL.Bytes', { body: { Description: 'Größe ✓ 𝄞' } });
      assert.equal(ok.status, 201, ok.body);
      assert.equal((await t.req('GET', '/Queue/GLOBAL.Bytes')).json.Description, 'Größe ✓ 𝄞');
    });

    test('a job Description or String parameter value with a character XML cannot carry → 400', async () => {
      const before = await jobCount();
      for (const bad of ['\uffff', '\u0001', 'a\ud800b']) {
        assertError(
          await t.req('POST', '/Job/GLOBAL.System_Sleep', { body: { Description: `x${bad}` } }),
          400,
          /Description/,
        );
        assertError(
          await t.req('POST', '/Job/GLOBAL.Texts', { body: { JobParameters: [{ Name: 'Text', InValueString: bad }] } }),
          400,
          /Text/,
        );
      }
      assert.equal(await jobCount(), before, 'no job was created');
      const job = await submitSleep(t, 0, { Description: 'plain' });
      await waitForStatus(t, job.jobId, 'Completed');
      for (const action of ['', 'resubmit']) {
        const res = await act(t, job.jobId, action, { Description: 'bad\uffff' });
        assertError(res, 400, /Description/);
      }
      assert.equal(await jobCount(), before + 1, 'resubmit created nothing');
      const raw = await t.req('GET', `/Job/${job.jobId}`, { key: ADMIN_KEY });
      assert.equal(raw.json.Description, 'plain');
    });
  });
}
