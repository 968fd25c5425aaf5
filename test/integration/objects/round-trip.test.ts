import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, submit } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { SAMPLES } from './samples.ts';

/**
 * What GET renders is accepted back. Fields the server owns (uniqueId, businessKey, read-only
 * fields such as CreationTime or a Job's Status) are ignored when unchanged and refused (400 naming them) when
 * changed, for every object type and for a Job's resubmit (PUT /Job/<id>).
 */

const without = (o: Record<string, unknown>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

for (const backend of backends()) {
  describe(`GET → PUT round trip (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      for (const s of SAMPLES) {
        const created = await t.req('POST', `/${s.type}/${s.key}`, { body: s.body });
        assert.equal(created.status, 201, `${s.type}: ${created.body}`);
      }
    });
    after(() => t.close());

    test('every object type: the body GET answers, sent back with PUT, is accepted and changes nothing', async () => {
      for (const s of SAMPLES) {
        const got = (await t.req('GET', `/${s.type}/${s.key}`)).json;
        const put = await t.req('PUT', `/${s.type}/${s.key}`, { body: got });
        assert.equal(put.status, 200, `${s.type}: ${put.body}`);
        const again = (await t.req('GET', `/${s.type}/${s.key}`)).json;
        assert.deepEqual(without(again, 'LastModificationTime'), without(got, 'LastModificationTime'), s.type);
      }
    });

    test('every object type: the GET body with a change applies the change', async () => {
      for (const s of SAMPLES) {
        const got = (await t.req('GET', `/${s.type}/${s.key}`)).json;
        const put = await t.req('PUT', `/${s.type}/${s.key}`, { body: { ...got, ...s.change } });
        assert.equal(put.status, 200, `${s.type}: ${put.body}`);
        for (const [k, v] of Object.entries(s.change)) assert.deepEqual(put.json[k], v, `${s.type}.${k}`);
      }
    });

    test('a changed read-only field → 400 naming it, and nothing is stored', async () => {
      const got = (await t.req('GET', '/Queue/Finance.Batch')).json;
      for (const [k, v] of Object.entries({
        CreationTime: '2001/01/01 00:00:00,000 UTC',
        uniqueId: 1,
        businessKey: 'Queue:Finance.Other',
      }))
        assertError(
          await t.req('PUT', '/Queue/Finance.Batch', { body: { ...got, Description: 'changed', [k]: v } }),
          400,
          new RegExp(`^Field "${k}" is read-only`),
        );
      assert.deepEqual((await t.req('GET', '/Queue/Finance.Batch')).json, got);
      // A body copied while someone else changed the object is refused too: its LastModificationTime moved on.
      assert.equal((await t.req('PUT', '/Queue/Finance.Batch', { body: { Comment: 'meanwhile' } })).status, 200);
      assertError(
        await t.req('PUT', '/Queue/Finance.Batch', { body: { ...got, Description: 'late' } }),
        400,
        /^Field "LastModificationTime" is read-only/,
      );
    });

    test('POST of a GET body creates a copy when it names no other object', async () => {
      const got = (await t.req('GET', '/Queue/Finance.Batch')).json;
      const copy = without(got, 'businessKey', 'Name');
      const created = await t.req('POST', '/Queue/Finance.Batch2', { body: copy });
      assert.equal(created.status, 201, created.body);
      assert.equal(created.json.ExecutionSize, got.ExecutionSize);
      assert.notEqual(created.json.uniqueId, got.uniqueId);
      assertError(
        await t.req('POST', '/Queue/Finance.Batch3', { body: without(got, 'Name') }),
        400,
        /^Field "businessKey" is read-only/,
      );
    });

    test('Job: PUT /Job/<id> with the body of GET /Job/<id> resubmits; a changed read-only field → 400', async () => {
      const def = await t.req('POST', '/JobDefinition/RoundTrip', {
        body: {
          JobDefinitionType: 'BASH',
          Script: 'echo $WHO',
          Parameters: [
            { Name: 'WHO', DefaultValue: 'world' },
            { Name: 'GREETING', Direction: 'Out' },
          ],
        },
      });
      assert.equal(def.status, 201, def.body);
      const job = await submit(t, 'GLOBAL.RoundTrip', { JobParameters: [{ Name: 'WHO', InValueString: 'Ada' }] });
      const got = await getJob(t, job.jobId);
      assert.ok(got.JobParameters.every((p: Record<string, unknown>) => 'Direction' in p && 'OutValueString' in p));
      const again = await act(t, job.jobId, '', got);
      assert.equal(again.status, 201, again.body);
      assert.notEqual(again.json.jobId, job.jobId);
      assert.equal(again.json.JobParameters[0].InValueString, 'Ada');
      // Settable fields apply; the parameters' declared shape and results are read-only.
      const changed = await act(t, job.jobId, '', { ...got, Priority: 77, Description: 'again' });
      assert.equal(changed.status, 201, changed.body);
      assert.equal(changed.json.Priority, 77);
      const withParam = (i: number, patch: Record<string, unknown>) => ({
        ...got,
        JobParameters: got.JobParameters.map((p: Record<string, unknown>, j: number) =>
          j === i ? { ...p, ...patch } : p,
        ),
      });
      assertError(
        await act(t, job.jobId, '', withParam(0, { Direction: 'Out' })),
        400,
        /JobParameters\[0\]\.Direction" is read-only/,
      );
      assertError(
        await act(t, job.jobId, '', withParam(1, { OutValueString: 'forged' })),
        400,
        /JobParameters\[1\]\.OutValueString" is read-only/,
      );
      assertError(await act(t, job.jobId, '', { ...got, Status: 'Completed' }), 400, /^Field "Status" is read-only/);
      assertError(await act(t, job.jobId, '', { ...got, Colour: 'red' }), 400, 'Unknown field "Colour"');
    });
  });
}
