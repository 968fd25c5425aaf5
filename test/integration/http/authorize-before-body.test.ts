import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { type BodyRoute, bodyRoutes } from '../../helpers/body-routes.ts';
import { type Response, startTestServer, type TestServer } from '../../helpers/server.ts';
import { changedTables, type StateSnapshots, stateSnapshots } from '../../helpers/state-snapshot.ts';

/**
 * Authorization before the body (docs/architecture.md §9): a caller without the right to a request gets 403
 * whatever body it sends, malformed JSON, a body of the wrong type or one past the size limit, because its right
 * is checked before the body is read. Every route of the JSON interface that changes something is taken from the
 * served document (a new route fails here until it has a target), and the XML interface's PUT services from its
 * WADL. The Viewer sees everything, so each answer is 403, never 404, and nothing stored changes.
 */

const VIEWER_PASSWORD = 'viewer-password-0123';

/** Bodies a Viewer might send: none of them may be judged. */
const JSON_BODIES: Array<{ what: string; payload: string | Buffer; type: string }> = [
  { what: 'malformed JSON', payload: '{"Description": "x", ', type: 'application/json' },
  { what: 'a body of the wrong type', payload: 'not json at all', type: 'text/plain' },
  {
    what: 'JSON past the size limit',
    payload: `{"Description": "${'x'.repeat(1_100_000)}"}`,
    type: 'application/json',
  },
  { what: 'an inherited name', payload: '{"constructor": 1, "toString": "x"}', type: 'application/json' },
];
const XML_BODIES: Array<{ what: string; payload: string | Buffer; type: string }> = [
  { what: 'malformed XML', payload: '<Queue><Name>X</Name>', type: 'application/xml' },
  { what: 'a DOCTYPE', payload: '<!DOCTYPE x [<!ENTITY e "e">]><x>&e;</x>', type: 'application/xml' },
  { what: 'a zip that is not one', payload: Buffer.from('PK\u0003\u0004 broken'), type: 'application/octet-stream' },
  { what: 'a body past the size limit', payload: Buffer.alloc(1_100_000, 0x20), type: 'text/plain' },
];

/**
 * A bulk action names its jobs in its body, so it has no right to judge before reading it: each job is judged alone
 * and a Viewer's bulk is answered with every job skipped for the privilege it lacks (test/integration/jobs/bulk-actions.test.ts).
 */
const judgedBeforeBody = (r: BodyRoute): boolean => !r.name.startsWith('POST /Job/bulk/');

for (const backend of backends()) {
  describe(`authorization before the body (${backend.name})`, () => {
    let t: TestServer;
    let viewer: string;
    let snapshots: StateSnapshots;
    let routes: BodyRoute[];

    before(async () => {
      t = await startTestServer(backend, { localAgent: false });
      viewer = await t.keyWithRoles('viewer', ['Viewer']);
      await t.server.accounts.addUser('xviewer', { password: VIEWER_PASSWORD, roles: ['Viewer'] });
      // The Viewer is a participant of the user message: the Reply privilege it lacks is what refuses it.
      routes = await bodyRoutes(t, ['viewer', 'admin']);
      snapshots = await stateSnapshots(t);
    });
    after(async () => {
      await snapshots?.close();
      await t?.close();
    });

    test('every JSON route that changes something: 403 to a Viewer whatever the body, and nothing changes', async () => {
      assert.deepEqual(
        routes.filter((r) => r.path === undefined).map((r) => r.name),
        [],
        'a route this test has no target for',
      );
      assert.ok(routes.length > 40, `${routes.length} routes`);
      const before = await snapshots.take();
      const wrong: string[] = [];
      for (const { name, method, path } of routes.filter(judgedBeforeBody))
        for (const body of JSON_BODIES) {
          const res: Response = await t.req(method, path as string, {
            key: viewer,
            payload: body.payload,
            headers: { 'content-type': body.type },
          });
          const record = res.json?.code === '403' && /privilege|participants/.test(String(res.json?.message));
          if (res.status !== 403 || !record)
            wrong.push(`${name} ${path} with ${body.what}: ${res.status} ${res.body.slice(0, 200)}`);
        }
      assert.deepEqual(wrong, []);
      assert.deepEqual(changedTables(before, await snapshots.take()), [], 'nothing stored changed');
    });

    test('a caller who may not see the object: 404 as for a missing one, whatever the body', async () => {
      // Sees partition GLOBAL only: the samples, the parked job and its definition are in partition Finance.
      const outsider = await t.keyWithGrants('outsider', ['*:GLOBAL:View']);
      const held = routes.find((r) => r.name === 'PUT /Job/{key}')?.path as string;
      const before = await snapshots.take();
      const wrong: string[] = [];
      for (const { name, method, path } of routes.filter(judgedBeforeBody)) {
        const res = await t.req(method, path as string, {
          key: outsider,
          payload: '{"Description": ',
          headers: { 'content-type': 'application/json' },
        });
        if ((res.status !== 403 && res.status !== 404) || res.json?.code !== String(res.status))
          wrong.push(`${name} ${path}: ${res.status} ${res.body.slice(0, 200)}`);
      }
      assert.deepEqual(wrong, []);
      for (const [method, path, missing] of [
        ['PUT', '/Queue/Finance.Batch', '/Queue/Finance.Nothing'],
        ['POST', '/Job/Finance.Parked', '/Job/Finance.Nothing'],
        ['PUT', held, '/Job/999999'],
      ] as const) {
        const invisible = await t.req(method, path, {
          key: outsider,
          payload: '{',
          headers: { 'content-type': 'application/json' },
        });
        const absent = await t.req(method, missing, {
          key: outsider,
          payload: '{',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(invisible.status, 404, `${method} ${path}: ${invisible.body}`);
        assert.equal(
          invisible.json.message.replace(/Finance\.(Batch|Parked)|Job:\d+/, '…'),
          absent.json.message.replace(/Finance\.Nothing|Job:\d+/, '…'),
          `${method} ${path} is answered as ${missing} is`,
        );
      }
      assert.deepEqual(changedTables(before, await snapshots.take()), [], 'nothing stored changed');
    });

    test("a Viewer's car-put, jar-put and xml-put: 403 in the XML record whatever the body", async () => {
      const wadl = (await t.xml('GET', '/capabilitiesxml')).body;
      const puts = [...wadl.matchAll(/<method name="PUT" id="([^"]+)"/g)].map((m) => m[1]);
      assert.deepEqual(puts.sort(), ['car-put', 'jar-put', 'xml-put'], 'the PUT services of the WADL');
      const paths: Record<string, string> = { 'car-put': '/car', 'jar-put': '/jar', 'xml-put': '/xml' };
      const before = await snapshots.take();
      const wrong: string[] = [];
      for (const id of puts)
        for (const body of XML_BODIES) {
          const res = await t.xml('PUT', paths[id as string] as string, {
            auth: ['xviewer', VIEWER_PASSWORD],
            payload: body.payload,
            headers: { 'content-type': body.type, 'X-Vendor-Library': 'Finance.Helpers', 'X-Vendor-FileName': 'a.jar' },
          });
          const record = /^<\?xml[^>]*>\s*<error>\s*<code>403<\/code>\s*<message>You need the [^<]*privilege/.test(
            res.body,
          );
          if (res.status !== 403 || !record)
            wrong.push(`${id} with ${body.what}: ${res.status} ${res.body.slice(0, 200)}`);
        }
      assert.deepEqual(wrong, []);
      assert.deepEqual(changedTables(before, await snapshots.take()), [], 'nothing stored changed');
    });
  });
}
