import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { type JobJson, submit } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const param = (job: JobJson, name: string) => job.JobParameters.find((p: { Name: string }) => p.Name === name);

for (const backend of backends()) {
  describe(`job parameters on submit (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      const def = await t.req('POST', '/JobDefinition/GLOBAL.Params', {
        body: {
          JobDefinitionType: 'BASH',
          Script: 'echo "$Target"',
          Parameters: [
            { Name: 'Target', DataType: 'String' },
            { Name: 'Count', DataType: 'Number', DefaultValue: '3' },
            { Name: 'When', DataType: 'Date', Optional: true },
            { Name: 'Result', Direction: 'Out', DataType: 'String' },
          ],
        },
      });
      assert.equal(def.status, 201, def.body);
    });
    after(() => t.close());

    test('a parameter named by Name gets the value; the others keep their defaults', async () => {
      const job = await submit(t, 'GLOBAL.Params', { JobParameters: [{ Name: 'Target', InValueString: 'ledger' }] });
      assert.deepEqual(
        job.JobParameters.map((p: { Name: string; Direction: string; DataType: string }) => [
          p.Name,
          p.Direction,
          p.DataType,
        ]),
        [
          ['Target', 'In', 'String'],
          ['Count', 'In', 'Number'],
          ['When', 'In', 'Date'],
          ['Result', 'Out', 'String'],
        ],
      );
      assert.equal(param(job, 'Target').InValueString, 'ledger');
      assert.equal(param(job, 'Count').InValueNumber, 3);
      assert.equal(param(job, 'When').InValueDate, null);
      assert.equal(param(job, 'Result').OutValueString, null);
      for (const name of ['Target', 'Count', 'When', 'Result'])
        assert.equal(param(job, name).JobDefinitionParameter, `JobDefinitionParameter:GLOBAL.Params.${name}`);
    });

    test('a String value may span lines, and comes back as given', async () => {
      const value = 'first line\nsecond line\n\tindented';
      const job = await submit(t, 'GLOBAL.Params', { JobParameters: [{ Name: 'Target', InValueString: value }] });
      assert.equal(param(job, 'Target').InValueString, value);
    });

    test('a parameter named by JobDefinitionParameter gets the value', async () => {
      const job = await submit(t, 'GLOBAL.Params', {
        JobParameters: [
          { JobDefinitionParameter: 'JobDefinitionParameter:GLOBAL.Params.Target', InValueString: 'books' },
          { JobDefinitionParameter: 'JobDefinitionParameter:GLOBAL.Params.Count', InValueNumber: 12 },
        ],
      });
      assert.equal(param(job, 'Target').InValueString, 'books');
      assert.equal(param(job, 'Count').InValueNumber, 12);
    });

    test('values are converted to the data type: a number as text, a date in the form of docs/architecture.md §5', async () => {
      const job = await submit(t, 'GLOBAL.Params', {
        JobParameters: [
          { Name: 'Target', InValueString: 'x' },
          { Name: 'Count', InValueString: '42' },
          { Name: 'When', InValueDate: '2026/03/01 08:15:00,000 Europe/Amsterdam' },
        ],
      });
      assert.equal(param(job, 'Count').InValueNumber, 42);
      assert.equal(param(job, 'Count').InValueString, null);
      assert.equal(param(job, 'When').InValueDate, '2026/03/01 08:15:00,000 Europe/Amsterdam');
    });

    test('System_Sleep takes MilliSeconds by either form', async () => {
      const byName = await submit(t, 'System_Sleep', {
        HoldOnSubmit: true,
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 250 }],
      });
      assert.equal(byName.JobParameters[0].InValueNumber, 250);
      const byRef = await submit(t, 'System_Sleep', {
        HoldOnSubmit: true,
        JobParameters: [
          { JobDefinitionParameter: 'JobDefinitionParameter:GLOBAL.System_Sleep.MilliSeconds', InValueNumber: 75 },
        ],
      });
      assert.equal(byRef.JobParameters[0].InValueNumber, 75);
    });
  });
}
