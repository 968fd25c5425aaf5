import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { assertError, postCreated as post, submit, waitForStatus } from '../../helpers/jobs.ts';
import { ADMIN_KEY, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * The inboxes: what waits for a person, newest first, in the list shape. Operator messages
 * filtered by ReplyStatus, user messages the caller may answer (a participant by name or role, with Reply),
 * alerts by Status; a caller of partition GLOBAL sees none of partition B's. Made by real flows: a
 * System_OperatorMessage job, UserMessage jobs, and alert sources raising on Error jobs.
 */

const approval = (participants: string[]) => ({
  JobDefinitionType: 'UserMessage',
  DefaultQueue: 'GLOBAL.System',
  UserMessage: {
    Text: 'Go?',
    Responses: [{ Response: 'Approve', Status: 'Completed', ReturnCode: 0 }],
    Participants: participants,
  },
});

const ids = (res: { json: { items: Array<{ uniqueId: number }> } }) => res.json.items.map((i) => i.uniqueId);
const desc = (xs: number[]) => [...xs].sort((a, b) => b - a);

for (const backend of backends()) {
  describe(`Inboxes (${backend.name})`, () => {
    let t: TestServer;
    let bob: string; // sees and answers partition GLOBAL only
    let carol: string; // role Approvers: sees and answers everything
    let ask: number; // the System_OperatorMessage job's message (GLOBAL)
    const alerts: Record<string, number> = {}; // by partition
    const alertMessages: Record<string, number> = {};
    const userMessages: Record<string, number> = {};
    before(async () => {
      t = await startTestServer(backend);
      await post(t, '/Partition/B');
      bob = await t.keyWithGrants('bob', ['*:GLOBAL:View,Reply']);
      await t.server.accounts.putRole('Approvers', ['*:*:View,Reply']);
      await t.server.accounts.addUser('carol', { roles: ['Approvers'] });
      carol = (await t.server.accounts.createApiKey('carol', {})).key;
      for (const p of ['GLOBAL', 'B']) {
        await post(t, `/AlertEscalation/${p}.Nobody`, {});
        await post(t, `/JobDefinition/${p}.FailNow`, { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' });
        await post(t, `/JobDefinitionAlertSource/${p}.Failures`, {
          NamePattern: 'FailNow',
          PartitionPattern: p,
          Statuses: [{ Status: 'Error' }],
          DefaultAlertEscalation: `${p}.Nobody`,
        });
        await post(t, `/JobDefinition/${p}.Approve`, approval(p === 'GLOBAL' ? ['bob', 'ROLE:Approvers'] : ['bob']));
      }
      const question = await submit(t, 'GLOBAL.System_OperatorMessage', {
        JobParameters: [
          { Name: 'Message', InValueString: 'Tape loaded?' },
          { Name: 'ReplyExpression', InValueString: 'Yes|No' },
        ],
      });
      ask = (await waitForStatus(t, question.jobId, 'Console')).OperatorMessage;
      for (const p of ['GLOBAL', 'B']) {
        const failed = await submit(t, `${p}.FailNow`);
        await waitForStatus(t, failed.jobId, 'Error');
        const list = await t.req('GET', `/Alert?Partition=${p}`);
        assert.equal(list.json.items.length, 1, list.body);
        alerts[p] = list.json.items[0].uniqueId;
        alertMessages[p] = list.json.items[0].OperatorMessage;
        const approve = await submit(t, `${p}.Approve`);
        userMessages[p] = (await waitForStatus(t, approve.jobId, 'Console')).UserMessage;
      }
    });
    after(() => t.close());

    test('operator messages newest first, filtered by ReplyStatus, as GET of one renders them', async () => {
      const all = [ask, alertMessages.GLOBAL as number, alertMessages.B as number];
      const required = await t.req('GET', '/OperatorMessage?ReplyStatus=Required');
      assert.equal(required.status, 200, required.body);
      assert.deepEqual(ids(required), desc(all));
      for (const item of required.json.items)
        assert.deepEqual(item, (await t.req('GET', `/OperatorMessage/${item.uniqueId}`)).json);
      const paged = await t.req('GET', '/OperatorMessage?Limit=2&fields=uniqueId');
      assert.deepEqual(
        paged.json.items,
        desc(all)
          .slice(0, 2)
          .map((uniqueId) => ({ uniqueId })),
      );
      const rest = await t.req('GET', `/OperatorMessage?Limit=2&fields=uniqueId&After=${paged.json.next}`);
      assert.deepEqual(rest.json, { items: [{ uniqueId: desc(all)[2] }], next: null });

      const replied = await t.req('PUT', `/OperatorMessage/${ask}/reply`, { body: { Reply: 'Yes' } });
      assert.equal(replied.status, 200, replied.body);
      assert.deepEqual(ids(await t.req('GET', '/OperatorMessage?ReplyStatus=Required')), desc(all.slice(1)));
      assert.deepEqual(ids(await t.req('GET', '/OperatorMessage?ReplyStatus=replied')), [ask]);
      assert.deepEqual(ids(await t.req('GET', '/OperatorMessage?ReplyStatus=Replied,Required')), desc(all));
      assert.deepEqual(ids(await t.req('GET', '/OperatorMessage?ReplyStatus=NotRequired')), []);
      // bob sees partition GLOBAL's only.
      assert.deepEqual(
        ids(await t.req('GET', '/OperatorMessage', { key: bob })),
        desc([ask, alertMessages.GLOBAL as number]),
      );
      assert.deepEqual((await t.req('GET', '/OperatorMessage?Partition=B', { key: bob })).json, {
        items: [],
        next: null,
      });
    });

    test('user messages: those the caller may answer, by name or role, with ReplyStatus', async () => {
      assert.deepEqual(ids(await t.req('GET', '/UserMessage', { key: bob })), [userMessages.GLOBAL]);
      assert.deepEqual(ids(await t.req('GET', '/UserMessage', { key: carol })), [userMessages.GLOBAL]);
      assert.deepEqual(ids(await t.req('GET', '/UserMessage', { key: ADMIN_KEY })), [], 'admin is no participant');
      const viewer = await t.keyWithGrants('bob2', ['*:*:View']); // no Reply privilege
      assert.deepEqual(ids(await t.req('GET', '/UserMessage', { key: viewer })), []);
      const one = await t.req('GET', '/UserMessage?ReplyStatus=Required', { key: carol });
      assert.deepEqual(one.json.items[0], (await t.req('GET', `/UserMessage/${userMessages.GLOBAL}`)).json);
      const answered = await t.req('PUT', `/UserMessage/${userMessages.GLOBAL}/reply`, {
        body: { Response: 'Approve' },
        key: carol,
      });
      assert.equal(answered.status, 200, answered.body);
      assert.deepEqual(ids(await t.req('GET', '/UserMessage?ReplyStatus=Required', { key: bob })), []);
      assert.deepEqual(ids(await t.req('GET', '/UserMessage?ReplyStatus=Replied', { key: bob })), [
        userMessages.GLOBAL,
      ]);
      assertError(await t.req('GET', '/UserMessage?ReplyStatus=Maybe', { key: bob }), 400, /"ReplyStatus": "Maybe"/);
    });

    test('alerts by Status, newest first; a viewer of GLOBAL sees none of B', async () => {
      assert.deepEqual(
        ids(await t.req('GET', '/Alert?Status=NotAcknowledged')),
        desc([alerts.GLOBAL as number, alerts.B as number]),
      );
      assert.deepEqual(ids(await t.req('GET', '/Alert?Status=NotAcknowledged', { key: bob })), [alerts.GLOBAL]);
      const ack = await t.req('PUT', `/Alert/${alerts.B}/reply`, { body: { Response: 'Acknowledge' } });
      assert.equal(ack.status, 200, ack.body);
      assert.deepEqual(ids(await t.req('GET', '/Alert?Status=NotAcknowledged')), [alerts.GLOBAL]);
      assert.deepEqual(ids(await t.req('GET', '/Alert?Status=Acknowledged')), [alerts.B]);
      assert.deepEqual(ids(await t.req('GET', '/Alert?Status=Acknowledged', { key: bob })), []);
      const item = (await t.req('GET', `/Alert?Status=Acknowledged`)).json.items[0];
      assert.deepEqual(item, (await t.req('GET', `/Alert/${alerts.B}`)).json);
      assertError(await t.req('GET', '/Alert?Status=Gone'), 400, /"Status": "Gone" is not one of/);
      assertError(await t.req('GET', '/Alert?ReplyStatus=Required'), 400, /Unknown query parameter "ReplyStatus"/);
    });
  });
}
