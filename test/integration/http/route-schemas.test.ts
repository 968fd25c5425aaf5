import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Route schemas compile on first use (src/http/lazy-schemas.ts) and `millrace serve` compiles them all before it
 * starts listening. Here every route's schemas compile, and validation and serialization answer as before: a
 * wrong body names its field, coerced query values arrive typed, and answers carry their fields, whether a route
 * was compiled by its first request or by the warm-up.
 */

const [backend] = backends();

describe(`route schemas (${backend?.name})`, () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer(backend as NonNullable<typeof backend>);
  });
  after(() => t?.close());

  test('a first request compiles its route: a wrong type gets 400 naming the field, and nothing is stored', async () => {
    const res = await t.req('POST', '/Queue/Q1', { body: { ExecutionSize: 'many' } });
    assert.equal(res.status, 400);
    assert.match(res.json.message, /ExecutionSize/);
    assert.equal((await t.req('GET', '/Queue/GLOBAL.Q1')).status, 404);
  });

  test('the warm-up compiles every other route, and the compiled routes answer as before', async () => {
    await t.server.app.warmSchemas();
    const created = await t.req('POST', '/Queue/Q2', { body: { ExecutionSize: 3 } });
    assert.equal(created.status, 201, created.body);
    assert.equal(created.json.ExecutionSize, 3);
    const list = await t.req('GET', '/Queue?Limit=1&Search=q2');
    assert.equal(list.status, 200, list.body);
    assert.deepEqual(
      list.json.items.map((q: { Name: string }) => q.Name),
      ['Q2'],
    );
    const bad = await t.req('GET', '/Queue?Limit=many');
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /Limit/);
  });
});
