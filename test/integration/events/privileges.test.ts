import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { clearById, clearDefinition, createDefinition, getEvent, raise, raiseRequest } from '../../helpers/events.ts';
import { assertError } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Events are governed by the privileges on their EventDefinition in its partition (docs/architecture.md §10): without View the
 * definition and its events answer 404 exactly as missing ones; with View but not Control, raising and clearing
 * answer 403 naming what is needed.
 */

for (const backend of backends()) {
  describe(`event privileges (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await createDefinition(t, 'GLOBAL.Guarded');
      await raise(t, 'GLOBAL.Guarded');
      await raise(t, 'GLOBAL.Guarded');
    });
    after(() => t.close());

    const unchanged = async () => {
      assert.equal((await getEvent(t, 'Guarded1')).Status, 'Raised');
      assert.equal((await getEvent(t, 'Guarded2')).Status, 'Pending');
      assert.equal((await t.req('GET', '/Event/Guarded3')).status, 404, 'no event was raised');
    };

    test('without an API key → 401', async () => {
      assert.equal((await t.req('GET', '/Event/Guarded1', { key: null })).status, 401);
      assert.equal((await t.req('POST', '/Event/GLOBAL.Guarded', { key: null })).status, 401);
    });

    test('without View on EventDefinition in its partition → 404 as for a missing one, for every route', async () => {
      for (const [user, grants] of [
        ['noview1', ['Job:GLOBAL:View,Control', 'Event:GLOBAL:View,Control']],
        ['noview2', ['EventDefinition:Other:View,Control']],
      ] as const) {
        const key = await t.keyWithGrants(user, [...grants]);
        assertError(await t.req('GET', '/Event/Guarded1', { key }), 404, 'Unable to find object Event:Guarded1');
        assertError(await clearById(t, 'Guarded1', undefined, key), 404, 'Unable to find object Event:Guarded1');
        const missing = 'Unable to find object EventDefinition:GLOBAL.Guarded';
        assertError(await raiseRequest(t, 'GLOBAL.Guarded', undefined, key), 404, missing);
        assertError(await clearDefinition(t, 'GLOBAL.Guarded', 'clear', undefined, key), 404, missing);
        assertError(await clearDefinition(t, 'GLOBAL.Guarded', 'clearAllPending', undefined, key), 404, missing);
      }
      await unchanged();
    });

    test('with View but without Control: reading works, raising and clearing → 403 naming Control', async () => {
      const key = await t.keyWithGrants('viewonly', ['EventDefinition:GLOBAL:View']);
      const read = await t.req('GET', '/Event/Guarded1', { key });
      assert.equal(read.status, 200, read.body);
      assert.deepEqual(read.json, await getEvent(t, 'Guarded1'));
      assertError(
        await raiseRequest(t, 'GLOBAL.Guarded', { RaiserComment: 'x' }, key),
        403,
        /Control privilege on EventDefinition:GLOBAL\.Guarded/,
      );
      assertError(await clearDefinition(t, 'GLOBAL.Guarded', 'clear', undefined, key), 403, /Control/);
      assertError(await clearDefinition(t, 'GLOBAL.Guarded', 'clearAllPending', undefined, key), 403, /Control/);
      assertError(
        await clearById(t, 'Guarded2', undefined, key),
        403,
        /Control privilege on EventDefinition:GLOBAL\.Guarded to clear Event:Guarded2/,
      );
      // An unknown definition stays 404 for someone who could see it.
      assertError(
        await raiseRequest(t, 'GLOBAL.Other', undefined, key),
        404,
        'Unable to find object EventDefinition:GLOBAL.Other',
      );
      await unchanged();
    });

    test('with View and Control on EventDefinition: raise and clear, recorded as that user', async () => {
      const key = await t.keyWithGrants('controller', ['EventDefinition:GLOBAL:View,Control']);
      const e = await raise(t, 'GLOBAL.Guarded', undefined, key);
      assert.deepEqual([e.eventId, e.Status, e.RaiserObject], ['Guarded3', 'Pending', 'User:controller']);
      const res = await clearById(t, 'Guarded3', undefined, key);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.ClearerObject, 'User:controller');
    });

    test('built-in roles: a Viewer reads but cannot raise; an Operator raises and clears', async () => {
      const viewer = await t.keyWithRoles('viewer1', ['Viewer']);
      assert.equal((await t.req('GET', '/Event/Guarded1', { key: viewer })).status, 200);
      assertError(await raiseRequest(t, 'GLOBAL.Guarded', undefined, viewer), 403, /Control/);
      const operator = await t.keyWithRoles('operator1', ['Operator']);
      const e = await raise(t, 'GLOBAL.Guarded', undefined, operator);
      assert.equal((await clearById(t, e.eventId, undefined, operator)).status, 200);
    });
  });
}
