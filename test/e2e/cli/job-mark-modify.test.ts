import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { act, getJob, postCreated, submit, submitSleep, systemQueue, waitForStatus } from '../../helpers/jobs.ts';
import { type CliTarget, startCliTarget } from '../../helpers/cli-target.ts';
import type { TestServer } from '../../helpers/server.ts';

/**
 * `millrace job mark-completed <id> -m …` and `millrace job modify <id> …` run as a user runs them, against a real
 * listening server. The CLI calls run in parallel where they are independent: each one starts a Node process.
 */

const [backend] = backends();
const SLOW = { timeout: 360_000 };

describe('millrace job mark-completed and modify', () => {
  let t: TestServer;
  let target: CliTarget;
  let env: Record<string, string> = {};
  before(async () => {
    target = await startCliTarget(backend as NonNullable<typeof backend>, 'mark-e2e');
    ({ t, env } = target);
    // A System definition the server does not know ends Error at once.
    await postCreated(t, '/JobDefinition/GLOBAL.Fails', { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' });
    await systemQueue(t, 'GLOBAL.Tonight');
  });
  after(() => target.close());

  test('mark-completed sets a failed job Completed with the comment in its history; -m is required', SLOW, async () => {
    const failed = await submit(t, 'GLOBAL.Fails');
    await waitForStatus(t, failed.jobId, 'Error');
    const [missing, marked] = await Promise.all([
      runCli(['job', 'mark-completed', String(failed.jobId)], env, 180_000),
      runCli(['job', 'mark-completed', String(failed.jobId), '-m', 'loaded by hand'], env, 180_000),
    ]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /--message/);
    assert.equal(marked.code, 0, marked.stderr);
    assert.equal(marked.stdout, `Job ${failed.jobId}: Completed\n`);
    const history = (await t.req('GET', `/Job/${failed.jobId}/history`)).json.items;
    const last = history.at(-1);
    assert.deepEqual(
      [last.FromStatus, last.ToStatus, last.User, last.Detail],
      ['Error', 'Completed', 'admin', 'from Error: loaded by hand'],
    );
    const again = await runCli(['job', 'mark-completed', String(failed.jobId), '-m', 'again'], env, 180_000);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /409|does not apply/);
  });

  test('modify changes a waiting job; a refused change names the problem and changes nothing', SLOW, async () => {
    const job = await submitSleep(t, 0, { HoldOnSubmit: true });
    const [changed, refused] = await Promise.all([
      runCli(
        [
          'job',
          'modify',
          String(job.jobId),
          '--queue',
          'GLOBAL.Tonight',
          '--start',
          '2030-01-01T00:00:00Z',
          '--priority',
          '70',
          '--description',
          'tonight',
          '-p',
          'MilliSeconds=5',
        ],
        env,
        180_000,
      ),
      runCli(['job', 'modify', String(job.jobId), '--queue', 'GLOBAL.Nowhere'], env, 180_000),
    ]);
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal(
      changed.stdout,
      `Job ${job.jobId}: Held, queue GLOBAL.Tonight, start 2030/01/01 00:00:00,000 UTC, priority 70\n`,
    );
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Queue:GLOBAL\.Nowhere does not exist/);
    const now = await getJob(t, job.jobId);
    assert.deepEqual(
      [now.Queue, now.Priority, now.Description, now.JobParameters[0].InValueNumber],
      ['GLOBAL.Tonight', 70, 'tonight', 5],
    );
    assert.equal((await act(t, job.jobId, 'release')).json.Status, 'Scheduled');
    assert.equal((await act(t, job.jobId, 'cancel')).status, 200);
  });
});
