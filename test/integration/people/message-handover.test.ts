import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, postCreated as post, submit, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * What an operator does with messages beside answering them: delete an operator message once it is answered (or
 * needs no answer), and pass an approval on: forward it (the ones named become participants) or delegate it (the ones
 * named answer in the caller's place, and the reply says for whom). Real flows: System_OperatorMessage and
 * UserMessage jobs waiting in Console.
 */

const approval = {
  JobDefinitionType: 'UserMessage',
  DefaultQueue: 'GLOBAL.System',
  UserMessage: {
    Text: 'Release the payroll?',
    Responses: [
      { Response: 'Approve', Status: 'Completed', ReturnCode: 0 },
      { Response: 'Reject', Status: 'Error', ReturnCode: 5 },
    ],
    Participants: ['bob'],
  },
};

for (const backend of backends()) {
  describe(`Deleting, forwarding and delegating messages (${backend.name})`, () => {
    let t: TestServer;
    let bob: string; // the participant
    let carol: string; // answers approvals, not a participant
    let dave: string; // holds role Approvers
    let viewer: string;
    let operator: string;
    before(async () => {
      t = await startTestServer(backend);
      const grants = ['UserMessage:GLOBAL:View,Reply', 'Job:GLOBAL:View'];
      bob = await t.keyWithGrants('bob', grants);
      carol = await t.keyWithGrants('carol', grants);
      await t.server.accounts.putRole('Approvers', grants);
      await t.server.accounts.addUser('dave', { roles: ['Approvers'] });
      dave = (await t.server.accounts.createApiKey('dave', {})).key;
      viewer = await t.keyWithRoles('vera', ['Viewer']);
      operator = await t.keyWithRoles('otto', ['Operator']);
      await post(t, '/JobDefinition/GLOBAL.Payroll', approval);
    });
    after(() => t.close());

    /** A new approval waiting in Console: its job and message ids. */
    async function waiting(): Promise<{ jobId: number; id: number }> {
      const job = await submit(t, 'GLOBAL.Payroll');
      return { jobId: job.jobId, id: (await waitForStatus(t, job.jobId, 'Console')).UserMessage };
    }
    const message = async (id: number) => (await t.req('GET', `/UserMessage/${id}`)).json;
    const inbox = async (key: string) =>
      (await t.req('GET', '/UserMessage?ReplyStatus=Required', { key })).json.items.map(
        (m: { uniqueId: number }) => m.uniqueId,
      );
    const put = (id: number, what: string, body: unknown, key: string) =>
      t.req('PUT', `/UserMessage/${id}/${what}`, { body, key });

    test('an operator message is deleted once replied or not required; while it waits → 409', async () => {
      const ask = async () => {
        const job = await submit(t, 'GLOBAL.System_OperatorMessage', {
          JobParameters: [
            { Name: 'Message', InValueString: 'Tape loaded?' },
            { Name: 'ReplyExpression', InValueString: 'Yes|No' },
          ],
        });
        return { jobId: job.jobId as number, id: (await waitForStatus(t, job.jobId, 'Console')).OperatorMessage };
      };
      const replied = await ask();
      assertError(await t.req('DELETE', `/OperatorMessage/${replied.id}`), 409, /still waits for a reply/);
      assert.equal((await t.req('GET', `/OperatorMessage/${replied.id}`)).json.ReplyStatus, 'Required');
      assert.equal(
        (await t.req('PUT', `/OperatorMessage/${replied.id}/reply`, { body: { Reply: 'Yes' } })).status,
        200,
      );
      await waitForStatus(t, replied.jobId, 'Completed');
      assertError(
        await t.req('DELETE', `/OperatorMessage/${replied.id}`, { key: viewer }),
        403,
        /Delete privilege to delete OperatorMessage/,
      );
      assertError(await t.req('DELETE', `/OperatorMessage/${replied.id}`, { key: operator }), 403, /Delete privilege/);
      const gone = await t.req('DELETE', `/OperatorMessage/${replied.id}`);
      assert.equal(gone.status, 204, gone.body);
      assert.equal(gone.body, '');
      assertError(
        await t.req('GET', `/OperatorMessage/${replied.id}`),
        404,
        `Unable to find object OperatorMessage:${replied.id}`,
      );
      assertError(await t.req('DELETE', `/OperatorMessage/${replied.id}`), 404, /OperatorMessage/);
      const replies = (await t.req('GET', '/OperatorMessage?ReplyStatus=Replied')).json.items;
      assert.ok(!replies.some((m: { uniqueId: number }) => m.uniqueId === replied.id), 'gone from the list too');

      const killed = await ask();
      assert.equal((await act(t, killed.jobId, 'kill')).status, 200);
      await waitForStatus(t, killed.jobId, 'Killed');
      assert.equal((await t.req('GET', `/OperatorMessage/${killed.id}`)).json.ReplyStatus, 'NotRequired');
      assert.equal((await t.req('DELETE', `/OperatorMessage/${killed.id}`)).status, 204);
      assertError(await t.req('DELETE', '/OperatorMessage/abc'), 404, /OperatorMessage/);
    });

    test('forward: the named user becomes a participant and answers; recorded in the History', async () => {
      const { jobId, id } = await waiting();
      assert.deepEqual(await inbox(carol), [], 'carol is not asked yet');
      assertError(await put(id, 'reply', { Response: 'Approve' }, carol), 403, /Only the participants/);
      const res = await put(id, 'forward', { To: ['carol'], Comment: 'I am away this week' }, bob);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json.Participants, ['bob', 'carol']);
      assert.equal(res.json.History.length, 1);
      const [entry] = res.json.History;
      assert.match(entry.Time, /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d,\d{3} /);
      assert.deepEqual(
        { ...entry, Time: null },
        { Time: null, User: 'bob', Action: 'Forward', To: ['carol'], Comment: 'I am away this week' },
      );
      assert.deepEqual(await message(id), res.json);
      assert.deepEqual(await inbox(carol), [id]);
      const answered = await put(id, 'reply', { Response: 'Approve', ReplyComment: 'done' }, carol);
      assert.equal(answered.status, 200, answered.body);
      assert.equal(answered.json.ReplyUser, 'carol');
      assert.equal(answered.json.ReplyFor, null);
      assert.equal((await waitForStatus(t, jobId, 'Completed')).ReturnCode, 0);
      assertError(await put(id, 'forward', { To: ['dave'] }, bob), 409, /answered already/);
    });

    test('only a participant may forward or delegate; a role participant may', async () => {
      const { id } = await waiting();
      const before = await message(id);
      assertError(await put(id, 'forward', { To: ['carol'] }, carol), 403, /Only the participants .* may forward it/);
      assertError(await put(id, 'delegate', { To: ['carol'] }, carol), 403, /may delegate it/);
      assertError(await put(id, 'forward', { To: ['carol'] }, viewer), 403, /Reply privilege/);
      assertError(
        await put(987_654, 'forward', { To: ['carol'] }, bob),
        404,
        'Unable to find object UserMessage:987654',
      );
      assert.deepEqual(await message(id), before, 'nothing changed');
      const toRole = await put(id, 'forward', { To: ['role:Approvers'] }, bob);
      assert.equal(toRole.status, 200, toRole.body);
      assert.deepEqual(await inbox(dave), [id]);
      const onward = await put(id, 'forward', { To: ['carol', 'bob'] }, dave);
      assert.equal(onward.status, 200, onward.body);
      assert.deepEqual(onward.json.Participants, ['bob', 'role:Approvers', 'carol'], 'bob is not named twice');
      assert.deepEqual(
        onward.json.History.map((h: { User: string; To: string[] }) => [h.User, h.To]),
        [
          ['bob', ['role:Approvers']],
          ['dave', ['carol', 'bob']],
        ],
      );
      assert.equal((await put(id, 'reply', { Response: 'Approve' }, carol)).status, 200);
      assert.deepEqual(await inbox(carol), [], 'answered, it waits for nobody');
    });

    test("delegate: the delegate answers in the caller's place, the reply names both; it may not pass it on", async () => {
      const { jobId, id } = await waiting();
      const res = await put(id, 'delegate', { To: ['carol'] }, bob);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json.Participants, ['bob'], 'a delegation adds no participant');
      assert.deepEqual(res.json.Delegates, [{ Delegate: 'carol', For: 'bob' }]);
      assert.deepEqual(
        res.json.History.map((h: { Action: string; To: string[]; Comment: string | null }) => [
          h.Action,
          h.To,
          h.Comment,
        ]),
        [['Delegate', ['carol'], null]],
      );
      assert.deepEqual(await inbox(carol), [id], 'the delegate sees it in its inbox');
      assertError(await put(id, 'forward', { To: ['dave'] }, carol), 403, /Only the participants/);
      const answered = await put(id, 'reply', { Response: 'Reject' }, carol);
      assert.equal(answered.status, 200, answered.body);
      assert.equal(answered.json.ReplyUser, 'carol');
      assert.equal(answered.json.ReplyFor, 'bob');
      const job = await waitForStatus(t, jobId, 'Error');
      assert.equal(job.ReturnCode, 5);
      assert.ok(
        job.JobNotes.some((n: string) => n.includes('carol for bob replied Reject')),
        JSON.stringify(job.JobNotes),
      );
    });

    test('bad bodies → 400 naming the fault, and nothing changes', async () => {
      const { id } = await waiting();
      const before = await message(id);
      for (const what of ['forward', 'delegate']) {
        assertError(await put(id, what, { To: ['carol'], Extra: 1 }, bob), 400, /Unknown field "Extra"/);
        assertError(await put(id, what, { Comment: 'x' }, bob), 400, /"To" is required/);
        assertError(await put(id, what, { To: 'carol' }, bob), 400, /"To" must be a list/);
        assertError(await put(id, what, { To: [5] }, bob), 400, /"To\[0\]"/);
        assertError(await put(id, what, { To: ['carol'], Comment: 7 }, bob), 400, /"Comment"/);
        assertError(await put(id, what, { To: ['carol'], Comment: 'x'.repeat(1001) }, bob), 400, /"Comment".*1000/);
        assertError(await put(id, what, { To: ['x'.repeat(256)] }, bob), 400, /"To\[0\]".*255/);
        assertError(await put(id, what, { To: Array(51).fill('carol') }, bob), 400, /"To" must hold at most 50/);
        assertError(await put(id, what, { To: [{ user: 'carol' }] }, bob), 400, /"To\[0\]"/);
        assertError(await put(id, what, { To: null }, bob), 400, /"To"/);
        assertError(await put(id, what, { To: [] }, bob), 400, /must name at least one user/);
        assertError(await put(id, what, { To: ['  '] }, bob), 400, /"To\[0\]" must not be empty/);
        assertError(await put(id, what, { To: ['carol', 'zed'] }, bob), 400, /"To\[1\]": there is no user zed/);
        assertError(await put(id, what, { To: ['role:Nobody'] }, bob), 400, /there is no role Nobody/);
        assertError(await put(id, what, ['carol'], bob), 400, /must be a JSON object/);
        assertError(await put(id, what, 'carol', bob), 400, /must be a JSON object/);
        const proto = await t.req('PUT', `/UserMessage/${id}/${what}`, {
          key: bob,
          payload: '{"To": ["carol"], "__proto__": {"To": ["dave"]}}',
          headers: { 'content-type': 'application/json' },
        });
        assertError(proto, 400, /__proto__|not valid JSON/);
        const broken = await t.req('PUT', `/UserMessage/${id}/${what}`, {
          key: bob,
          payload: '{"To": ["carol"',
          headers: { 'content-type': 'application/json' },
        });
        assertError(broken, 400, /JSON/i);
      }
      assert.deepEqual(await message(id), before, 'nothing changed');
      assert.deepEqual(await inbox(carol), []);
    });
  });
}
