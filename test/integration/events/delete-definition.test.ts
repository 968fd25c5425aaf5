import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { clearById, clearDefinition, createDefinition, raise } from '../../helpers/events.ts';
import { assertError } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** An EventDefinition cannot be deleted while it has a Raised or Pending event; its Cleared history goes with it. */

for (const backend of backends()) {
  describe(`deleting an event definition with events (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    test('a Raised event → 409 naming it; a Pending one → 409; once all are cleared → 204 and the history goes', async () => {
      await createDefinition(t, 'GLOBAL.Live');
      await raise(t, 'GLOBAL.Live');
      await raise(t, 'GLOBAL.Live');
      assertError(
        await t.req('DELETE', '/EventDefinition/GLOBAL.Live'),
        409,
        /EventDefinition:GLOBAL\.Live.*Raised event Event:Live1/,
      );
      assert.equal((await t.req('GET', '/EventDefinition/GLOBAL.Live')).status, 200, 'it is kept');
      assert.equal((await clearById(t, 'Live1')).status, 200);
      assertError(await t.req('DELETE', '/EventDefinition/GLOBAL.Live'), 409, /Raised event Event:Live2/);
      await raise(t, 'GLOBAL.Live');
      assert.equal((await clearById(t, 'Live2')).status, 200);
      await raise(t, 'GLOBAL.Live');
      assert.equal((await clearDefinition(t, 'GLOBAL.Live', 'clearAllPending')).json.Cleared.length, 1);
      assertError(await t.req('DELETE', '/EventDefinition/GLOBAL.Live'), 409, /Raised event Event:Live3/);
      assert.equal((await clearDefinition(t, 'GLOBAL.Live', 'clear')).status, 200);

      assert.equal((await t.req('GET', '/Event/Live1')).status, 200, 'the history is there until the delete');
      assert.equal((await t.req('DELETE', '/EventDefinition/GLOBAL.Live')).status, 204);
      for (const id of ['Live1', 'Live2', 'Live3', 'Live4'])
        assertError(await t.req('GET', `/Event/${id}`), 404, `Unable to find object Event:${id}`);
      // A new definition of the same name starts counting again.
      await createDefinition(t, 'GLOBAL.Live');
      assert.equal((await raise(t, 'GLOBAL.Live')).eventId, 'Live1');
    });

    test('a Pending event whose Raised one was cleared by id is promoted, so it still blocks the delete', async () => {
      await createDefinition(t, 'GLOBAL.Queue2');
      await raise(t, 'GLOBAL.Queue2');
      await raise(t, 'GLOBAL.Queue2');
      assert.equal((await clearById(t, 'Queue21')).status, 200);
      assertError(await t.req('DELETE', '/EventDefinition/GLOBAL.Queue2'), 409, /Event:Queue22/);
    });

    test('a definition that never had events deletes as before', async () => {
      await createDefinition(t, 'GLOBAL.Unused');
      assert.equal((await t.req('DELETE', '/EventDefinition/GLOBAL.Unused')).status, 204);
    });
  });
}
