import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import type { Response } from '../../helpers/server.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Names are at most 80 characters, so `<partition>.<name>` keys reach 161 characters and queue
 * provider keys 323. Every such key works through the routes of both interfaces; longer ones are refused with the
 * interface's own error record, and xml-put refuses a name over 80 characters rather than storing it.
 */
const P = `P${'a'.repeat(79)}`;
const N = `N${'b'.repeat(79)}`;
const KEY = `${P}.${N}`; // 161
const PROVIDER = `${KEY}.${KEY}`; // 323

const isJsonError = (r: Response, status: number) => {
  assert.equal(r.status, status, r.body);
  assert.deepEqual(Object.keys(r.json ?? {}).sort(), ['code', 'message'], r.body);
  assert.equal(r.json.code, String(status));
};
const isXmlError = (r: Response, status: number) => {
  assert.equal(r.status, status, r.body);
  assert.match(r.body, new RegExp(`<error>\\s*<code>${status}</code>\\s*<message>[^<]+</message>`));
};

for (const backend of backends()) {
  describe(`long keys (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    test('a 161-character key and a 323-character queue provider key work through every route', async () => {
      assert.equal(KEY.length, 161);
      assert.equal(PROVIDER.length, 323);
      assert.equal((await t.req('POST', `/Partition/${P}`)).status, 201);
      for (const type of ['Queue', 'ProcessServer']) {
        const made = await t.req('POST', `/${type}/${KEY}`, { body: { Description: 'long' } });
        assert.equal(made.status, 201, made.body);
      }
      const provider = await t.req('POST', `/QueueProvider/${PROVIDER}`, { body: { ExecutionSize: 2 } });
      assert.equal(provider.status, 201, provider.body);
      for (const [type, key] of [
        ['Queue', KEY],
        ['ProcessServer', KEY],
        ['QueueProvider', PROVIDER],
      ] as const) {
        assert.equal((await t.req('GET', `/${type}/${key}`)).status, 200, `GET ${type}`);
        const put = await t.req('PUT', `/${type}/${key}`, { body: { Description: 'changed' } });
        assert.equal(put.status, 200, put.body);
        const xml = await t.xml('GET', `/object/${type}/${key}`);
        assert.equal(xml.status, 200, xml.body);
        assert.match(xml.body, /changed/);
        assert.equal((await t.xml('GET', `/car/${type}/${key}`)).status, 200, `car export of ${type}`);
      }
      assert.equal((await t.req('DELETE', `/QueueProvider/${PROVIDER}`)).status, 204);
      assert.equal((await t.req('GET', `/QueueProvider/${PROVIDER}`)).status, 404);
    });

    test('xml-put stores a 121-character key that every GET reads, and refuses a name over 80', async () => {
      const partition = `Q${'c'.repeat(39)}`;
      assert.equal((await t.req('POST', `/Partition/${partition}`)).status, 201);
      const queue = (name: string) =>
        `<?xml version="1.0"?><Queue><Name>${name}</Name><Partition type="Partition" path="${partition}"/></Queue>`;
      const stored = await t.xml('PUT', '/xml', { payload: queue(N), headers: { 'content-type': 'application/xml' } });
      assert.equal(stored.status, 201, stored.body);
      const key = `${partition}.${N}`;
      assert.equal(key.length, 121);
      assert.equal((await t.req('GET', `/Queue/${key}`)).status, 200);
      assert.equal((await t.xml('GET', `/object/Queue/${key}`)).status, 200);
      const tooLong = await t.xml('PUT', '/xml', {
        payload: queue(`${N}x`),
        headers: { 'content-type': 'application/xml' },
      });
      isXmlError(tooLong, 400);
      isJsonError(await t.req('POST', `/Queue/${partition}.${N}x`, { body: {} }), 400);
      assert.equal((await t.req('GET', `/Queue/${partition}.${N}x`)).status, 404, 'nothing stored');
    });

    test('longer keys are refused in the interface shape: 414 past 400 characters, 404 up to it', async () => {
      const over = `${KEY}.${KEY}.${'d'.repeat(80)}`; // > 400
      assert.ok(over.length > 400);
      isJsonError(await t.req('GET', `/Queue/${over}`), 414);
      isXmlError(await t.xml('GET', `/object/Queue/${over}`), 414);
      const between = `${KEY}.${'e'.repeat(100)}`; // 262: no valid Queue key
      isJsonError(await t.req('GET', `/Queue/${between}`), 404);
      isXmlError(await t.xml('GET', `/object/Queue/${between}`), 404);
    });
  });
}
