import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseXml } from '../../../src/car/xml.ts';
import { backends } from '../../helpers/backends.ts';
import { assertError, getJob, postCreated, submit } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const XML = { 'content-type': 'application/xml; charset=utf-8' };
const BAD: ReadonlyArray<[string, unknown, string]> = [
  ['0', 0, '0'],
  ['a year and a second', 31_536_001, '31536001'],
  ['text', 'abc', 'abc'],
];

const definitionXml = (name: string, maxRunTime: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<JobDefinition><Name>${name}</Name><Partition type="Partition" path="GLOBAL"/><JobDefinitionType>System</JobDefinitionType><DefaultQueue type="Queue" path="GLOBAL.System"/><MaxRunTime>${maxRunTime}</MaxRunTime></JobDefinition>`;

/**
 * MaxRunTime (docs/architecture.md §6b) as input: 1 to 31,536,000 seconds on a definition, a chain and a submit, on
 * the JSON and the XML interface; a bad value is the interface's error record naming the field, and nothing is
 * stored. An action's body cannot set it (it is given at submit).
 */
for (const backend of backends()) {
  describe(`MaxRunTime input (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    test('the JSON interface refuses a bad MaxRunTime on a definition, a chain and a submit, storing nothing', async () => {
      await postCreated(t, '/JobDefinition/GLOBAL.Step', {
        JobDefinitionType: 'System',
        DefaultQueue: 'GLOBAL.System',
      });
      const last = (
        await submit(t, 'GLOBAL.System_Sleep', { JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] })
      ).jobId as number;
      for (const [what, value] of BAD) {
        const def = await t.req('POST', '/JobDefinition/GLOBAL.Limited', {
          body: { JobDefinitionType: 'System', MaxRunTime: value },
        });
        assertError(def, 400, /MaxRunTime/);
        assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Limited')).status, 404, what);
        const chain = await t.req('POST', '/JobChain/GLOBAL.LimitedChain', {
          body: { MaxRunTime: value, Steps: [{ Name: 'One', Calls: [{ JobDefinition: 'GLOBAL.Step' }] }] },
        });
        assertError(chain, 400, /MaxRunTime/);
        assert.equal((await t.req('GET', '/JobChain/GLOBAL.LimitedChain')).status, 404, what);
        assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.LimitedChain')).status, 404, what);
        const job = await t.req('POST', '/Job/GLOBAL.System_Sleep', { body: { MaxRunTime: value } });
        assertError(job, 400, /MaxRunTime/);
        assertError(await t.req('GET', `/Job/${last + 1}`), 404, `Unable to find object Job:${last + 1}`);
      }
      // The bounds themselves are accepted.
      await postCreated(t, '/JobDefinition/GLOBAL.Limited', { JobDefinitionType: 'System', MaxRunTime: 1 });
      await postCreated(t, '/JobChain/GLOBAL.LimitedChain', {
        MaxRunTime: 31_536_000,
        Steps: [{ Name: 'One', Calls: [{ JobDefinition: 'GLOBAL.Step' }] }],
      });
      assert.equal((await t.req('GET', '/JobChain/GLOBAL.LimitedChain')).json.MaxRunTime, 31_536_000);
      const put = await t.req('PUT', '/JobDefinition/GLOBAL.Limited', { body: { MaxRunTime: 0 } });
      assertError(put, 400, /MaxRunTime/);
      assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Limited')).json.MaxRunTime, 1);
    });

    test("an action's body cannot set MaxRunTime: it is given at submit", async () => {
      const held = await submit(t, 'GLOBAL.System_Sleep', { HoldOnSubmit: true });
      const res = await t.req('PUT', `/Job/${held.jobId}/release`, { body: { MaxRunTime: 5 } });
      assertError(res, 400, /MaxRunTime.*submit/);
      assert.equal((await getJob(t, held.jobId)).Status, 'Held');
    });

    test('the XML interface refuses a bad MaxRunTime with its error record, storing nothing', async () => {
      for (const [what, , text] of BAD) {
        const res = await t.xml('PUT', '/xml', { payload: definitionXml('XmlLimited', text), headers: XML });
        assert.equal(res.status, 400, `${what}: ${res.body}`);
        const root = parseXml(res.body);
        assert.equal(root.name, 'error');
        assert.equal(root.children.find((c) => c.name === 'code')?.text, '400');
        assert.match(root.children.find((c) => c.name === 'message')?.text ?? '', /MaxRunTime/);
        assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.XmlLimited')).status, 404, what);
      }
      const ok = await t.xml('PUT', '/xml', { payload: definitionXml('XmlLimited', '7200'), headers: XML });
      assert.equal(ok.status, 201, ok.body);
      assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.XmlLimited')).json.MaxRunTime, 7200);
      const object = await t.xml('GET', '/object/JobDefinition/GLOBAL.XmlLimited');
      assert.match(object.body, /<MaxRunTime>7200<\/MaxRunTime>/);
    });
  });
}
