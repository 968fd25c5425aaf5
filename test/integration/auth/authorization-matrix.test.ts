import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ObjectType } from '../../../src/model/object-type.ts';
import { definitionTypes } from '../../../src/model/registry.ts';
import { backends } from '../../helpers/backends.ts';
import { type Response, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * docs/architecture.md §10: who may do what on every object route of the JSON interface.
 * The routes are enumerated from the registry (every definition type × GET/POST/PUT/DELETE on `/<Type>/<key>`),
 * so a new type is covered without touching this file.
 */

const TYPES = definitionTypes();
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
const WRITES = ['POST', 'PUT', 'DELETE'] as const;

/** Fields a type needs beyond its key; every other type is created with an empty body. */
const REQUIRED_BODY: Record<string, Record<string, unknown>> = {
  // The JobChain of the same key needs its definition to be of type JobChain.
  JobDefinition: { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' },
  JobDefinitionAlertSource: { NamePattern: 'Matrix*', Statuses: [{ Status: 'Error' }] },
  Credential: { RealUser: 'matrix' },
  SubmitFrame: { Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }] },
  Deadline: { JobDefinition: 'GLOBAL.Matrix1', EndBy: '06:00' },
};
const bodyFor = (type: ObjectType): Record<string, unknown> => REQUIRED_BODY[type.name] ?? {};

/** The path key of an object `name` of `type` in partition GLOBAL; queue providers link the `name` server and queue. */
function keyFor(type: ObjectType, name: string): string {
  switch (type.key) {
    case 'name':
      return name;
    case 'partitioned':
      return `GLOBAL.${name}`;
    case 'queueProvider':
      return `GLOBAL.${name}.GLOBAL.${name}`;
    default:
      throw new Error(`no test key for ${type.name} (key shape ${type.key}): extend keyFor()`);
  }
}

/** Queue providers need their process server and queue first. */
const creationOrder = (types: readonly ObjectType[]): ObjectType[] => [
  ...types.filter((t) => t.key !== 'queueProvider'),
  ...types.filter((t) => t.key === 'queueProvider'),
];

const EXISTING = 'Matrix1';
/** Same length as EXISTING, so a refusal and a missing object give byte-identical answers but for the name. */
const MISSING = 'Matrix9';
const NEW = 'Matrix2';

/** Everything a client sees of a 404 except the object named and the headers every answer has its own of. */
function shapeOf(res: Response): unknown {
  const { date: _date, 'x-request-id': _requestId, ...headers } = res.headers;
  return { status: res.status, headers, keys: Object.keys(res.json ?? {}) };
}

