import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { definitionTypes } from '../../../src/model/registry.ts';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { SAMPLES } from './samples.ts';

/** Every value of `expected` appears in `actual` (nested records may hold more fields: their defaults). */
function assertContains(actual: unknown, expected: unknown, path: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path} is a list`);
    assert.equal(actual.length, expected.length, `${path} length`);
    for (const [i, e] of expected.entries()) assertContains(actual[i], e, `${path}[${i}]`);
  } else if (typeof expected === 'object' && expected !== null) {
    for (const [k, v] of Object.entries(expected))
      assertContains((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
  } else assert.deepEqual(actual, expected, path);
}

const DATE = /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2},\d{3} UTC$/;

for (const backend of backends()) {
  describe(`object create, read, update, delete (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    test('the samples cover every definition type of the registry', () => {
      assert.deepEqual(new Set(SAMPLES.map((s) => s.type)), new Set(definitionTypes().map((d) => d.name)));
    });

    test('POST creates each object (201) and GET returns what was posted', async () => {
      for (const s of SAMPLES) {
        const created = await t.req('POST', `/${s.type}/${s.key}`, { body: s.body });
        assert.equal(created.status, 201, `${s.type}: ${created.body}`);
        assert.equal(created.json.businessKey, `${s.type}:${s.key}`);
        assert.ok(Number.isInteger(created.json.uniqueId) && created.json.uniqueId > 0);
        assert.match(created.json.CreationTime, DATE);
        const got = await t.req('GET', `/${s.type}/${s.key}`);
        assert.equal(got.status, 200);
        assert.deepEqual(got.json, created.json);
        const { Password: _secret, ...shown } = s.body;
        assertContains(got.json, shown, s.type);
      }
    });

    test('every object has its own unique id', async () => {
      const ids = new Set<number>();
      for (const s of SAMPLES) ids.add((await t.req('GET', `/${s.type}/${s.key}`)).json.uniqueId);
      assert.equal(ids.size, SAMPLES.length);
    });

    test('defaults are filled in and the common fields come first', async () => {
      const q = (await t.req('GET', '/Queue/Finance.Batch')).json;
      assert.deepEqual(Object.keys(q).slice(0, 7), [
        'uniqueId',
        'businessKey',
        'Comment',
        'Description',
        'Name',
        'Partition',
        'ParentApplication',
      ]);
      assert.equal(q.Held, false);
      assert.equal(q.Name, 'Batch');
      assert.equal(q.Partition, 'Finance');
      const d = (await t.req('GET', '/JobDefinition/Finance.PostLedger')).json;
      assert.equal(d.CompletionStrategy, 'Default');
      assert.equal(d.ReturncodeMapToCompleted, '0');
      assert.equal(d.HoldOnSubmit, false);
    });

    test('PUT applies zero or more properties and keeps the rest', async () => {
      for (const s of SAMPLES) {
        const before = (await t.req('GET', `/${s.type}/${s.key}`)).json;
        const none = await t.req('PUT', `/${s.type}/${s.key}`, { body: {} });
        assert.equal(none.status, 200, `${s.type}: ${none.body}`);
        const res = await t.req('PUT', `/${s.type}/${s.key}`, { body: s.change });
        assert.equal(res.status, 200, `${s.type}: ${res.body}`);
        const after = (await t.req('GET', `/${s.type}/${s.key}`)).json;
        for (const [field, value] of Object.entries(s.change))
          assert.deepEqual(after[field], value, `${s.type}.${field}`);
        assert.equal(after.uniqueId, before.uniqueId);
        assert.equal(after.CreationTime, before.CreationTime);
        for (const field of Object.keys(before))
          if (!(field in s.change) && field !== 'LastModificationTime')
            assert.deepEqual(after[field], before[field], `${s.type}.${field} kept`);
      }
    });

    test('a bare name means partition GLOBAL, in paths and in references', async () => {
      assert.equal((await t.req('POST', '/Queue/Nightly', { body: {} })).status, 201);
      const got = await t.req('GET', '/Queue/GLOBAL.Nightly');
      assert.equal(got.json.businessKey, 'Queue:GLOBAL.Nightly');
      const def = await t.req('POST', '/JobDefinition/Load', { body: { DefaultQueue: 'Nightly' } });
      assert.equal(def.status, 201, def.body);
      assert.equal(def.json.DefaultQueue, 'GLOBAL.Nightly');
    });

    test('a credential password is accepted but never shown', async () => {
      const c = await t.req('GET', '/Credential/Finance.LedgerDb');
      assert.equal(c.status, 200);
      assert.equal('Password' in c.json, false);
      assert.equal(c.body.includes('s3cret'), false);
      const stored = await t.server.store.getObject('Credential', 'Finance.LedgerDb');
      assert.ok(stored);
      assert.equal(JSON.stringify(stored.data).includes('s3cret!'), false, 'encrypted at rest');
      assert.match(String(stored.data.Password), /^v2:[0-9a-f]{12}:/);
    });

    test('creating a JobChain creates its JobDefinition of type JobChain', async () => {
      const d = await t.req('GET', '/JobDefinition/Finance.MonthEnd');
      assert.equal(d.status, 200);
      assert.equal(d.json.JobDefinitionType, 'JobChain');
    });

    test('a process server lists its queue providers; POST and PUT ignore them', async () => {
      const ps = await t.req('GET', '/ProcessServer/Finance.Agent1');
      assert.deepEqual(ps.json.QueueProviders, ['Finance.Agent1.Finance.Batch']);
      const put = await t.req('PUT', '/ProcessServer/Finance.Agent1', {
        body: { QueueProviders: [], ExecutionSize: 3 },
      });
      assert.equal(put.status, 200, put.body);
      assert.deepEqual(put.json.QueueProviders, ['Finance.Agent1.Finance.Batch']);
      const post = await t.req('POST', '/ProcessServer/Finance.Agent2', {
        body: { QueueProviders: ['Finance.Agent2.Finance.Batch'] },
      });
      assert.equal(post.status, 201, post.body);
      assert.deepEqual(post.json.QueueProviders, []);
      assert.equal((await t.req('GET', '/QueueProvider/Finance.Agent2.Finance.Batch')).status, 404);
    });

    test('DELETE removes an object with no body, after which GET is 404', async () => {
      // Delete in reverse order so no object is still referenced when its turn comes.
      for (const s of [...SAMPLES].reverse()) {
        if (s.type === 'Partition') continue;
        if (s.type === 'ProcessServer') await t.req('DELETE', '/ProcessServer/Finance.Agent2');
        const del = await t.req('DELETE', `/${s.type}/${s.key}`);
        assert.equal(del.status, 204, `${s.type}: ${del.body}`);
        assert.equal(del.body, '');
        const got = await t.req('GET', `/${s.type}/${s.key}`);
        assert.equal(got.status, 404);
        assert.deepEqual(got.json, { code: '404', message: `Unable to find object ${s.type}:${s.key}` });
      }
      // The chain's definition and the GLOBAL objects still refer to nothing in Finance: it can go now.
      assert.equal((await t.req('DELETE', '/JobDefinition/Finance.MonthEnd')).status, 204);
      assert.equal((await t.req('DELETE', '/Partition/Finance')).status, 204);
    });
  });
}
