import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../helpers/backends.ts';
import { assertError, getJob, submit } from '../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/**
 * Server behaviours the README's examples ran into. The README test
 * (test/e2e/readme-examples.test.ts) runs the examples themselves.
 */

for (const backend of backends()) {
  describe(`behaviours behind the README (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    test('the first start makes <data>/trusted-keys/ for the public keys of signed CARs', async () => {
      assert.ok((await stat(join(t.config.dataDir, 'trusted-keys'))).isDirectory());
    });

    test('a UserMessage participant that does not exist is refused, naming it; existing users and roles are taken', async () => {
      const def = (participants: string[]) => ({
        JobDefinitionType: 'UserMessage',
        DefaultQueue: 'GLOBAL.System',
        UserMessage: { Text: 'Go?', Responses: [{ Response: 'Go', Status: 'Completed' }], Participants: participants },
      });
      assertError(
        await t.req('POST', '/JobDefinition/Approve', { body: def(['admin', 'bob']) }),
        400,
        /^Field "UserMessage.Participants\[1\]": there is no user bob/,
      );
      assertError(
        await t.req('POST', '/JobDefinition/Approve', { body: def(['role:Nobody']) }),
        400,
        /there is no role Nobody/,
      );
      assert.equal((await t.req('GET', '/JobDefinition/Approve')).status, 404, 'nothing stored');
      await t.keyWithRoles('bob', ['Operator']);
      const ok = await t.req('POST', '/JobDefinition/Approve', { body: def(['bob', 'role:Operator']) });
      assert.equal(ok.status, 201, ok.body);
    });

    test('a webhook host that does not resolve is accepted at definition (checked at each send); an internal one is not', async () => {
      const esc = (address: string) => ({ Recipients: [{ Kind: 'Webhook', Address: address }] });
      const ok = await t.req('POST', '/AlertEscalation/Later', { body: esc('https://hooks.millrace-test.invalid/x') });
      assert.equal(ok.status, 201, ok.body);
      assertError(
        await t.req('POST', '/AlertEscalation/Inside', { body: esc('http://127.0.0.1:9/x') }),
        400,
        /Recipients\[0\]\.Address.*loopback/,
      );
    });

    test('a Queued job that no process server can run says why in GET /Job, until a queue provider links one', async () => {
      assert.equal((await t.req('POST', '/Queue/Orphan', { body: {} })).status, 201);
      assert.equal(
        (await t.req('POST', '/JobDefinition/Stranded', { body: { Script: 'echo', DefaultQueue: 'GLOBAL.Orphan' } }))
          .status,
        201,
      );
      const job = await submit(t, 'GLOBAL.Stranded');
      const read = await getJob(t, job.jobId);
      assert.equal(read.Status, 'Queued');
      assert.deepEqual(read.JobNotes, [
        'Waiting: no process server serves Queue:GLOBAL.Orphan; add a QueueProvider linking one to it',
      ]);
      assert.equal((await t.req('POST', '/QueueProvider/GLOBAL.Local.GLOBAL.Orphan', { body: {} })).status, 201);
      const served = await getJob(t, job.jobId);
      assert.deepEqual(served.JobNotes, []);
    });
  });
}
