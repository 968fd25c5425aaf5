import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { JOB_STATUS_NAMES } from '../../../src/domain/job-status.ts';
import { backends } from '../../helpers/backends.ts';
import { clearDefinition, createDefinition, raise } from '../../helpers/events.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * AutoSubmit when an event becomes Raised (engine/event-waits.ts): every definition whose WaitEvents name the event
 * (in any position of the list) is submitted by its mode, Always each time, OnlyOne while none of its jobs has
 * started, Never not; definitions waiting for other events are left alone. Jobs are held on submit, so none runs.
 */

for (const backend of backends()) {
  describe(`AutoSubmit on a raise (${backend.name})`, () => {
    let t: TestServer;
    const define = async (name: string, waitEvents: unknown[]) => {
      const body = { JobDefinitionType: 'BASH', Script: 'true', HoldOnSubmit: true, WaitEvents: waitEvents };
      const res = await t.req('POST', `/JobDefinition/GLOBAL.${name}`, { body });
      assert.equal(res.status, 201, `create JobDefinition:GLOBAL.${name}: ${res.body}`);
    };
    const jobsOf = (name: string) =>
      t.server.engine.mutate((tx) =>
        tx.jobs.listByStatus(JOB_STATUS_NAMES, { definition: `GLOBAL.${name}`, limit: 100 }),
      );
    const counts = async () => {
      const out: Record<string, number> = {};
      for (const name of ['Always', 'OnlyOne', 'Never', 'Second', 'OtherOnly']) out[name] = (await jobsOf(name)).length;
      return out;
    };

    before(async () => {
      t = await startTestServer(backend);
      await createDefinition(t, 'GLOBAL.Go');
      await createDefinition(t, 'GLOBAL.Other');
      await define('Always', [{ EventDefinition: 'GLOBAL.Go', AutoSubmit: 'Always' }]);
      await define('OnlyOne', [{ EventDefinition: 'GLOBAL.Go', AutoSubmit: 'OnlyOne' }]);
      await define('Never', [{ EventDefinition: 'GLOBAL.Go', AutoSubmit: 'Never' }]);
      await define('Second', [
        { EventDefinition: 'GLOBAL.Other' },
        { EventDefinition: 'GLOBAL.Go', AutoSubmit: 'Always' },
      ]);
      await define('OtherOnly', [{ EventDefinition: 'GLOBAL.Other', AutoSubmit: 'Always' }]);
    });
    after(() => t.close());

    test('each raise submits the definitions naming the event by their mode, and no other', async () => {
      assert.deepEqual(await counts(), { Always: 0, OnlyOne: 0, Never: 0, Second: 0, OtherOnly: 0 });
      await raise(t, 'GLOBAL.Go');
      assert.deepEqual(await counts(), { Always: 1, OnlyOne: 1, Never: 0, Second: 1, OtherOnly: 0 });
      const [job] = await jobsOf('Always');
      assert.ok(job?.data.notes.includes('Submitted when event GLOBAL.Go was raised (AutoSubmit Always)'));
      // A raise while one is Raised is Pending and submits nothing; clearing promotes it, which submits again.
      await raise(t, 'GLOBAL.Go');
      assert.deepEqual(await counts(), { Always: 1, OnlyOne: 1, Never: 0, Second: 1, OtherOnly: 0 });
      const cleared = await clearDefinition(t, 'GLOBAL.Go', 'clear');
      assert.equal(cleared.status, 200, cleared.body);
      assert.deepEqual(await counts(), { Always: 2, OnlyOne: 1, Never: 0, Second: 2, OtherOnly: 0 });
    });
  });
}
