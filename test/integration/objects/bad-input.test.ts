import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const JSON_TYPE = { 'content-type': 'application/json' };

for (const backend of backends()) {
  describe(`bad input changes nothing (${backend.name})`, () => {
    let t: TestServer;
    let snapshot: string;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/Queue/Batch', { body: { ExecutionSize: 2 } })).status, 201);
      const def = await t.req('POST', '/JobDefinition/Load', {
        body: { DefaultQueue: 'Batch', Parameters: [{ Name: 'P1', DataType: 'Number', DefaultValue: '5' }] },
      });
      assert.equal(def.status, 201, def.body);
    });
    after(() => t.close());

    /** Everything a client can read about the two objects and the objects of type Queue. */
    const state = async () =>
      JSON.stringify([
        (await t.req('GET', '/Queue/Batch')).json,
        (await t.req('GET', '/JobDefinition/Load')).json,
        await t.server.store.listObjects('Queue', { limit: 100 }),
        await t.server.store.listObjects('JobDefinition', { limit: 100 }),
      ]);

    const expectRejected = async (
      method: string,
      path: string,
      options: Parameters<TestServer['req']>[2],
      status: number,
      message: RegExp,
    ) => {
      snapshot = await state();
      const res = await t.req(method, path, options);
      assert.equal(res.status, status, `${method} ${path}: ${res.body}`);
      assert.equal(res.json?.code, String(status));
      assert.match(res.json?.message, message);
      assert.equal(await state(), snapshot, 'stored state unchanged');
      return res;
    };

    test('an unknown field → 400 naming it', async () => {
      await expectRejected('PUT', '/Queue/Batch', { body: { Held: true, Colour: 'red' } }, 400, /"Colour"/);
      await expectRejected('POST', '/Queue/Other', { body: { Colour: 'red' } }, 400, /"Colour"/);
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { Parameters: [{ Name: 'P1', Colour: 'red' }] } },
        400,
        /"Parameters\[0\]\.Colour"/,
      );
    });

    test('a read-only field → 400 naming it', async () => {
      for (const field of ['uniqueId', 'businessKey', 'CreationTime', 'LastModificationTime'])
        await expectRejected('PUT', '/Queue/Batch', { body: { [field]: 1 } }, 400, new RegExp(`"${field}"`));
      await expectRejected(
        'PUT',
        '/ProcessServer/Local',
        { body: { Status: 'Running' } },
        400,
        /"Status" is read-only/,
      );
    });

    test('a wrong type or a value out of range → 400 naming the field', async () => {
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { body: { ExecutionSize: 'four' } },
        400,
        /"ExecutionSize" must be an integer/,
      );
      await expectRejected('PUT', '/Queue/Batch', { body: { ExecutionSize: 2.5 } }, 400, /"ExecutionSize"/);
      await expectRejected('PUT', '/Queue/Batch', { body: { Held: 'yes' } }, 400, /"Held" must be true or false/);
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { Priority: 101 } },
        400,
        /"Priority" must be an integer from 1 to 100/,
      );
      await expectRejected('PUT', '/JobDefinition/Load', { body: { Priority: 0 } }, 400, /"Priority"/);
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { JobDefinitionType: 'COBOL' } },
        400,
        /"JobDefinitionType" must be one of/,
      );
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { Parameters: [{ Name: 'P1', Direction: 'Sideways' }] } },
        400,
        /"Parameters\[0\]\.Direction"/,
      );
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { Parameters: 'P1' } },
        400,
        /"Parameters" must be a list/,
      );
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { body: { QueueTimeZone: 'Mars/Olympus' } },
        400,
        /"QueueTimeZone" must be a time zone/,
      );
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { body: { Description: 'x'.repeat(256) } },
        400,
        /"Description" must be at most 255/,
      );
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { ReturncodeMapToCompleted: 'zero' } },
        400,
        /"ReturncodeMapToCompleted"/,
      );
      // Characters no XML can carry would make the object impossible to export (api-rest object, CAR).
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { body: { Description: 'bell\u0007' } },
        400,
        /"Description" must not hold the control character U\+0007/,
      );
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { Script: 'echo \ud800' } },
        400,
        /"Script" must not hold/,
      );
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { Parameters: [{ Name: 'P1' }, { Name: 'P1' }] } },
        400,
        /"Parameters\[1\]\.Name".*twice/,
      );
    });

    test('a required field left out or set to null → 400', async () => {
      await expectRejected(
        'POST',
        '/Credential/NoUser',
        { body: { Protocol: 'login' } },
        400,
        /"RealUser" is required/,
      );
      await expectRejected(
        'POST',
        '/JobDefinition/X',
        { body: { Parameters: [{ DataType: 'String' }] } },
        400,
        /"Parameters\[0\]\.Name" is required/,
      );
    });

    test('a reference to an object that does not exist → 400 naming the field', async () => {
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { DefaultQueue: 'Nope' } },
        400,
        /"DefaultQueue".*Queue:GLOBAL\.Nope does not exist/,
      );
      await expectRejected(
        'PUT',
        '/JobDefinition/Load',
        { body: { DefaultQueue: 'a.b.c' } },
        400,
        /"DefaultQueue" must be the business key/,
      );
    });

    test('identity fields in the body must match the path', async () => {
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { body: { Name: 'Renamed' } },
        400,
        /"Name" must match the key in the path/,
      );
      await expectRejected('POST', '/Queue/Fresh', { body: { Partition: 'Elsewhere' } }, 400, /"Partition" must match/);
      const same = await t.req('PUT', '/Queue/Batch', { body: { Name: 'Batch', Partition: 'GLOBAL' } });
      assert.equal(same.status, 200, same.body);
    });

    test('POST of an object that exists → 409', async () => {
      await expectRejected(
        'POST',
        '/Queue/Batch',
        { body: { ExecutionSize: 9 } },
        409,
        /Queue:GLOBAL\.Batch already exists/,
      );
    });

    test('GET, PUT or DELETE of a missing object → 404 with the error record', async () => {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await expectRejected(
          method,
          '/Queue/GLOBAL.Missing',
          method === 'PUT' ? { body: {} } : {},
          404,
          /./,
        );
        assert.deepEqual(res.json, { code: '404', message: 'Unable to find object Queue:GLOBAL.Missing' });
      }
      await expectRejected('GET', '/Queue/not..a.key', {}, 404, /Unable to find object Queue:not\.\.a\.key/);
    });

    test('POST into a partition that does not exist → 404 naming the partition', async () => {
      await expectRejected('POST', '/Queue/NOPART.Q', { body: {} }, 404, /Unable to find object Partition:NOPART/);
      await expectRejected('POST', '/Queue/bad-name', { body: {} }, 400, /is not a Queue key/);
    });

    test('DELETE of an object that others reference → 409 naming a referrer', async () => {
      await expectRejected('DELETE', '/Queue/Batch', {}, 409, /JobDefinition:GLOBAL\.Load/);
    });

    test('GLOBAL.System may change only how many jobs it runs at once', async () => {
      const tuned = await t.req('PUT', '/ProcessServer/GLOBAL.System', { body: { ExecutionSize: 50_000 } });
      assert.equal(tuned.status, 200, 'the capacity of GLOBAL.System can be tuned');
      assert.equal((await t.req('GET', '/ProcessServer/GLOBAL.System')).json.ExecutionSize, 50_000);
      for (const body of [{ DefinitionTypes: ['BASH'] }, { ExecutionSize: 10, Description: 'x' }])
        await expectRejected('PUT', '/ProcessServer/GLOBAL.System', { body }, 409, /built in and cannot be changed/);
      for (const ExecutionSize of [100_001, -1, 'many'])
        await expectRejected('PUT', '/ProcessServer/GLOBAL.System', { body: { ExecutionSize } }, 400, /ExecutionSize/);
      assert.equal((await t.req('GET', '/ProcessServer/GLOBAL.System')).json.ExecutionSize, 50_000);
      await expectRejected('PUT', '/Queue/System', { body: { ExecutionSize: 5 } }, 409, /built in/);
    });

    test('built-in objects cannot be deleted; GLOBAL.System cannot be changed', async () => {
      await expectRejected('DELETE', '/Queue/Default', {}, 409, /built in/);
      await expectRejected('DELETE', '/Partition/GLOBAL', {}, 409, /built in/);
      await expectRejected('PUT', '/Queue/System', { body: { Held: true } }, 409, /built in and cannot be changed/);
      await expectRejected('DELETE', '/JobDefinition/System_Sleep', {}, 409, /built in/);
      const ok = await t.req('PUT', '/Queue/Default', { body: { ExecutionSize: 20 } });
      assert.equal(ok.status, 200, 'the Default queue can be tuned');
      // Protecting a built-in keeps its references: the process servers still show their queue providers.
      assert.deepEqual((await t.req('GET', '/ProcessServer/GLOBAL.Local')).json.QueueProviders, [
        'GLOBAL.Local.GLOBAL.Default',
      ]);
      assert.deepEqual((await t.req('GET', '/ProcessServer/GLOBAL.System')).json.QueueProviders, [
        'GLOBAL.System.GLOBAL.System',
      ]);
    });

    test('a body that is not JSON → 415', async () => {
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { payload: 'Held=true', headers: { 'content-type': 'text/plain' } },
        415,
        /content type/i,
      );
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { payload: '<Queue/>', headers: { 'content-type': 'application/xml' } },
        415,
        /content type/i,
      );
    });

    test('malformed JSON or a body that is not an object → 400', async () => {
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { payload: '{"Held": tru', headers: JSON_TYPE },
        400,
        /not valid JSON/,
      );
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { payload: '[1,2]', headers: JSON_TYPE },
        400,
        /must be a JSON object/,
      );
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { payload: '"Held"', headers: JSON_TYPE },
        400,
        /must be a JSON object/,
      );
      await expectRejected(
        'PUT',
        '/Queue/Batch',
        { payload: '{"__proto__": {"Held": true}}', headers: JSON_TYPE },
        400,
        /./,
      );
    });

    test('a body over 1 MiB → 413', async () => {
      const big = JSON.stringify({ Description: 'x'.repeat(1024 * 1024 + 10) });
      await expectRejected('PUT', '/Queue/Batch', { payload: big, headers: JSON_TYPE }, 413, /larger than/);
    });

    test('dates: the Millrace form and ISO-8601 in, the Millrace form out, anything else 400', async () => {
      const sf = await t.req('POST', '/SubmitFrame/Daily', {
        body: { Elements: [{ Kind: 'Every', Every: 1, Unit: 'Days' }], EndDate: '2027-03-01T12:00:00Z' },
      });
      assert.equal(sf.status, 201, sf.body);
      assert.equal(sf.json.EndDate, '2027/03/01 12:00:00,000 UTC');
      const put = await t.req('PUT', '/SubmitFrame/Daily', {
        body: { EndDate: '2027/03/01 12:00:00,000 Europe/Amsterdam' },
      });
      assert.equal(put.json.EndDate, '2027/03/01 12:00:00,000 Europe/Amsterdam');
      const offset = await t.req('PUT', '/SubmitFrame/Daily', { body: { EndDate: '2027-03-01T12:00:00.250+01:00' } });
      assert.equal(offset.json.EndDate, '2027/03/01 12:00:00,250 +01:00');
      for (const bad of [
        'tomorrow',
        '2027/02/30 10:00:00,000 UTC',
        '2027-13-01T00:00:00Z',
        '2027/03/01 12:00:00,000 Mars/Base',
        12,
      ])
        await expectRejected('PUT', '/SubmitFrame/Daily', { body: { EndDate: bad } }, 400, /"EndDate" must be a date/);
    });

    test('a wrong method → 405; an unknown path → 404', async () => {
      const patch = await t.req('PATCH', '/Queue/Batch', { body: {} });
      assert.equal(patch.status, 405);
      assert.match(String(patch.headers.allow), /GET/);
      const unknown = await t.req('GET', '/Spaceship/GLOBAL.X');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.json.code, '404');
    });

    test('errors never carry a stack trace or SQL', async () => {
      const res = await t.req('PUT', '/Queue/Batch', { payload: '{', headers: JSON_TYPE });
      assert.doesNotMatch(res.body, /at .*\.ts:|select |insert /i);
    });
  });
}
