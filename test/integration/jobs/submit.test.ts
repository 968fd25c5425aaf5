import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { getJob, submit, submitSleep } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** The fields of a job in the order of docs/architecture.md §12. */
const JOB_FIELDS = [
  'jobId',
  'uniqueId',
  'businessKey',
  'JobDefinition',
  'Description',
  'Documentation',
  'Status',
  'StatusCode',
  'Priority',
  'Queue',
  'ProcessServer',
  'RequestedStartTime',
  'ScheduledStartTime',
  'RunStart',
  'RunEnd',
  'ReturnCode',
  'ParentJob',
  'JobGroup',
  'SubmittedBy',
  'JobParameters',
  'JobNotes',
  'JobFiles',
  'CreationTime',
  'LastModificationTime',
];
/** Every field of docs/architecture.md §12 is there, in that order (fields added later may sit between them). */
function assertJobFields(job: Record<string, unknown>): void {
  assert.deepEqual(
    Object.keys(job).filter((k) => JOB_FIELDS.includes(k)),
    JOB_FIELDS,
  );
}

const DATE = /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2},\d{3} UTC$/;

for (const backend of backends()) {
  describe(`job submit (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      // An agent job: no agent is connected, so it waits Queued.
      const def = await t.req('POST', '/JobDefinition/GLOBAL.Echo', {
        body: { JobDefinitionType: 'BASH', Script: 'echo hi' },
      });
      assert.equal(def.status, 201, def.body);
    });
    after(() => t.close());

    test('POST /Job/<partition>.<definition> answers 201 with the job of docs/architecture.md §12', async () => {
      const res = await t.req('POST', '/Job/GLOBAL.Echo', { body: { Description: 'first' } });
      assert.equal(res.status, 201, res.body);
      const job = res.json;
      assertJobFields(job);
      assert.ok(Number.isInteger(job.jobId) && job.jobId > 0);
      assert.ok(Number.isInteger(job.uniqueId) && job.uniqueId > 0);
      assert.equal(job.businessKey, `Job:${job.jobId}`);
      assert.equal(job.JobDefinition, 'GLOBAL.Echo');
      assert.equal(job.Description, 'first');
      assert.equal(job.Documentation, null);
      assert.equal(job.Status, 'Queued');
      assert.equal(job.StatusCode, 'Q');
      assert.equal(job.Priority, 50);
      assert.equal(job.Queue, 'GLOBAL.Default');
      assert.equal(job.ProcessServer, null);
      assert.match(job.RequestedStartTime, DATE);
      assert.equal(job.ScheduledStartTime, null);
      assert.equal(job.RunStart, null);
      assert.equal(job.RunEnd, null);
      assert.equal(job.ReturnCode, null);
      assert.equal(job.ParentJob, null);
      assert.equal(job.JobGroup, null);
      assert.equal(job.SubmittedBy, 'admin');
      assert.deepEqual(job.JobParameters, []);
      assert.deepEqual(job.JobNotes, []);
      assert.deepEqual(job.JobFiles, []);
      assert.match(job.CreationTime, DATE);
      assert.match(job.LastModificationTime, DATE);
      assert.deepEqual(await getJob(t, job.jobId), job, 'GET shows what the submit answered');
    });

    test('a System_Sleep job lists its parameter with the default value', async () => {
      const job = await submit(t, 'GLOBAL.System_Sleep', { HoldOnSubmit: true });
      assert.deepEqual(job.JobParameters, [
        {
          Name: 'MilliSeconds',
          Direction: 'In',
          DataType: 'Number',
          JobDefinitionParameter: 'JobDefinitionParameter:GLOBAL.System_Sleep.MilliSeconds',
          InValueString: null,
          InValueNumber: 1000,
          InValueDate: null,
          OutValueString: null,
          OutValueNumber: null,
          OutValueDate: null,
        },
      ]);
      assert.equal(job.Queue, 'GLOBAL.System');
    });

    test('POST …/submit submits too', async () => {
      const res = await t.req('POST', '/Job/GLOBAL.Echo/submit', { body: {} });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.JobDefinition, 'GLOBAL.Echo');
      assert.equal(res.json.Status, 'Queued');
    });

    test('a bare definition name means partition GLOBAL', async () => {
      for (const path of ['/Job/Echo', '/Job/Echo/submit']) {
        const res = await t.req('POST', path, { body: {} });
        assert.equal(res.status, 201, `${path}: ${res.body}`);
        assert.equal(res.json.JobDefinition, 'GLOBAL.Echo');
      }
    });

    test('the body is optional: none, an empty one, or {}', async () => {
      const ids = new Set<number>();
      for (const options of [
        {},
        { payload: '', headers: { 'content-type': 'application/json' } },
        { body: {} },
        { body: null },
      ]) {
        const res = await t.req('POST', '/Job/GLOBAL.Echo', options);
        assert.equal(res.status, 201, `${JSON.stringify(options)}: ${res.body}`);
        assert.equal(res.json.Status, 'Queued');
        ids.add(res.json.jobId);
      }
      assert.equal(ids.size, 4, 'each submit makes its own job');
    });

    test('job ids increase with each submit', async () => {
      const a = await submit(t, 'GLOBAL.Echo');
      const b = await submit(t, 'GLOBAL.Echo');
      assert.ok(b.jobId > a.jobId);
      assert.notEqual(a.uniqueId, b.uniqueId);
    });

    test('?fields= returns only the named fields, matched without regard to case', async () => {
      const res = await t.req('POST', '/Job/GLOBAL.Echo?fields=jobId,uniqueid', { body: {} });
      assert.equal(res.status, 201, res.body);
      assert.deepEqual(Object.keys(res.json).sort(), ['jobId', 'uniqueId']);
      assert.ok(Number.isInteger(res.json.jobId));
      const full = await getJob(t, res.json.jobId);
      assert.equal(full.uniqueId, res.json.uniqueId);

      const other = await t.req('POST', '/Job/Echo/submit?fields=JOBID,%20status', { body: {} });
      assert.equal(other.status, 201, other.body);
      assert.deepEqual(other.json, { jobId: other.json.jobId, Status: 'Queued' });
    });

    test('without ?fields= (or with an empty one) every field is returned', async () => {
      const res = await t.req('POST', '/Job/GLOBAL.Echo?fields=', { body: {} });
      assert.equal(res.status, 201, res.body);
      assertJobFields(res.json);
    });

    test('a definition in another partition is submitted by <partition>.<name>', async () => {
      assert.equal((await t.req('POST', '/Partition/Fin', { body: {} })).status, 201);
      const def = await t.req('POST', '/JobDefinition/Fin.Load', { body: { Script: 'true', Priority: 70 } });
      assert.equal(def.status, 201, def.body);
      const job = await submit(t, 'Fin.Load', {});
      assert.equal(job.JobDefinition, 'Fin.Load');
      assert.equal(job.Priority, 70, "the definition's priority");
      assert.equal((await t.req('POST', '/Job/Load', { body: {} })).status, 404, 'a bare name is GLOBAL.Load');
    });

    test('Description and Priority of the body are applied', async () => {
      const job = await submit(t, 'GLOBAL.Echo', { Description: 'nightly load', Priority: 60 });
      assert.equal(job.Description, 'nightly load');
      assert.equal(job.Priority, 60);
    });

    test('a System_Sleep job submitted with MilliSeconds 0 is accepted as a number', async () => {
      const job = await submitSleep(t, 0, { HoldOnSubmit: true });
      assert.equal(job.JobParameters[0].InValueNumber, 0);
    });
  });
}
