import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { assertError, submit } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`job submit: refused input creates no job (${backend.name})`, () => {
    let t: TestServer;
    let lastJobId = 0;

    /** The job after the last accepted one does not exist: a refused submit made none. */
    async function noJobWasCreated(): Promise<void> {
      const next = await t.req('GET', `/Job/${lastJobId + 1}`);
      assertError(next, 404, `Unable to find object Job:${lastJobId + 1}`);
    }

    before(async () => {
      t = await startTestServer(backend);
      const def = await t.req('POST', '/JobDefinition/GLOBAL.Needs', {
        body: {
          JobDefinitionType: 'BASH',
          Script: 'echo "$Target"',
          Parameters: [
            { Name: 'Target', DataType: 'String' },
            { Name: 'Count', DataType: 'Number', DefaultValue: '3' },
            { Name: 'Result', Direction: 'Out', DataType: 'String' },
          ],
        },
      });
      assert.equal(def.status, 201, def.body);
      lastJobId = (await submit(t, 'GLOBAL.Needs', { JobParameters: [{ Name: 'Target', InValueString: 'a' }] })).jobId;
    });
    after(() => t.close());

    const cases: Array<{ what: string; definition?: string; body: unknown; message: RegExp }> = [
      {
        what: 'an unknown parameter name',
        body: {
          JobParameters: [
            { Name: 'Target', InValueString: 'a' },
            { Name: 'Nope', InValueString: 'x' },
          ],
        },
        message: /Nope/,
      },
      {
        what: 'an unknown JobDefinitionParameter',
        body: {
          JobParameters: [
            { Name: 'Target', InValueString: 'a' },
            { JobDefinitionParameter: 'JobDefinitionParameter:GLOBAL.Needs.Nope', InValueString: 'x' },
          ],
        },
        message: /Nope/,
      },
      {
        what: 'a JobDefinitionParameter of another definition',
        body: {
          JobParameters: [
            { JobDefinitionParameter: 'JobDefinitionParameter:GLOBAL.System_Sleep.MilliSeconds', InValueNumber: 1 },
          ],
        },
        message: /JobDefinitionParameter/,
      },
      {
        what: 'text that is not a number for a Number parameter',
        body: {
          JobParameters: [
            { Name: 'Target', InValueString: 'a' },
            { Name: 'Count', InValueString: 'abc' },
          ],
        },
        message: /Count/,
      },
      {
        what: 'text that is not a number for System_Sleep MilliSeconds',
        definition: 'GLOBAL.System_Sleep',
        body: { JobParameters: [{ Name: 'MilliSeconds', InValueString: 'abc' }] },
        message: /MilliSeconds/,
      },
      {
        what: 'a value for an Out parameter',
        body: {
          JobParameters: [
            { Name: 'Target', InValueString: 'a' },
            { Name: 'Result', InValueString: 'x' },
          ],
        },
        message: /Result/,
      },
      {
        what: 'a missing mandatory parameter',
        body: { JobParameters: [{ Name: 'Count', InValueNumber: 1 }] },
        message: /Target/,
      },
      { what: 'a missing mandatory parameter (no body)', body: undefined, message: /Target/ },
      {
        what: 'a parameter given twice',
        body: {
          JobParameters: [
            { Name: 'Target', InValueString: 'a' },
            { Name: 'Target', InValueString: 'b' },
          ],
        },
        message: /Target/,
      },
      { what: 'JobParameters that is not a list', body: { JobParameters: { Target: 'a' } }, message: /JobParameters/ },
      { what: 'an unknown body field', body: { Target: 'a' }, message: /"Target"/ },
      {
        what: 'a RequestedStartTime that is not a date',
        body: { RequestedStartTime: 'tomorrow morning' },
        message: /RequestedStartTime/,
      },
      { what: 'Priority 0', body: { Priority: 0 }, message: /Priority/ },
      { what: 'Priority 101', body: { Priority: 101 }, message: /Priority/ },
      { what: 'a fractional Priority', body: { Priority: 50.5 }, message: /Priority/ },
      { what: 'a Priority as text', body: { Priority: '60' }, message: /Priority/ },
      { what: 'an unknown Queue', body: { Queue: 'GLOBAL.NoSuchQueue' }, message: /GLOBAL\.NoSuchQueue/ },
      { what: 'a Queue that is not a key', body: { Queue: 'not a key!' }, message: /Queue/ },
      { what: 'HoldOnSubmit that is not a boolean', body: { HoldOnSubmit: 'yes' }, message: /HoldOnSubmit/ },
      { what: 'a Description over 255 characters', body: { Description: 'x'.repeat(256) }, message: /Description/ },
      { what: 'a body that is a list', body: [], message: /object/ },
      {
        what: 'an unknown SubmitFrame',
        body: { SubmitFrame: 'GLOBAL.NoSuchFrame' },
        message: /SubmitFrame:GLOBAL\.NoSuchFrame does not exist/,
      },
      { what: 'a SubmitFrame that is not a key', body: { SubmitFrame: 'not a key!' }, message: /SubmitFrame/ },
      {
        what: 'a SubmitFrame that is not text',
        body: { SubmitFrame: 7 },
        message: /"SubmitFrame" must be the business key <partition>.<name> of a SubmitFrame/,
      },
    ];

    for (const c of cases)
      test(`${c.what} → 400 naming it, and no job`, async () => {
        const body =
          c.body !== undefined && !Array.isArray(c.body) && typeof c.body === 'object' && c.definition === undefined
            ? { JobParameters: [{ Name: 'Target', InValueString: 'a' }], ...(c.body as object) }
            : c.body;
        const res = await t.req('POST', `/Job/${c.definition ?? 'GLOBAL.Needs'}`, body === undefined ? {} : { body });
        assertError(res, 400, c.message);
        await noJobWasCreated();
      });

    test('a body that is not JSON → 400, and no job', async () => {
      const res = await t.req('POST', '/Job/GLOBAL.Needs', {
        payload: '{"JobParameters": [',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400, res.body);
      assert.equal(res.json.code, '400');
      await noJobWasCreated();
    });

    test('a missing definition → 404 Unable to find object JobDefinition:GLOBAL.X, and no job', async () => {
      assertError(await t.req('POST', '/Job/X', { body: {} }), 404, 'Unable to find object JobDefinition:GLOBAL.X');
      assertError(
        await t.req('POST', '/Job/GLOBAL.X/submit', { body: {} }),
        404,
        'Unable to find object JobDefinition:GLOBAL.X',
      );
      assertError(
        await t.req('POST', '/Job/Nowhere.X', { body: {} }),
        404,
        'Unable to find object JobDefinition:Nowhere.X',
      );
      await noJobWasCreated();
    });

    test('a POST action other than submit → 400 naming it, and no job', async () => {
      assertError(await t.req('POST', '/Job/GLOBAL.Needs/launch', { body: {} }), 400, /launch/);
      await noJobWasCreated();
    });

    test('the next accepted submit gets a later id', async () => {
      const job = await submit(t, 'GLOBAL.Needs', { JobParameters: [{ Name: 'Target', InValueString: 'b' }] });
      assert.ok(job.jobId > lastJobId);
      assert.equal(job.Status, 'Queued');
    });
  });
}
