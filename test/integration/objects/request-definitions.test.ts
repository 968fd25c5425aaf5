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
        Headers: {},
        Body: null,
        Credential: null,
        ExpectStatus: '200-299',
        TimeoutSeconds: 60,
        FollowRedirects: true,
      });
      assert.equal(d.Parameters[0].JsonPath, '$.items[0].id');
      assert.equal(d.Sql, null);
    });

    test('Headers are a JSON object of names and values, in JSON and in XML; odd names are names or refused', async () => {
      const headers = { Accept: 'application/json', 'X-Order': '${ORDER}', constructor: 'y' };
      const r = await t.req('POST', '/JobDefinition/GLOBAL.Headed', {
        body: { JobDefinitionType: 'HTTP', Http: { Url: 'http://x/', Headers: headers } },
      });
      assert.equal(r.status, 201, r.body);
      const d = (await t.req('GET', '/JobDefinition/GLOBAL.Headed')).json;
      assert.deepEqual(Object.entries(d.Http.Headers), Object.entries(headers));
      const xml = await t.xml('GET', '/object/JobDefinition/GLOBAL.Headed');
      assert.equal(xml.status, 200, xml.body);
      assert.match(
        xml.body.replace(/>\s+</g, '><'),
        /<Headers><Header name="Accept">application\/json<\/Header><Header name="X-Order">\$\{ORDER\}<\/Header><Header name="constructor">y<\/Header><\/Headers>/,
      );
      // The XML document sent back changes nothing; with a header named __proto__ it stores that name.
      const put = (body: string) =>
        t.xml('PUT', '/xml', { payload: body, headers: { 'content-type': 'application/xml' } });
      assert.equal((await put(xml.body)).status, 200);
      assert.deepEqual((await t.req('GET', '/JobDefinition/GLOBAL.Headed')).json.Http.Headers, headers);
      const withProto = xml.body.replace(
        '<Header name="constructor">y</Header>',
        '<Header name="__proto__">x</Header>',
      );
      assert.notEqual(withProto, xml.body);
      const proto = await put(withProto);
      assert.equal(proto.status, 200, proto.body);
      const after = (await t.req('GET', '/JobDefinition/GLOBAL.Headed')).json.Http.Headers;
      assert.deepEqual(Object.entries(after), [
        ['Accept', 'application/json'],
        ['X-Order', '${ORDER}'],
        ['__proto__', 'x'],
      ]);
      // The JSON interface refuses a body naming __proto__ (its parser's rule) with the error record; nothing changes.
      const refusedProto = await t.req('PUT', '/JobDefinition/GLOBAL.Headed', {
        body: { Http: { Url: 'http://x/', Headers: JSON.parse('{"__proto__": "x"}') } },
      });
      assert.equal(refusedProto.status, 400, refusedProto.body);
      assert.deepEqual(Object.keys(refusedProto.json).sort(), ['code', 'message']);
      assert.equal(refusedProto.json.code, '400');
      assert.deepEqual(
        Object.entries((await t.req('GET', '/JobDefinition/GLOBAL.Headed')).json.Http.Headers),
        Object.entries(after),
      );
      // A list of {Name, Value} records is not the object form.
      await refused(
        'HeaderList',
        { JobDefinitionType: 'HTTP', Http: { Url: 'http://x/', Headers: [{ Name: 'A', Value: 'b' }] } },
        /"Http.Headers" must be an object/,
      );
      await refused(
        'HeaderName',
        { JobDefinitionType: 'HTTP', Http: { Url: 'http://x/', Headers: { 'X Y': 'b' } } },
        /"Http.Headers.X Y" is not a valid name/,
      );
      await refused(
        'HeaderTwice',
        { JobDefinitionType: 'HTTP', Http: { Url: 'http://x/', Headers: { 'x-a': '1', 'X-A': '2' } } },
        /given twice/,
      );
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
