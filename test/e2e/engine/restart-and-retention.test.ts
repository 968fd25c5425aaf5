import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

/** Restart behaviour per final status, RequestRestart through an operator message, and KeepJobs. */
for (const backend of backends()) {
  describe(`restart behaviour and retention (${backend.name})`, () => {
    let t: TestServer;
    const get = (path: string) => t.req('GET', path);
    const define = async (name: string, body: Record<string, unknown>) =>
      assert.equal((await t.req('POST', `/JobDefinition/GLOBAL.${name}`, { body })).status, 201);
    const submit = async (name: string) => (await t.req('POST', `/Job/GLOBAL.${name}`)).json.jobId as number;
    before(async () => {
      t = await startE2eServer(backend);
    });
    after(() => t.close());

    test('Restart on Error runs the job again as a new job, at most MaxStarts more times', async () => {
      await define('Flaky', {
        JobDefinitionType: 'SH',
        Script: 'exit 1',
        RestartBehaviour: { Error: 'Restart' },
        MaxStarts: 2,
      });
      let id = await submit('Flaky');
      const line: number[] = [];
      for (;;) {
        const job = await waitForJob(get, id);
        assert.equal(job.Status, 'Error');
        line.push(id);
        const note = job.JobNotes.find((n: string) => /restarted as Job:/.test(n));
        if (!note) break;
        id = Number(/Job:(\d+)/.exec(note)?.[1]);
      }
      assert.equal(line.length, 3, `MaxStarts 2 gives 3 runs in all: ${line}`);
    });

    test('RequestRestart parks the job in ConsoleRestart until an operator replies', async () => {
      await define('AskMe', {
        JobDefinitionType: 'SH',
        Script: 'exit 4',
        RestartBehaviour: { Error: 'RequestRestart' },
      });
      const id = await submit('AskMe');
      const waiting = await waitForJob(get, id, ['ConsoleRestart']);
      assert.equal(waiting.StatusCode, 'r');
      const messageId = waiting.OperatorMessage;
      assert.equal(typeof messageId, 'number');
      const message = await get(`/OperatorMessage/${messageId}`);
      assert.equal(message.status, 200);
      assert.equal(message.json.ReplyStatus, 'Required');
      assert.equal(message.json.SenderObject, `Job:${id}`);
      for (const Reply of ['', '   ', 'maybe', 'Restart please'])
        assert.equal(
          (await t.req('PUT', `/OperatorMessage/${messageId}/reply`, { body: { Reply } })).status,
          400,
          Reply,
        );
      assert.equal((await get(`/Job/${id}`)).json.Status, 'ConsoleRestart', 'a refused reply changes nothing');
      const replied = await t.req('PUT', `/OperatorMessage/${messageId}/reply`, { body: { Reply: '  Restart ' } });
      assert.equal(replied.status, 200, replied.body);
      assert.deepEqual(
        [replied.json.ReplyStatus, replied.json.Reply, replied.json.ReplyUser],
        ['Replied', 'Restart', 'admin'],
      );
      const ended = (await get(`/Job/${id}`)).json;
      assert.deepEqual([ended.Status, ended.ReturnCode, ended.OperatorMessage], ['Error', 4, null]);
      const again = Number(/restarted as Job:(\d+)/.exec(ended.JobNotes.join(' '))?.[1]);
      assert.ok(again > id);
      assert.equal((await waitForJob(get, again, ['ConsoleRestart'])).JobDefinition, 'GLOBAL.AskMe');
      assert.equal(
        (await t.req('PUT', `/OperatorMessage/${messageId}/reply`, { body: { Reply: 'NoRestart' } })).status,
        409,
      );
    });

    test('KeepJobs keeps only the newest finished jobs of a definition', async () => {
      await define('Kept', { JobDefinitionType: 'SH', Script: 'true', KeepJobs: 2 });
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(await submit('Kept'));
        await waitForJob(get, ids[i] as number);
      }
      await waitFor(
        'the purge',
        async () => ((await get(`/Job/${ids[2]}`)).status === 404 ? true : undefined),
        60_000,
        200,
      );
      for (const id of ids.slice(0, 3)) {
        const r = await get(`/Job/${id}`);
        assert.equal(r.status, 404);
        assert.equal(r.json.message, `Unable to find object Job:${id}`);
      }
      for (const id of ids.slice(3)) assert.equal((await get(`/Job/${id}`)).status, 200);
    });
  });
}
