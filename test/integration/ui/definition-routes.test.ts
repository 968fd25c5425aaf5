import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readCar } from '../../../src/car/archive.ts';
import { definitionTypes, requireType } from '../../../src/model/registry.ts';
import { backends } from '../../helpers/backends.ts';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * What the dashboard's definition forms read besides the JSON interface: the registry's declarations
 * (`ui/api/types`) and one object as a CAR download (`ui/api/car/<type>/<key>`), both for a signed-in session only,
 * the export with the reader's own privileges.
 */

const UI = '/millrace/ui';

for (const backend of backends()) {
  describe(backend.name, () => {
    let t: TestServer;

    before(async () => {
      t = await startTestServer(backend);
      await t.req('POST', '/JobDefinition/GLOBAL.Nightly', { body: { JobDefinitionType: 'BASH', Script: 'true' } });
      await t.req('POST', '/Partition/Finance', { body: {} });
      await t.req('POST', '/JobDefinition/Finance.Ledger', { body: { JobDefinitionType: 'BASH', Script: 'true' } });
      await t.loginWithGrants('gil', 'gil-password-123', ['*:GLOBAL:View']);
    });
    after(() => t?.close());

    const get = (url: string, cookie?: string) =>
      t.server.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

    async function cookieOf(user: string, password: string): Promise<string> {
      const res = await t.server.app.inject({
        method: 'POST',
        url: `${UI}/api/session`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ user, password }),
      });
      assert.equal(res.statusCode, 200, res.body);
      return String(res.headers['set-cookie']).split(';')[0] as string;
    }

    test("the types are the registry's declarations of every definition type, for a session only", async () => {
      const anonymous = await get(`${UI}/api/types`);
      assert.equal(anonymous.statusCode, 401);
      assert.deepEqual(Object.keys(anonymous.json()), ['code', 'message']);

      const res = await get(`${UI}/api/types`, await cookieOf('admin', ADMIN_PASSWORD));
      assert.equal(res.statusCode, 200);
      const types: { name: string; key: string; identity: string[]; fields: { name: string; kind: unknown }[] }[] =
        res.json().types;
      assert.deepEqual(
        types.map((d) => d.name),
        definitionTypes().map((d) => d.name),
      );
      const jd = types.find((d) => d.name === 'JobDefinition');
      assert.ok(jd);
      assert.deepEqual(
        jd.fields.map((f) => f.name),
        requireType('JobDefinition').fields.map((f) => f.name),
      );
      assert.deepEqual(jd.identity, ['Partition', 'Name']);
      const http = jd.fields.find((f) => f.name === 'Http')?.kind as { kind: string; fields: { name: string }[] };
      assert.equal(http.kind, 'record');
      const headers = http.fields.find((f) => f.name === 'Headers') as { kind: unknown; default: unknown } | undefined;
      assert.deepEqual(headers?.kind, {
        kind: 'map',
        maxEntries: 50,
        keyPatternText: "letters, digits and !#$%&'*+-.^_`|~ (an HTTP header name)",
      });
      assert.deepEqual(headers?.default, {});
      const name = jd.fields.find((f) => f.name === 'Name');
      assert.deepEqual(name?.kind, {
        kind: 'string',
        maxLength: 80,
        pattern: '^[A-Za-z_][A-Za-z0-9_]{0,79}$',
        patternText: 'letters, digits and _, starting with a letter or _, at most 80 characters',
      });
    });

    test("one object's CAR export downloads with the session, with the reader's privileges", async () => {
      assert.equal((await get(`${UI}/api/car/JobDefinition/GLOBAL.Nightly`)).statusCode, 401);
      const admin = await cookieOf('admin', ADMIN_PASSWORD);
      const res = await get(`${UI}/api/car/JobDefinition/GLOBAL.Nightly`, admin);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'application/zip');
      assert.equal(res.headers['content-disposition'], 'attachment; filename="JobDefinition_GLOBAL.Nightly.car"');
      const names = (await readCar(res.rawPayload)).map((e) => e.name);
      assert.deepEqual(names.sort(), ['JobDefinition/GLOBAL.Nightly.xml', 'META-INF/export-info.xml']);

      const gil = await cookieOf('gil', 'gil-password-123');
      assert.equal((await get(`${UI}/api/car/JobDefinition/GLOBAL.Nightly`, gil)).statusCode, 200);
      const hidden = await get(`${UI}/api/car/JobDefinition/Finance.Ledger`, gil);
      assert.equal(hidden.statusCode, 404, 'an object the reader may not view is missing to them');
      assert.deepEqual(hidden.json(), { code: '404', message: 'Unable to find object JobDefinition:Finance.Ledger' });
      assert.equal((await get(`${UI}/api/car/Job/1`, admin)).statusCode, 404, 'a runtime type has no export');
    });
  });
}
