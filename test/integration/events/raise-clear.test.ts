import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import {
  clearById,
  clearDefinition,
  createDefinition,
  getEvent,
  raise,
  raiseRequest,
  statuses,
} from '../../helpers/events.ts';
import { assertError } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** Raise and clear: at most one Raised event per definition, the others Pending behind it. */

// 2026-01-15 09:00:00 UTC is 10:00 in Amsterdam (CET).
const START = Date.UTC(2026, 0, 15, 9, 0, 0);

for (const backend of backends()) {
  describe(`raising and clearing events (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(START);
    before(async () => {
      t = await startTestServer(backend, { defaultTimeZone: 'Europe/Amsterdam' }, { clock });
    });
    after(() => t.close());

    test('the first raise → 201, Raised, with comment, raiser and time in the server zone', async () => {
      await createDefinition(t, 'GLOBAL.DataReady');
      const res = await raiseRequest(t, 'GLOBAL.DataReady', { RaiserComment: 'files are in' });
      assert.equal(res.status, 201, res.body);
      const { uniqueId, ...rest } = res.json;
      assert.ok(Number.isSafeInteger(uniqueId) && uniqueId > 0);
      assert.deepEqual(rest, {
        eventId: 'DataReady1',
        businessKey: 'Event:DataReady1',
        EventDefinition: 'GLOBAL.DataReady',
        RaiseSequence: 1,
        Status: 'Raised',
        RaiserComment: 'files are in',
        RaiseTime: '2026/01/15 10:00:00,000 Europe/Amsterdam',
        RaiserObject: 'User:admin',
        ClearTime: null,
        ClearerComment: null,
        ClearerObject: null,
      });
      assert.deepEqual(await getEvent(t, 'DataReady1'), res.json);
    });

    test('a raise while one is Raised → Pending; RaiseSequence counts every raise; a bare name means GLOBAL', async () => {
      await createDefinition(t, 'GLOBAL.Count');
      const first = await raise(t, 'GLOBAL.Count');
      const second = await raise(t, 'Count');
      const third = await raise(t, 'GLOBAL.Count', {});
      assert.deepEqual(
        [first, second, third].map((e) => [e.eventId, e.RaiseSequence, e.Status, e.EventDefinition]),
        [
          ['Count1', 1, 'Raised', 'GLOBAL.Count'],
          ['Count2', 2, 'Pending', 'GLOBAL.Count'],
          ['Count3', 3, 'Pending', 'GLOBAL.Count'],
        ],
      );
      assert.ok(second.uniqueId > first.uniqueId && third.uniqueId > second.uniqueId);
    });

    test('clearing the Raised event → 200 with it Cleared; the oldest Pending one becomes Raised', async () => {
      await createDefinition(t, 'GLOBAL.Promote');
      for (let i = 0; i < 3; i += 1) await raise(t, 'GLOBAL.Promote');
      clock.advance(60_000);
      const res = await clearDefinition(t, 'GLOBAL.Promote', 'clear', { ClearerComment: 'done' });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.eventId, 'Promote1');
      assert.equal(res.json.Status, 'Cleared');
      assert.deepEqual(await statuses(t, ['Promote1', 'Promote2', 'Promote3']), {
        Promote1: 'Cleared',
        Promote2: 'Raised',
        Promote3: 'Pending',
      });
      // GET after the clear shows who cleared it and when.
      const cleared = await getEvent(t, 'Promote1');
      assert.equal(cleared.ClearTime, '2026/01/15 10:01:00,000 Europe/Amsterdam');
      assert.equal(cleared.ClearerComment, 'done');
      assert.equal(cleared.ClearerObject, 'User:admin');
      assert.equal(cleared.RaiseTime, '2026/01/15 10:00:00,000 Europe/Amsterdam');
      assert.equal((await getEvent(t, 'Promote2')).ClearTime, null);

      assert.equal((await clearDefinition(t, 'GLOBAL.Promote', 'clear')).json.eventId, 'Promote2');
      assert.equal((await clearDefinition(t, 'Promote', 'clear')).json.eventId, 'Promote3');
      assertError(
        await clearDefinition(t, 'GLOBAL.Promote', 'clear'),
        409,
        'EventDefinition:GLOBAL.Promote has no Raised event to clear',
      );
      // With none Raised, the next raise is Raised at once.
      assert.equal((await raise(t, 'GLOBAL.Promote')).Status, 'Raised');
    });

    test('clearAllPending → 200 with the Pending ones oldest first; the Raised one stays; none → []', async () => {
      await createDefinition(t, 'GLOBAL.Backlog');
      for (let i = 0; i < 4; i += 1) await raise(t, 'GLOBAL.Backlog');
      const res = await clearDefinition(t, 'GLOBAL.Backlog', 'clearAllPending', { ClearerComment: 'stale' });
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(
        res.json.Cleared.map((e: { eventId: string; Status: string; ClearerComment: string }) => [
          e.eventId,
          e.Status,
          e.ClearerComment,
        ]),
        [
          ['Backlog2', 'Cleared', 'stale'],
          ['Backlog3', 'Cleared', 'stale'],
          ['Backlog4', 'Cleared', 'stale'],
        ],
      );
      assert.equal((await getEvent(t, 'Backlog1')).Status, 'Raised');
      const none = await clearDefinition(t, 'GLOBAL.Backlog', 'clearAllPending');
      assert.equal(none.status, 200, none.body);
      assert.deepEqual(none.json, { Cleared: [] });
      // An empty JSON body is the same as none.
      assert.equal((await clearDefinition(t, 'GLOBAL.Backlog', 'clearAllPending', {})).status, 200);
    });

    test('clear by id: a Pending one → Cleared (the Raised stays); the Raised one → the next is promoted', async () => {
      await createDefinition(t, 'GLOBAL.ById');
      for (let i = 0; i < 3; i += 1) await raise(t, 'GLOBAL.ById');
      const pending = await clearById(t, 'ById2');
      assert.equal(pending.status, 200, pending.body);
      assert.equal(pending.json.Status, 'Cleared');
      assert.equal(pending.json.ClearerObject, 'User:admin');
      assert.deepEqual(await statuses(t, ['ById1', 'ById2', 'ById3']), {
        ById1: 'Raised',
        ById2: 'Cleared',
        ById3: 'Pending',
      });
      assert.equal((await clearById(t, 'ById1', { ClearerComment: 'by hand' })).json.ClearerComment, 'by hand');
      assert.deepEqual(await statuses(t, ['ById1', 'ById2', 'ById3']), {
        ById1: 'Cleared',
        ById2: 'Cleared',
        ById3: 'Raised',
      });
      assertError(await clearById(t, 'ById2'), 409, 'Event:ById2 is already Cleared');
      assert.equal((await getEvent(t, 'ById3')).Status, 'Raised', 'the failed clear changed nothing');
    });

    test('an unknown definition or event → 404 naming it', async () => {
      assertError(await raiseRequest(t, 'GLOBAL.Nope'), 404, 'Unable to find object EventDefinition:GLOBAL.Nope');
      assertError(await raiseRequest(t, 'Nope'), 404, 'Unable to find object EventDefinition:GLOBAL.Nope');
      assertError(await raiseRequest(t, 'a.b.c'), 404, 'Unable to find object EventDefinition:a.b.c');
      assertError(
        await clearDefinition(t, 'GLOBAL.Nope', 'clear'),
        404,
        'Unable to find object EventDefinition:GLOBAL.Nope',
      );
      assertError(
        await clearDefinition(t, 'GLOBAL.Nope', 'clearAllPending'),
        404,
        'Unable to find object EventDefinition:GLOBAL.Nope',
      );
      assertError(await t.req('GET', '/Event/Nope1'), 404, 'Unable to find object Event:Nope1');
      assertError(await t.req('GET', '/Event/NoDigits'), 404, 'Unable to find object Event:NoDigits');
      assertError(await clearById(t, 'Nope1'), 404, 'Unable to find object Event:Nope1');
    });

    test('event ids stay unique: names ending in digits, and one name in two partitions', async () => {
      await createDefinition(t, 'GLOBAL.Data1');
      await createDefinition(t, 'GLOBAL.Data');
      assert.equal((await t.req('POST', '/Partition/Other', { body: {} })).status, 201);
      await createDefinition(t, 'Other.Data');
      assert.equal((await raise(t, 'GLOBAL.Data1')).eventId, 'Data11');
      const ids: string[] = [];
      for (let i = 0; i < 11; i += 1) ids.push((await raise(t, 'GLOBAL.Data')).eventId);
      // The 11th raise of Data would be Data11, which Data1's first raise holds: it takes the next free number.
      assert.deepEqual(ids.slice(9), ['Data10', 'Data12']);
      assert.equal((await getEvent(t, 'Data12')).RaiseSequence, 12);
      assert.equal((await getEvent(t, 'Data11')).EventDefinition, 'GLOBAL.Data1');
      // The next raise of Data counts on from its highest.
      assert.equal((await raise(t, 'GLOBAL.Data')).eventId, 'Data13');
      // Other.Data starts at 1, but Data1…Data13 are taken.
      const other = await raise(t, 'Other.Data');
      assert.deepEqual([other.eventId, other.RaiseSequence, other.Status], ['Data14', 14, 'Raised']);
      assert.equal((await raise(t, 'GLOBAL.Data')).eventId, 'Data15');
    });

    test('routes take only their methods and actions', async () => {
      assert.equal((await t.req('PUT', '/Event/DataReady1', { body: {} })).status, 405);
      assert.equal((await t.req('PATCH', '/Event/DataReady1', { body: {} })).status, 405);
      assert.equal((await t.req('GET', '/Event/DataReady1/clear')).status, 405);
      assert.equal((await t.req('PUT', '/EventDefinition/GLOBAL.DataReady/clear')).status, 405);
      assert.equal((await t.req('POST', '/EventDefinition/GLOBAL.DataReady/raise')).status, 404);
    });
  });
}
