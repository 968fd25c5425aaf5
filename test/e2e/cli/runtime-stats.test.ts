import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { act, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { type CliTarget, startCliTarget } from '../../helpers/cli-target.ts';
import type { TestServer } from '../../helpers/server.ts';

/**
 * `millrace def stats <key>` and `millrace job estimate <id>` run as a user runs them, against a real listening
 * server: the figures in words and, with `-o json`, the interface's answers. The CLI calls run in parallel.
 */

const [backend] = backends();
const SLOW = { timeout: 360_000 };

describe('millrace def stats and job estimate', () => {
  let t: TestServer;
  let target: CliTarget;
  let env: Record<string, string> = {};
  before(async () => {
    target = await startCliTarget(backend as NonNullable<typeof backend>, 'stats-e2e');
    ({ t, env } = target);
  });
  after(() => target.close());

  test('the statistics of three sleeps, and the estimate of a running one', SLOW, async () => {
    const runs = await Promise.all([30, 60, 90].map((ms) => submitSleep(t, ms)));
    for (const r of runs) await waitForStatus(t, r.jobId, 'Completed');
    const running = await submitSleep(t, 3_600_000);
    await waitForStatus(t, running.jobId, 'Running');
    const [words, json, estimate, estimateJson, missing] = await Promise.all([
      runCli(['def', 'stats', 'GLOBAL.System_Sleep'], env, 180_000),
      runCli(['def', 'stats', 'GLOBAL.System_Sleep', '-o', 'json'], env, 180_000),
      runCli(['job', 'estimate', String(running.jobId), '--p95'], env, 180_000),
      runCli(['job', 'estimate', String(running.jobId), '-o', 'json'], env, 180_000),
      runCli(['job', 'estimate', '987654321'], env, 180_000),
    ]);
    const stats = (await t.req('GET', '/JobDefinition/GLOBAL.System_Sleep/statistics')).json;
    assert.equal((await act(t, running.jobId, 'kill')).status, 200);
    assert.equal(words.code, 0, words.stderr);
    const lines = words.stdout.split('\n');
    assert.equal(lines[0], 'GLOBAL.System_Sleep: 3 runs (Completed 3, Error 0, Killed 0, Unknown 0)');
    assert.equal(
      lines[1],
      `mean ${stats.MeanSeconds} s  P50 ${stats.P50Seconds} s  P95 ${stats.P95Seconds} s  max ${stats.MaxSeconds} s`,
    );
    assert.match(lines[2] as string, /^JOB +STATUS +RUNSTART +SECONDS$/);
    assert.match(lines[3] as string, new RegExp(`^${runs[2].jobId} +Completed `));
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), stats);
    assert.equal(estimate.code, 0, estimate.stderr);
    assert.match(
      estimate.stdout,
      new RegExp(`^Job ${running.jobId}: starts .+, ends about .+ \\(P95\\) \\(100 % done\\)\n$`),
    );
    assert.equal(estimateJson.code, 0, estimateJson.stderr);
    const e = JSON.parse(estimateJson.stdout);
    assert.equal(e.Basis, 'P50');
    assert.equal(e.EstimatedStart, (await waitForStatus(t, running.jobId, 'Killed')).RunStart);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Unable to find object Job:987654321/);
  });
});
