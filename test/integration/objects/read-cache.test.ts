import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../../src/store/open.ts';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// GET serves rendered objects from a cache; these tests show a client never sees it.
for (const backend of backends()) {
  describe(`reads are never stale (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/Partition/Q', { body: {} })).status, 201);
      assert.equal((await t.req('POST', '/Queue/Q.Secret', { body: {} })).status, 201);
      assert.equal((await t.req('POST', '/JobDefinition/Load', { body: { DefaultQueue: 'Q.Secret' } })).status, 201);
    });
    after(() => t.close());

    test('a change through the interface shows at once', async () => {
      assert.equal((await t.req('GET', '/JobDefinition/Load')).json.Priority, 50);
      await t.req('PUT', '/JobDefinition/Load', { body: { Priority: 77 } });
      assert.equal((await t.req('GET', '/JobDefinition/Load')).json.Priority, 77);
    });

    test('a change committed by another connection to the same database shows at once', async () => {
      assert.equal((await t.req('GET', '/JobDefinition/Load')).json.Description, null);
      const other = await openStore({ dataDir: t.config.dataDir, databaseUrl: t.config.databaseUrl });
      try {
        const o = await other.getObject('JobDefinition', 'GLOBAL.Load');
        assert.ok(o);
        await other.updateObject({ ...o, data: { ...o.data, Description: 'changed elsewhere' } }, []);
      } finally {
        await other.close();
      }
      assert.equal((await t.req('GET', '/JobDefinition/Load')).json.Description, 'changed elsewhere');
    });

    test('a deleted object is gone at once', async () => {
      assert.equal((await t.req('POST', '/Lock/Brief', { body: {} })).status, 201);
      assert.equal((await t.req('GET', '/Lock/Brief')).status, 200);
      assert.equal((await t.req('DELETE', '/Lock/Brief')).status, 204);
      assert.equal((await t.req('GET', '/Lock/Brief')).status, 404);
    });

    test('privileges are checked on every read, cached or not', async () => {
      assert.equal((await t.req('GET', '/JobDefinition/Load')).status, 200, 'the admin read fills the cache');
      const key = await t.keyWithGrants('defsOnly', ['JobDefinition:GLOBAL:View']);
      const res = await t.req('GET', '/JobDefinition/Load', { key });
      assert.equal(res.status, 403);
      assert.match(res.json.message, /Queue:Q\.Secret/);
      const none = await t.keyWithGrants('nothing', ['Queue:Q:View']);
      assert.equal((await t.req('GET', '/JobDefinition/Load', { key: none })).status, 404);
    });
  });
}
