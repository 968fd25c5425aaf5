import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { getJob, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { type CliTarget, startCliTarget } from '../../helpers/cli-target.ts';
import type { TestServer } from '../../helpers/server.ts';

/**
 * `millrace job bulk <action>` run as a user runs it against a real listening server: a dry run by filter changes
 * nothing and says what would be done; a run by ids does it, prints each job skipped with its reason and exits 1
 * for it; a bad request is one line, exit 1.
 */

const [backend] = backends();
const SLOW = { timeout: 360_000 };
const cli = (args: string[], env: Record<string, string>) => runCli(args, env, 180_000);

describe('millrace job bulk', () => {
  let t: TestServer;
  let target: CliTarget;
  let env: Record<string, string> = {};
  before(async () => {
    target = await startCliTarget(backend as NonNullable<typeof backend>, 'bulk-cli');
    ({ t, env } = target);
  });
  after(() => target.close());

  test('a dry run by filter, then the action by ids: done, skipped with reasons, exit 1', SLOW, async () => {
    const held: number[] = [];
    for (let i = 0; i < 3; i++)
      held.push((await submitSleep(t, 0, { HoldOnSubmit: true, Description: 'cli-bulk' })).jobId);
    const done = (await submitSleep(t, 0, { Description: 'cli-bulk' })).jobId as number;
    await waitForStatus(t, done, 'Completed');

    const [dry, unknown, neither] = await Promise.all([
      cli(['job', 'bulk', 'release', '--search', 'cli-bulk', '--status', 'Held', '--dry-run'], env),
      cli(['job', 'bulk', 'explode', '--ids', String(done)], env),
      cli(['job', 'bulk', 'hold'], env),
    ]);
    assert.equal(dry.code, 0, dry.stdout + dry.stderr);
    assert.equal(dry.stdout, 'release: 3 matched, 3 would be done, 0 skipped\nDry run: nothing was changed.\n');
    for (const id of held) assert.equal((await getJob(t, id)).Status, 'Held', 'a dry run changes nothing');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^millrace: POST \/Job\/bulk\/explode: 400 Unknown action "explode"/);
    assert.equal(neither.code, 1);
    assert.match(neither.stderr, /give the jobs: a filter/);

    const ids = [...held, done].join(',');
    const [real, json] = await Promise.all([
      cli(['job', 'bulk', 'release', '--ids', ids, '-m', 'month end'], env),
      cli(['job', 'bulk', 'hold', '--ids', String(done), '-o', 'json'], env),
    ]);
    assert.equal(real.code, 1, real.stdout + real.stderr);
    assert.equal(
      real.stdout,
      `release: 4 matched, 3 done, 1 skipped\n  Job ${done}: Action release does not apply to Job:${done} in status Completed\n`,
    );
    for (const id of held) {
      const history = (await t.req('GET', `/Job/${id}/history`)).json.items as Array<Record<string, string>>;
      const entry = history.find((e) => e.FromStatus === 'Held');
      assert.equal(entry?.Cause, 'bulk');
      assert.match(entry?.Detail ?? '', /^release \(bulk request [0-9a-f-]+\): month end$/);
    }
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stdout), {
      Matched: 1,
      Done: 0,
      Skipped: [{ Job: done, Reason: `Action hold does not apply to Job:${done} in status Completed` }],
      DryRun: false,
    });
  });
});
