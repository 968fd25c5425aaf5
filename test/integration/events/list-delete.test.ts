import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { clearById, createDefinition, getEvent, raise } from '../../helpers/events.ts';
import { assertError, postCreated as post } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * `GET /Event` lists events in the list shape (newest first, keyset pages, each item as `GET /Event/<id>`), filtered
 * by EventDefinition, Status and Since and by the partitions the caller may view; `DELETE /Event/<id>` removes a
 * Cleared event and refuses a Raised or Pending one. Times come from the virtual clock.
 */

const START = Date.UTC(2026, 2, 2, 8, 0, 0);
type Item = { eventId: string; Status: string };
const idsOf = (res: { json: { items: Item[] } }) => res.json.items.map((e) => e.eventId);

for (const backend of backends()) {
  describe(`listing and deleting events (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(START);
    let viewer: string; // View everywhere
    let global: string; // View and Delete on GLOBAL only
    before(async () => {
      t = await startTestServer(backend, {}, { clock });
      await post(t, '/Partition/B');
      viewer = await t.keyWithRoles('vera', ['Viewer']);
      global = await t.keyWithGrants('gil', ['EventDefinition:GLOBAL:View,Delete']);
      await createDefinition(t, 'GLOBAL.Ready'); // Ready1 Cleared, Ready2 Raised, Ready3 Pending
      await createDefinition(t, 'GLOBAL.Other'); // Other1 Raised, an hour later
      await createDefinition(t, 'B.Hidden'); // Hidden1 Raised, partition B
      await raise(t, 'GLOBAL.Ready');
      await raise(t, 'GLOBAL.Ready');
      await raise(t, 'GLOBAL.Ready');
      assert.equal((await clearById(t, 'Ready1')).status, 200);
      clock.advance(3_600_000);
      await raise(t, 'GLOBAL.Other');
      await raise(t, 'B.Hidden');
    });
    after(() => t.close());

    test('newest first, each item exactly as GET /Event/<id> renders it', async () => {
      const res = await t.req('GET', '/Event');
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(idsOf(res), ['Hidden1', 'Other1', 'Ready3', 'Ready2', 'Ready1']);
      assert.equal(res.json.next, null);
      for (const item of res.json.items) assert.deepEqual(item, await getEvent(t, item.eventId));
      assert.deepEqual(
        res.json.items.map((e: Item) => e.Status),
        ['Raised', 'Raised', 'Pending', 'Raised', 'Cleared'],
      );
    });

    test('filters: EventDefinition (a bare name means GLOBAL), Status, Since, and fields', async () => {
      assert.deepEqual(idsOf(await t.req('GET', '/Event?EventDefinition=Ready')), ['Ready3', 'Ready2', 'Ready1']);
      assert.deepEqual(idsOf(await t.req('GET', '/Event?EventDefinition=B.Hidden')), ['Hidden1']);
      assert.deepEqual(idsOf(await t.req('GET', '/Event?Status=cleared,Pending')), ['Ready3', 'Ready1']);
      assert.deepEqual(idsOf(await t.req('GET', '/Event?Status=Raised&EventDefinition=GLOBAL.Ready')), ['Ready2']);
      const since = encodeURIComponent(new Date(START + 1_800_000).toISOString());
      assert.deepEqual(idsOf(await t.req('GET', `/Event?Since=${since}`)), ['Hidden1', 'Other1']);
      assert.deepEqual(idsOf(await t.req('GET', '/Event?Since=2026/03/02 09:00:00,000 UTC')), ['Hidden1', 'Other1']);
      const some = await t.req('GET', '/Event?EventDefinition=Other&fields=eventId,status');
      assert.deepEqual(some.json.items, [{ eventId: 'Other1', Status: 'Raised' }]);
    });

    test('pages by the next cursor, without gaps or repeats', async () => {
      const seen: string[] = [];
      let after = '';
      for (let pages = 0; pages < 10; pages++) {
        const res = await t.req('GET', `/Event?Limit=2${after ? `&After=${after}` : ''}`);
        assert.equal(res.status, 200, res.body);
        assert.ok(res.json.items.length <= 2);
        seen.push(...idsOf(res));
        if (res.json.next === null) break;
        after = res.json.next;
      }
      assert.deepEqual(seen, ['Hidden1', 'Other1', 'Ready3', 'Ready2', 'Ready1']);
    });

    test('a caller sees only the events of the partitions it may view', async () => {
      const res = await t.req('GET', '/Event', { key: global });
      assert.deepEqual(idsOf(res), ['Other1', 'Ready3', 'Ready2', 'Ready1']);
      assert.deepEqual(idsOf(await t.req('GET', '/Event?EventDefinition=B.Hidden', { key: global })), []);
    });

    test('bad parameters → 400 naming them', async () => {
      assertError(await t.req('GET', '/Event?Status=Gone'), 400, /"Status": "Gone" is not one of/);
      assertError(await t.req('GET', '/Event?EventDefinition=a.b.c'), 400, /"EventDefinition"/);
      assertError(await t.req('GET', '/Event?Since=yesterday'), 400, /"Since"/);
      assertError(await t.req('GET', '/Event?Partition=GLOBAL'), 400, /Unknown query parameter "Partition"/);
      assertError(await t.req('GET', '/Event?After=bQ'), 400, /"After"/);
      assertError(await t.req('GET', '/Event?Limit=0'), 400, /"Limit"/);
    });

    test('DELETE of a Cleared event → 204 and it is gone; a Raised or Pending one → 409 and stays', async () => {
      await createDefinition(t, 'GLOBAL.Gone');
      await raise(t, 'GLOBAL.Gone');
      await raise(t, 'GLOBAL.Gone');
      assertError(await t.req('DELETE', '/Event/Gone1'), 409, /Event:Gone1 is Raised; clear it/);
      assertError(await t.req('DELETE', '/Event/Gone2'), 409, /Event:Gone2 is Pending; clear it/);
      assert.equal((await getEvent(t, 'Gone1')).Status, 'Raised');
      assert.equal((await getEvent(t, 'Gone2')).Status, 'Pending');
      assert.equal((await clearById(t, 'Gone1')).status, 200);
      const res = await t.req('DELETE', '/Event/Gone1');
      assert.equal(res.status, 204, res.body);
      assert.equal(res.body, '');
      assertError(await t.req('GET', '/Event/Gone1'), 404, 'Unable to find object Event:Gone1');
      assertError(await t.req('DELETE', '/Event/Gone1'), 404, 'Unable to find object Event:Gone1');
      assert.deepEqual(idsOf(await t.req('GET', '/Event?EventDefinition=Gone')), ['Gone2']);
      assert.equal((await getEvent(t, 'Gone2')).Status, 'Raised', 'clearing Gone1 raised Gone2');
      assert.equal((await raise(t, 'GLOBAL.Gone')).eventId, 'Gone3');
    });

    test("deleting a definition's newest events never lets a later raise take their ids again", async () => {
      await createDefinition(t, 'GLOBAL.Newest');
      for (const id of ['Newest1', 'Newest2']) {
        assert.equal((await raise(t, 'GLOBAL.Newest')).eventId, id);
        assert.equal((await clearById(t, id)).status, 200);
      }
      assert.equal((await t.req('DELETE', '/Event/Newest2')).status, 204);
      assert.equal((await t.req('DELETE', '/Event/Newest1')).status, 204);
      assert.deepEqual(idsOf(await t.req('GET', '/Event?EventDefinition=Newest')), []);
      assert.equal((await raise(t, 'GLOBAL.Newest')).eventId, 'Newest3');
      // Deleting the definition forgets its events, the deleted ones' numbers too.
      assert.equal((await clearById(t, 'Newest3')).status, 200);
      assert.equal((await t.req('DELETE', '/EventDefinition/GLOBAL.Newest')).status, 204);
      await createDefinition(t, 'GLOBAL.Newest');
      assert.equal((await raise(t, 'GLOBAL.Newest')).eventId, 'Newest1');
    });

    test('DELETE privileges: a Viewer → 403, a partition it cannot view → 404, unknown → 404; nothing changes', async () => {
      await createDefinition(t, 'B.Kept');
      await raise(t, 'B.Kept');
      assert.equal((await clearById(t, 'Kept1')).status, 200);
      assertError(
        await t.req('DELETE', '/Event/Kept1', { key: viewer }),
        403,
        /Delete privilege on EventDefinition:B.Kept/,
      );
      assertError(await t.req('DELETE', '/Event/Kept1', { key: global }), 404, 'Unable to find object Event:Kept1');
      assertError(await t.req('DELETE', '/Event/Nothing9'), 404, 'Unable to find object Event:Nothing9');
      assert.equal((await getEvent(t, 'Kept1')).Status, 'Cleared');
      assert.equal((await t.req('DELETE', '/Event/Ready1', { key: global })).status, 204);
    });
  });
}
