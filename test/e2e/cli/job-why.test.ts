import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { postCreated, submit, waitForStatus } from '../../helpers/jobs.ts';
import { type CliTarget, startCliTarget } from '../../helpers/cli-target.ts';
import type { TestServer } from '../../helpers/server.ts';

/**
 * `millrace job why <id>` run as a user runs it, against a real listening server: a line per reason, `-o json` the
 * answer of GET /Job/<id>/waiting. The CLI calls run in parallel: each one starts a Node process.
 */

const [backend] = backends();
const SLOW = { timeout: 360_000 };

describe('millrace job why', () => {
  let t: TestServer;
  let target: CliTarget;
  let env: Record<string, string> = {};
  before(async () => {
    target = await startCliTarget(backend as NonNullable<typeof backend>, 'why-e2e');
    ({ t, env } = target);
  });
  after(() => target.close());

  test(
    'an approval without a DefaultQueue: NoProcessServer in words and in JSON; a finished job waits for nothing',
    SLOW,
    async () => {
      await postCreated(t, '/JobDefinition/GLOBAL.Approve', {
        JobDefinitionType: 'UserMessage',
        UserMessage: {
          Text: 'Release?',
          Participants: ['admin'],
          Responses: [{ Response: 'Approve', Status: 'Completed' }],
        },
      });
      await postCreated(t, '/JobDefinition/GLOBAL.Ok', { JobDefinitionType: 'BASH', Script: 'true' });
      const approval = await submit(t, 'GLOBAL.Approve', {});
      const ok = await submit(t, 'GLOBAL.Ok', {});
      await waitForStatus(t, ok.jobId, 'Completed');
      const [words, json, done, missing] = await Promise.all([
        runCli(['job', 'why', String(approval.jobId)], env, 180_000),
        runCli(['job', 'why', String(approval.jobId), '-o', 'json'], env, 180_000),
        runCli(['job', 'why', String(ok.jobId)], env, 180_000),
        runCli(['job', 'why', '987654321'], env, 180_000),
      ]);
      assert.equal(words.code, 0, words.stderr);
      assert.equal(words.stdout, 'No process server serving Queue:GLOBAL.Default runs UserMessage jobs.\n');
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), {
        Status: 'Queued',
        Reasons: [
          {
            Code: 'NoProcessServer',
            Message: 'No process server serving Queue:GLOBAL.Default runs UserMessage jobs.',
            Object: 'Queue:GLOBAL.Default',
            Until: null,
          },
        ],
      });
      assert.equal(done.code, 0, done.stderr);
      assert.equal(done.stdout, `Job ${ok.jobId} is Completed and waits for nothing.\n`);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /404|not exist|not found/i);
    },
  );
});
