import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, submit, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * System_OperatorMessage jobs: the job sends an operator message and waits in
 * Console; GET /Job names the message; a reply that matches the ReplyExpression completes the job with the reply as
 * its Out parameter.
 */

const ask = (message: string, replyExpression?: string) => ({
  JobParameters: [
    { Name: 'Message', InValueString: message },
    ...(replyExpression === undefined ? [] : [{ Name: 'ReplyExpression', InValueString: replyExpression }]),
  ],
});

async function asked(t: TestServer, message: string, replyExpression?: string) {
  const job = await submit(t, 'GLOBAL.System_OperatorMessage', ask(message, replyExpression));
  const waiting = await waitForStatus(t, job.jobId, 'Console');
  assert.equal(typeof waiting.OperatorMessage, 'number', 'the waiting job names its message');
  return { jobId: job.jobId as number, messageId: waiting.OperatorMessage as number };
}

const reply = (t: TestServer, id: number, body: unknown, key?: string) =>
  t.req('PUT', `/OperatorMessage/${id}/reply`, { body, ...(key ? { key } : {}) });

for (const backend of backends()) {
  describe(`System_OperatorMessage jobs (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    test('the job waits in Console for a matching reply, then Completes with the reply as Out parameter', async () => {
      const { jobId, messageId } = await asked(t, 'Load the files for job ${jobid}?', 'Yes|No');
      const m = (await t.req('GET', `/OperatorMessage/${messageId}`)).json;
      assert.equal(m.FullText, `Load the files for job ${jobId}?`);
      assert.equal(m.ReplyStatus, 'Required');
      assert.equal(m.ReplyExpression, 'Yes|No');
      assert.equal(m.SenderObject, `Job:${jobId}`);
      assert.equal(m.businessKey, `OperatorMessage:${messageId}`);

      assertError(await reply(t, messageId, { Reply: 'Maybe' }), 400, /does not match the reply expression Yes\|No/);
      assertError(await reply(t, messageId, { Reply: '   ' }), 400, /must not be empty/);
      assert.equal((await getJob(t, jobId)).Status, 'Console', 'a refused reply changes nothing');

      const ok = await reply(t, messageId, { Reply: '  Yes  ' });
      assert.equal(ok.status, 200, ok.body);
      assert.equal(ok.json.ReplyStatus, 'Replied');
      assert.equal(ok.json.Reply, 'Yes');
      assert.equal(ok.json.ReplyUser, 'admin');
      const done = await waitForStatus(t, jobId, 'Completed');
      assert.equal(done.ReturnCode, 0);
      assert.equal(done.OperatorMessage, null, 'a job no longer waiting names no message');
      assert.equal(done.JobParameters.find((p: { Name: string }) => p.Name === 'Reply').OutValueString, 'Yes');

      assertError(await reply(t, messageId, { Reply: 'No' }), 409, /answered already/);
    });

    test('white space in a reply is trimmed and collapsed before matching', async () => {
      const { jobId, messageId } = await asked(t, 'Which tape?', 'tape [0-9]+');
      const res = await reply(t, messageId, { Reply: '\t tape \t  42 ' });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Reply, 'tape 42');
      await waitForStatus(t, jobId, 'Completed');
    });

    test('without a ReplyExpression any non-empty reply completes the job', async () => {
      const { jobId, messageId } = await asked(t, 'Tell me anything');
      assert.equal((await reply(t, messageId, { Reply: 'done here' })).status, 200);
      await waitForStatus(t, jobId, 'Completed');
    });

    test('a catastrophic reply expression is bounded: the reply is refused, the server goes on', async () => {
      const { jobId, messageId } = await asked(t, 'Hostile', '(a+)+b');
      const res = await reply(t, messageId, { Reply: `${'a'.repeat(40)}c` });
      assertError(res, 400, /took too long/);
      assert.equal((await getJob(t, jobId)).Status, 'Console');
      assert.equal((await reply(t, messageId, { Reply: 'aab' })).status, 200, 'a matching reply still works');
    });

    test('an invalid ReplyExpression ends the job in Error naming it', async () => {
      const job = await submit(t, 'GLOBAL.System_OperatorMessage', ask('Broken', '(unclosed'));
      const done = await waitForStatus(t, job.jobId, 'Error');
      assert.ok(
        done.JobNotes.some((n: string) => /ReplyExpression.*not a valid regular expression/.test(n)),
        done.JobNotes.join('|'),
      );
    });

    test('killing the waiting job closes its message: a later reply is refused with 409', async () => {
      const { jobId, messageId } = await asked(t, 'Kill me', 'ok');
      assert.equal((await act(t, jobId, 'kill')).status, 200);
      await waitForStatus(t, jobId, 'Killed');
      const m = (await t.req('GET', `/OperatorMessage/${messageId}`)).json;
      assert.equal(m.ReplyStatus, 'NotRequired');
      assertError(await reply(t, messageId, { Reply: 'ok' }), 409, /not waiting for a reply/);
    });

    test('bad reply bodies → 400; unknown message → 404; without Reply privilege → 403; unseen → 404', async () => {
      const { messageId } = await asked(t, 'Guarded', 'ok');
      assertError(await reply(t, messageId, { Reply: 'ok', Extra: 1 }), 400, /Unknown field "Extra"/);
      assertError(await reply(t, messageId, { Reply: 5 }), 400, /"Reply" must be a string/);
      assertError(await reply(t, messageId, {}), 400, /"Reply" is required/);
      assertError(await reply(t, 999_999, { Reply: 'ok' }), 404, /OperatorMessage:999999/);
      const viewer = await t.keyWithGrants('om-viewer', ['OperatorMessage:GLOBAL:View']);
      assertError(await reply(t, messageId, { Reply: 'ok' }, viewer), 403, /Reply privilege/);
      const stranger = await t.keyWithGrants('om-stranger', ['Queue:GLOBAL:View']);
      assertError(await reply(t, messageId, { Reply: 'ok' }, stranger), 404, /OperatorMessage/);
      assert.equal((await t.req('GET', `/OperatorMessage/${messageId}`)).json.ReplyStatus, 'Required');
    });
  });
}