for (const backend of backends()) {
  describe(backend.name, () => {
    let t: TestServer;
    let viewer: string;
    let other: string;

    before(async () => {
      t = await startTestServer(backend);
      for (const type of creationOrder(TYPES)) {
        const res = await t.req('POST', `/${type.name}/${keyFor(type, EXISTING)}`, { body: bodyFor(type) });
        assert.equal(res.status, 201, `setup: create ${type.name}: ${res.body}`);
      }
      const partition = await t.req('POST', '/Partition/OTHER');
      assert.equal(partition.status, 201, `setup: create Partition OTHER: ${partition.body}`);
      viewer = await t.keyWithRoles('viewer', ['Viewer']);
      other = await t.keyWithGrants('other', ['*:OTHER:View,Create,Edit,Delete']);
    });
    after(async () => {
      await t?.close();
    });

    test('every route of the matrix is served', () => {
      assert.ok(TYPES.length >= 15, `the registry lists ${TYPES.length} definition types`);
      for (const type of TYPES)
        for (const method of METHODS)
          assert.ok(
            t.server.app.hasRoute({ method, url: `${t.base}/${type.name}/:key` }),
            `${method} /${type.name}/:key`,
          );
    });

    for (const type of TYPES) {
      describe(type.name, () => {
        const path = () => `/${type.name}/${keyFor(type, EXISTING)}`;
        const newPath = () => `/${type.name}/${keyFor(type, NEW)}`;
        /** The object as the administrator sees it. */
        const adminView = async () => (await t.req('GET', path())).json as Record<string, unknown>;

        test('every method without a key gets 401', async () => {
          for (const method of METHODS) {
            const body = method === 'POST' || method === 'PUT' ? bodyFor(type) : undefined;
            const target = method === 'POST' ? newPath() : path();
            const res = await t.req(method, target, { key: null, ...(body ? { body } : {}) });
            assert.equal(res.status, 401, `${method} ${target}: ${res.body}`);
            assert.deepEqual(res.json, { code: '401', message: 'Authentication required' });
            assert.ok(res.headers['www-authenticate'], `${method}: WWW-Authenticate`);
          }
          assert.equal((await t.req('GET', newPath())).status, 404, 'the POST created nothing');
        });

        test('a Viewer may GET but gets 403 on POST, PUT and DELETE, and nothing changes', async () => {
          const before = await adminView();
          assert.equal(before.businessKey, `${type.name}:${keyFor(type, EXISTING)}`);

          const read = await t.req('GET', path(), { key: viewer });
          assert.equal(read.status, 200, read.body);
          assert.deepEqual(read.json, before, 'the Viewer sees what the administrator sees');

          const writes: Record<(typeof WRITES)[number], Response> = {
            POST: await t.req('POST', newPath(), { key: viewer, body: bodyFor(type) }),
            PUT: await t.req('PUT', path(), { key: viewer, body: { Description: 'changed by a Viewer' } }),
            DELETE: await t.req('DELETE', path(), { key: viewer }),
          };
          for (const [method, res] of Object.entries(writes)) {
            assert.equal(res.status, 403, `${method}: ${res.body}`);
            assert.equal(res.json?.code, '403', method);
            assert.equal(typeof res.json?.message, 'string', method);
          }

          assert.deepEqual(await adminView(), before, 'the object is unchanged');
          assert.equal((await t.req('GET', newPath())).status, 404, 'the POST created nothing');
        });

        test('a user with grants only in partition OTHER gets 404 on GLOBAL objects, as for a missing one', async () => {
          const before = await adminView();
          const requests = {
            GET: (p: string, key: string | undefined) => t.req('GET', p, { key }),
            PUT: (p: string, key: string | undefined) => t.req('PUT', p, { key, body: { Description: 'changed' } }),
            DELETE: (p: string, key: string | undefined) => t.req('DELETE', p, { key }),
          };
          for (const [method, send] of Object.entries(requests)) {
            const hidden = await send(path(), other);
            assert.deepEqual(
              hidden.json,
              { code: '404', message: `Unable to find object ${type.name}:${keyFor(type, EXISTING)}` },
              `${method} of an object in GLOBAL: ${hidden.status} ${hidden.body}`,
            );
            assert.equal(hidden.status, 404, method);
            const missing = await send(`/${type.name}/${keyFor(type, MISSING)}`, undefined);
            assert.deepEqual(
              missing.json,
              { code: '404', message: `Unable to find object ${type.name}:${keyFor(type, MISSING)}` },
              `${method} of a missing object by the administrator: ${missing.status} ${missing.body}`,
            );
            assert.deepEqual(shapeOf(hidden), shapeOf(missing), `${method}: same status, headers and fields`);
          }

          const create = await t.req('POST', newPath(), { key: other, body: bodyFor(type) });
          assert.equal(create.status, 404, `POST in a partition the user cannot see: ${create.body}`);
          assert.equal(create.json?.code, '404');

          assert.deepEqual(await adminView(), before, 'the object is unchanged');
          assert.equal((await t.req('GET', newPath())).status, 404, 'the POST created nothing');
        });
      });
    }

    test('the user of partition OTHER works in its own partition', async () => {
      assert.equal((await t.req('GET', '/Partition/OTHER', { key: other })).status, 200);
      const created = await t.req('POST', '/Queue/OTHER.Mine', { key: other });
      assert.equal(created.status, 201, created.body);
      assert.equal(created.json.businessKey, 'Queue:OTHER.Mine');
      const held = await t.req('PUT', '/Queue/OTHER.Mine', { key: other, body: { Held: true } });
      assert.equal(held.status, 200, held.body);
      assert.equal((await t.req('DELETE', '/Queue/OTHER.Mine', { key: other })).status, 204);
      assert.equal((await t.req('GET', '/Queue/OTHER.Mine')).status, 404);
    });

    describe('per-type grants and the reference-view rule', () => {
      before(async () => {
        for (const [path, body] of [
          ['/Partition/P', {}],
          ['/Partition/Q', {}],
          ['/Queue/Q.X', {}],
          ['/Queue/P.Y', {}],
          ['/JobDefinition/P.D', { DefaultQueue: 'Q.X' }],
        ] as const) {
          const res = await t.req('POST', path, { body });
          assert.equal(res.status, 201, `setup: POST ${path}: ${res.body}`);
        }
      });

      test('GET of a definition whose queue the caller may not view gets 403 naming the queue', async () => {
        const key = await t.keyWithGrants('refview', ['JobDefinition:P:View']);
        const res = await t.req('GET', '/JobDefinition/P.D', { key });
        assert.equal(res.status, 403, res.body);
        assert.equal(res.json?.code, '403');
        assert.match(res.json?.message, /Queue:Q\.X/);
        const queue = await t.req('GET', '/Queue/Q.X', { key });
        assert.deepEqual(queue.json, { code: '404', message: 'Unable to find object Queue:Q.X' });
      });

      test('a per-type grant shows objects of that type only', async () => {
        const key = await t.keyWithGrants('pertype', ['JobDefinition:P:View', 'Queue:Q:View']);
        const def = await t.req('GET', '/JobDefinition/P.D', { key });
        assert.equal(def.status, 200, def.body);
        assert.equal(def.json.businessKey, 'JobDefinition:P.D');
        assert.equal(def.json.DefaultQueue, 'Q.X');
        const queue = await t.req('GET', '/Queue/P.Y', { key });
        assert.equal(queue.status, 404, queue.body);
        assert.deepEqual(queue.json, { code: '404', message: 'Unable to find object Queue:P.Y' });
        const edit = await t.req('PUT', '/JobDefinition/P.D', { key, body: { Description: 'no' } });
        assert.equal(edit.status, 403, edit.body);
      });

      test('a per-type Create grant creates objects of that type in its partition', async () => {
        const key = await t.keyWithGrants('creator', ['JobDefinition:P:View,Create', 'Queue:P:View']);
        const res = await t.req('POST', '/JobDefinition/P.Made', { key, body: { DefaultQueue: 'P.Y' } });
        assert.equal(res.status, 201, res.body);
        assert.equal(res.json.businessKey, 'JobDefinition:P.Made');
        const queue = await t.req('POST', '/Queue/P.NotMine', { key });
        assert.equal(queue.status, 403, queue.body);
      });
    });

    describe('the Operator role', () => {
      let operator: string;
      before(async () => {
        operator = await t.keyWithRoles('operator', ['Operator']);
        const res = await t.req('POST', '/Queue/OpQueue');
        assert.equal(res.status, 201, `setup: ${res.body}`);
      });

      test('may hold a queue with PUT {Held: true}', async () => {
        const res = await t.req('PUT', '/Queue/OpQueue', { key: operator, body: { Held: true } });
        assert.equal(res.status, 200, res.body);
        assert.equal(res.json.Held, true);
        assert.equal((await t.req('GET', '/Queue/GLOBAL.OpQueue')).json.Held, true);
        const release = await t.req('PUT', '/Queue/OpQueue', { key: operator, body: { Held: false } });
        assert.equal(release.status, 200, release.body);
        assert.equal(release.json.Held, false);
      });

      test('may not create a JobDefinition', async () => {
        const res = await t.req('POST', '/JobDefinition/GLOBAL.ByOperator', { key: operator, body: {} });
        assert.equal(res.status, 403, res.body);
        assert.equal(res.json?.code, '403');
        assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.ByOperator')).status, 404);
      });
    });
  });
}
