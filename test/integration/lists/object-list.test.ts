import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { definitionTypes } from '../../../src/model/registry.ts';
import { backends } from '../../helpers/backends.ts';
import { assertError, postCreated as post } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * GET /<ObjectType> for every definition type of the registry: in business-key order, paged
 * by cursor, searched in key and Description, narrowed to a partition, only what the caller may view; each item
 * as GET /<Type>/<key> answers it.
 */

async function allKeys(t: TestServer, path: string, limit: number, key?: string): Promise<string[]> {
  const keys: string[] = [];
  let after: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await t.req('GET', `${path}${sep}Limit=${limit}${after ? `&After=${after}` : ''}`, key ? { key } : {});
    assert.equal(res.status, 200, `${path}: ${res.body}`);
    keys.push(...res.json.items.map((i: { businessKey: string }) => i.businessKey));
    after = res.json.next;
  } while (after !== null);
  return keys;
}

for (const backend of backends()) {
  describe(`GET /<ObjectType> (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await post(t, '/Partition/B');
      for (const name of ['Nightly', 'Adhoc', 'Zeta'])
        await post(t, `/Queue/GLOBAL.${name}`, { Description: name === 'Zeta' ? 'the LAST one' : null });
      await post(t, '/Queue/B.Finance', { Description: 'money' });
      await post(t, '/Queue/B.Adhoc');
      await post(t, '/TimeWindow/B.Office', { Elements: [{ FromTime: '08:00', UntilTime: '18:00' }] });
    });
    after(() => t.close());

    test('every definition type of the registry has a list, answering {items, next}', async () => {
      for (const type of definitionTypes()) {
        const res = await t.req('GET', `/${type.name}?Limit=1000`);
        assert.equal(res.status, 200, `${type.name}: ${res.body}`);
        assert.ok(Array.isArray(res.json.items), type.name);
        assert.equal(res.json.next, null, type.name);
        for (const item of res.json.items.slice(0, 3)) {
          const key = String(item.businessKey).slice(type.name.length + 1);
          assert.deepEqual(item, (await t.req('GET', `/${type.name}/${key}`)).json, item.businessKey);
        }
      }
    });

    test('in key order across pages; Partition, Search and fields', async () => {
      const queues = [
        'B.Adhoc',
        'B.Finance',
        'GLOBAL.Adhoc',
        'GLOBAL.Default',
        'GLOBAL.Nightly',
        'GLOBAL.System',
        'GLOBAL.Zeta',
      ];
      assert.deepEqual(
        await allKeys(t, '/Queue', 2),
        queues.map((k) => `Queue:${k}`),
      );
      assert.deepEqual(await allKeys(t, '/Queue?Partition=B', 1), ['Queue:B.Adhoc', 'Queue:B.Finance']);
      assert.deepEqual(await allKeys(t, '/Queue?Search=ADHOC', 1), ['Queue:B.Adhoc', 'Queue:GLOBAL.Adhoc']);
      assert.deepEqual(await allKeys(t, '/Queue?Search=last', 1), ['Queue:GLOBAL.Zeta']);
      assert.deepEqual(await allKeys(t, '/Queue?Search=mon&Partition=B', 5), ['Queue:B.Finance']);
      const some = await t.req('GET', '/Queue?Partition=B&fields=BUSINESSKEY,description');
      assert.deepEqual(some.json, {
        items: [
          { businessKey: 'Queue:B.Adhoc', Description: null },
          { businessKey: 'Queue:B.Finance', Description: 'money' },
        ],
        next: null,
      });
    });

    test('a viewer of one partition sees none of the objects of another', async () => {
      const key = await t.keyWithGrants('globalonly', ['*:GLOBAL:View']);
      assert.deepEqual(await allKeys(t, '/Queue', 2, key), [
        'Queue:GLOBAL.Adhoc',
        'Queue:GLOBAL.Default',
        'Queue:GLOBAL.Nightly',
        'Queue:GLOBAL.System',
        'Queue:GLOBAL.Zeta',
      ]);
      assert.deepEqual((await t.req('GET', '/Queue?Partition=B', { key })).json, { items: [], next: null });
      assert.deepEqual((await t.req('GET', '/TimeWindow', { key })).json, { items: [], next: null });
      const queuesOnly = await t.keyWithGrants('queuesonly', ['Queue:B:View']);
      assert.deepEqual(await allKeys(t, '/Queue', 5, queuesOnly), ['Queue:B.Adhoc', 'Queue:B.Finance']);
      assert.deepEqual((await t.req('GET', '/TimeWindow', { key: queuesOnly })).json, { items: [], next: null });
    });

    test('bad parameters are 400s naming the parameter; only GET', async () => {
      assertError(await t.req('GET', '/Queue?Status=Held'), 400, /Unknown query parameter "Status"/);
      assertError(await t.req('GET', '/Queue?Limit=5000'), 400, /"Limit"/);
      assertError(await t.req('GET', '/Queue?Partition=a.b'), 400, /"Partition"/);
      const jobCursor = Buffer.from('j:5').toString('base64url');
      assertError(await t.req('GET', `/Queue?After=${jobCursor}`), 400, /"After" is not a cursor/);
      assert.equal((await t.req('POST', '/Queue')).status, 405);
    });
  });
}
