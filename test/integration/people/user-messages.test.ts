import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import {
  act,
  assertError,
  getJob,
  type JobJson,
  postCreated as post,
  submit,
  waitForStatus,
} from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * User messages: a UserMessage definition asks its participants; its job waits in
 * Console and names the message; a participant's response ends the job with that response's status and return code,
 * also as a call inside a chain.
 */

const approval = (participants: string[]) => ({
  JobDefinitionType: 'UserMessage',
  DefaultQueue: 'GLOBAL.System',
  Parameters: [{ Name: 'Batch', DefaultValue: 'nightly' }],
  UserMessage: {
    Text: 'Approve ${Batch} (job ${jobid}, ${jobname})?',
    Responses: [
      { Response: 'Approve', Status: 'Completed', ReturnCode: 0 },
      { Response: 'Reject', Status: 'Error', ReturnCode: 5 },
    ],
    Participants: participants,
  },
});

async function waiting(t: TestServer, jobId: number): Promise<{ job: JobJson; messageId: number }> {
  const job = await waitForStatus(t, jobId, 'Console');
  assert.equal(typeof job.UserMessage, 'number', 'the waiting job names its user message');
  return { job, messageId: job.UserMessage };
}

const reply = (t: TestServer, id: number, body: unknown, key?: string) =>
  t.req('PUT', `/UserMessage/${id}/reply`, { body, ...(key ? { key } : {}) });

