import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** HTTP and SQL definitions in the registry: their fields, the checks on them, and who offers the types. */
for (const backend of backends()) {
  describe(`HTTP and SQL definitions (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    const refused = async (key: string, body: Record<string, unknown>, message: RegExp) => {
      const r = await t.req('POST', `/JobDefinition/GLOBAL.${key}`, { body });
      assert.equal(r.status, 400, r.body);
      assert.equal(r.json.code, '400');
      assert.match(r.json.message, message);
      assert.equal((await t.req('GET', `/JobDefinition/GLOBAL.${key}`)).status, 404);
    };

    test('an HTTP definition is stored with its defaults; a JsonPath Out parameter is kept', async () => {
      const r = await t.req('POST', '/JobDefinition/GLOBAL.Ping', {
        body: {
          JobDefinitionType: 'HTTP',
          Http: { Url: 'http://127.0.0.1:1/health/ready' },
          Parameters: [{ Name: 'ID', Direction: 'Out', JsonPath: '$.items[0].id' }],
        },
      });
      assert.equal(r.status, 201, r.body);
      const d = (await t.req('GET', '/JobDefinition/GLOBAL.Ping')).json;
      assert.deepEqual(d.Http, {
        Method: 'GET',
        Url: 'http://127.0.0.1:1/health/ready',
        Headers: [],
        Body: null,
        Credential: null,
        ExpectStatus: '200-299',
        TimeoutSeconds: 60,
        FollowRedirects: true,
      });
      assert.equal(d.Parameters[0].JsonPath, '$.items[0].id');
      assert.equal(d.Sql, null);
    });

    test('bad HTTP and SQL definitions get the error record and are not stored', async () => {
      await refused('NoHttp', { JobDefinitionType: 'HTTP' }, /"Http" is required for a HTTP definition/);
      await refused(
        'Misplaced',
        { JobDefinitionType: 'BASH', Script: 'true', Http: { Url: 'http://x' } },
        /only for a HTTP/,
      );
      await refused('Ftp', { JobDefinitionType: 'HTTP', Http: { Url: 'ftp://x/' } }, /http:\/\/ or https:\/\//);
      await refused(
        'Ranges',
        { JobDefinitionType: 'HTTP', Http: { Url: 'http://x/', ExpectStatus: '2xx' } },
        /ExpectStatus/,
      );
      await refused(
        'InPath',
        { JobDefinitionType: 'HTTP', Http: { Url: 'http://x/' }, Parameters: [{ Name: 'A', JsonPath: '$.a' }] },
        /only an Out or InOut parameter/,
      );
      const sql = { Credential: 'GLOBAL.Db', Script: 'SELECT 1' };
      await refused(
        'PasswordInUrl',
        { JobDefinitionType: 'SQL', Sql: { ...sql, Database: 'postgres://u:secret@db:5432/x' } },
        /must not hold a user or password/,
      );
      await refused(
        'NoSuchCredential',
        { JobDefinitionType: 'SQL', Sql: { ...sql, Database: 'postgres://db:5432/x' } },
        /Field "Sql.Credential": Credential:GLOBAL.Db does not exist/,
      );
      await refused(
        'NoSuchHttpCredential',
        { JobDefinitionType: 'HTTP', Http: { Url: 'http://x/', Credential: 'GLOBAL.Nope' } },
        /Field "Http.Credential": Credential:GLOBAL.Nope does not exist/,
      );
      await refused(
        'NotPostgres',
        { JobDefinitionType: 'SQL', Sql: { ...sql, Database: 'mysql://db/x' } },
        /postgres:\/\/ URL/,
      );
    });

    test('process servers offer the script types by default; HTTP and SQL only when listed', async () => {
      const local = (await t.req('GET', '/ProcessServer/GLOBAL.Local')).json;
      assert.deepEqual(local.DefinitionTypes, ['BASH', 'SH', 'PYTHON', 'NODE']);
      assert.equal((await t.req('POST', '/ProcessServer/GLOBAL.Plain', { body: {} })).status, 201);
      const plain = (await t.req('GET', '/ProcessServer/GLOBAL.Plain')).json;
      assert.deepEqual(plain.DefinitionTypes, ['BASH', 'SH', 'PYTHON', 'NODE']);
      const r = await t.req('PUT', '/ProcessServer/GLOBAL.Plain', { body: { DefinitionTypes: ['HTTP', 'SQL'] } });
      assert.equal(r.status, 200, r.body);
      assert.deepEqual((await t.req('GET', '/ProcessServer/GLOBAL.Plain')).json.DefinitionTypes, ['HTTP', 'SQL']);
    });
  });
}