for (const backend of backends()) {
  describe(`User messages (${backend.name})`, () => {
    let t: TestServer;
    let bob: string;
    let carol: string;
    let operator: string;
    before(async () => {
      t = await startTestServer(backend);
      const grants = ['UserMessage:GLOBAL:View,Reply', 'Job:GLOBAL:View'];
      bob = await t.keyWithGrants('bob', grants);
      carol = await t.keyWithGrants('carol', grants);
      operator = await t.keyWithGrants('olga', grants); // holds role TestRole3
      await post(t, '/JobDefinition/GLOBAL.Approve', approval(['bob', 'role:TestRole3']));
    });
    after(() => t.close());

    test('the job waits in Console; a participant approves; the job Completes with the response return code', async () => {
      const job = await submit(t, 'GLOBAL.Approve');
      const { messageId } = await waiting(t, job.jobId);
      const m = (await t.req('GET', `/UserMessage/${messageId}`)).json;
      assert.equal(m.Text, `Approve nightly (job ${job.jobId}, Approve)?`);
      assert.equal(m.Status, 'ManualTask');
      assert.equal(m.Job, job.jobId);
      assert.deepEqual(m.Participants, ['bob', 'role:TestRole3']);

      const res = await reply(t, messageId, { Response: 'Approve', ReplyComment: 'looks fine' }, bob);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Status, 'Completed');
      assert.equal(res.json.Response, 'Approve');
      assert.equal(res.json.ReplyComment, 'looks fine');
      assert.equal(res.json.ReplyUser, 'bob');
      const done = await waitForStatus(t, job.jobId, 'Completed');
      assert.equal(done.ReturnCode, 0);
      assert.equal(done.UserMessage, null);
      assertError(await reply(t, messageId, { Response: 'Reject' }, bob), 409, /answered already/);
    });

    test('a response mapped to Error ends the job in Error with its return code; a role participant may reply', async () => {
      const job = await submit(t, 'GLOBAL.Approve');
      const { messageId } = await waiting(t, job.jobId);
      assert.equal((await reply(t, messageId, { Response: 'reject' }, operator)).status, 200);
      const done = await waitForStatus(t, job.jobId, 'Error');
      assert.equal(done.ReturnCode, 5);
    });

    test('not a participant → 403; unknown response → 400; comment over 1,000 characters → 400; nothing changes', async () => {
      const job = await submit(t, 'GLOBAL.Approve');
      const { messageId } = await waiting(t, job.jobId);
      assertError(await reply(t, messageId, { Response: 'Approve' }, carol), 403, /Only the participants/);
      assertError(
        await reply(t, messageId, { Response: 'Maybe' }, bob),
        400,
        /not one of the responses offered \(Approve, Reject\)/,
      );
      assertError(
        await reply(t, messageId, { Response: 'Approve', ReplyComment: 'x'.repeat(1001) }, bob),
        400,
        /at most 1000/,
      );
      assertError(await reply(t, messageId, { Response: 'Approve', Extra: true }, bob), 400, /Unknown field "Extra"/);
      assertError(await reply(t, messageId, { ReplyComment: 'no response' }, bob), 400, /"Response" is required/);
      assertError(await reply(t, 987_654, { Response: 'Approve' }, bob), 404, /UserMessage:987654/);
      assert.equal((await t.req('GET', `/UserMessage/${messageId}`)).json.Status, 'ManualTask');
      assert.equal((await getJob(t, job.jobId)).Status, 'Console');
      assert.equal((await act(t, job.jobId, 'cancel')).status, 409, 'a job in Console cannot be canceled');
      assert.equal((await act(t, job.jobId, 'kill')).status, 200);
      await waitForStatus(t, job.jobId, 'Killed');
      assert.equal((await t.req('GET', `/UserMessage/${messageId}`)).json.Status, 'Error', 'its asker is gone');
      assertError(await reply(t, messageId, { Response: 'Approve' }, bob), 409, /answered already/);
    });

    test('a UserMessage definition needs Text, responses and participants', async () => {
      const bad = async (userMessage: unknown, message: RegExp) => {
        const res = await t.req('POST', '/JobDefinition/GLOBAL.BadAsk', {
          body: {
            JobDefinitionType: 'UserMessage',
            DefaultQueue: 'GLOBAL.System',
            ...(userMessage ? { UserMessage: userMessage } : {}),
          },
        });
        assertError(res, 400, message);
      };
      await bad(undefined, /"UserMessage" is required/);
      await bad({ Text: 'x', Responses: [], Participants: ['bob'] }, /at least one response/);
      await bad({ Text: 'x', Responses: [{ Response: 'Ok' }], Participants: [] }, /at least one user or role/);
      await bad(
        { Text: 'x', Responses: [{ Response: 'Ok' }, { Response: 'ok' }], Participants: ['bob'] },
        /offered twice/,
      );
      await bad({ Responses: [{ Response: 'Ok' }], Participants: ['bob'] }, /Text/);
      assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.BadAsk')).status, 404);
      const notAsk = await t.req('POST', '/JobDefinition/GLOBAL.NotAsk', {
        body: {
          JobDefinitionType: 'BASH',
          Script: 'true',
          UserMessage: { Text: 'x', Responses: [{ Response: 'Ok' }], Participants: ['bob'] },
        },
      });
      assertError(notAsk, 400, /only for a UserMessage definition/);
    });

    test('a chain waits for an approval call, then goes on to its next step', async () => {
      await post(t, '/JobDefinition/GLOBAL.Release', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobChain/GLOBAL.Release', {
        Steps: [
          { Name: 'Ask', Calls: [{ JobDefinition: 'GLOBAL.Approve' }] },
          {
            Name: 'Go',
            Calls: [
              {
                JobDefinition: 'GLOBAL.System_Sleep',
                ParameterMappings: [{ Parameter: 'MilliSeconds', Source: 'Value', Value: '10' }],
              },
            ],
          },
        ],
      });
      const chain = await submit(t, 'GLOBAL.Release');
      const askCall = chain.jobId + 2; // chain, step Ask, its call, step Go, its call
      const goCall = chain.jobId + 4;
      const { messageId } = await waiting(t, askCall);
      await waitForStatus(t, chain.jobId, 'Waiting');
      assert.equal((await getJob(t, goCall)).Status, 'Chained', 'the next step waits for the approval');
      assert.equal((await reply(t, messageId, { Response: 'Approve' }, bob)).status, 200);
      await waitForStatus(t, chain.jobId, 'Completed');
      assert.equal((await getJob(t, goCall)).Status, 'Completed');
    });
  });
}
