import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { cliEnv, ROOT, runCli } from '../../helpers/cli.ts';
import { getJob, postCreated, submit } from '../../helpers/jobs.ts';
import { type CliTarget, startCliTarget } from '../../helpers/cli-target.ts';
import { ADMIN_KEY, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

/**
 * The client CLI (`millrace job …`, `login`) run as a user runs it, against a real listening
 * server with its real local agent. CLI invocations are few and run in parallel where they are independent: each
 * one starts a Node process.
 */

const [backend] = backends();
const FINAL = ['Completed', 'Error', 'Killed', 'Canceled', 'Unknown'];

// Each CLI call starts a Node process: on a loaded machine that alone can take tens of seconds.
const SLOW = { timeout: 360_000 };
const cli = (args: string[], extraEnv: Record<string, string>) => runCli(args, extraEnv, 180_000);

describe('millrace client commands against a running server', () => {
  let t: TestServer;
  let target: CliTarget;
  let dir = '';
  let env: Record<string, string> = {};
  let url = '';
  before(async () => {
    target = await startCliTarget(backend as NonNullable<typeof backend>, 'client-e2e');
    ({ t, env, dir, url } = target);
    await postCreated(t, '/JobDefinition/GLOBAL.Ok', { JobDefinitionType: 'BASH', Script: 'echo fine' });
    await postCreated(t, '/JobDefinition/GLOBAL.Fails', {
      JobDefinitionType: 'BASH',
      Script: 'echo "failing with $RC"; exit "$RC"',
      Parameters: [{ Name: 'RC', DefaultValue: '1' }],
    });
  });
  after(() => target.close());

  test('submit --max-run-time limits the job: --wait ends Killed, exit 1; a bad value is refused', SLOW, async () => {
    await postCreated(t, '/JobDefinition/GLOBAL.Stuck', { JobDefinitionType: 'BASH', Script: 'sleep 600' });
    const [stuck, bad] = await Promise.all([
      cli(['job', 'submit', 'Stuck', '--max-run-time', '2', '--wait'], env),
      cli(['job', 'submit', 'Stuck', '--max-run-time', 'soon'], env),
    ]);
    assert.equal(stuck.code, 1, stuck.stdout + stuck.stderr);
    const id = Number(/^Job (\d+) Killed/m.exec(stuck.stdout)?.[1]);
    const history = (await t.req('GET', `/Job/${id}/history`)).json.items as Array<{ Cause: string }>;
    assert.equal(history.at(-1)?.Cause, 'maxruntime');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /400 .*MaxRunTime/);
  });

  test(
    'submit --wait exits 0 for Completed and with the return code for Error; a wrong key is one line, exit 1; login saves a profile (mode 0600)',
    SLOW,
    async () => {
      const [ok, failed, wrongKey, login] = await Promise.all([
        cli(['job', 'submit', 'Ok', '--wait'], env),
        cli(['job', 'submit', 'GLOBAL.Fails', '-p', 'RC=3', '--wait'], env),
        cli(['job', 'show', '1'], { ...env, MILLRACE_API_KEY: 'not-the-key-0123456789' }),
        // No MILLRACE_URL: the profile saved here is what the list test below uses.
        cli(['login', '--server', url, '--profile', 'test'], {
          XDG_CONFIG_HOME: env.XDG_CONFIG_HOME as string,
          MILLRACE_API_KEY: ADMIN_KEY,
        }),
      ]);
      assert.equal(login.code, 0, login.stderr);
      assert.match(login.stdout, /saved as profile "test"/);
      assert.equal(statSync(join(env.XDG_CONFIG_HOME as string, 'millrace', 'config')).mode & 0o777, 0o600);
      assert.equal(ok.code, 0, ok.stderr);
      const okId = Number(/^Job (\d+) Completed, return code 0$/m.exec(ok.stdout)?.[1]);
      assert.equal((await getJob(t, okId)).Status, 'Completed');
      assert.equal(ok.stderr, '', 'no spinner when standard error is not a terminal');
      assert.equal(failed.code, 3, failed.stdout + failed.stderr);
      const failedId = Number(/^Job (\d+) Error, return code 3$/m.exec(failed.stdout)?.[1]);
      const failedJob = await getJob(t, failedId);
      assert.equal(failedJob.Status, 'Error');
      assert.equal(failedJob.JobParameters.find((p: { Name: string }) => p.Name === 'RC').InValueString, '3');
      assert.equal(wrongKey.code, 1);
      assert.equal(wrongKey.stdout, '');
      const lines = wrongKey.stderr.trim().split('\n');
      assert.equal(lines.length, 1, wrongKey.stderr);
      assert.match(lines[0] as string, /^millrace: GET \/Job\/1: 401 .*API key/);
    },
  );

  test(
    'job logs --follow prints the lines of a running job as they are written and ends when it is final',
    SLOW,
    async () => {
      const stop = join(dir, 'stop-ticking');
      await postCreated(t, '/JobDefinition/GLOBAL.Ticker', {
        JobDefinitionType: 'BASH',
        // One line a second until the test says stop (at most five minutes).
        Script: 'i=0; while [ ! -e "$STOP" ] && [ $i -lt 300 ]; do i=$((i+1)); echo "tick $i"; sleep 1; done',
        Parameters: [{ Name: 'STOP' }],
      });
      const job = await submit(t, 'GLOBAL.Ticker', { JobParameters: [{ Name: 'STOP', InValueString: stop }] });
      const child = spawn(process.execPath, ['bin/millrace', 'job', 'logs', String(job.jobId), '--follow'], {
        cwd: ROOT,
        env: cliEnv(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        // Two lines, so that the second one is known to have been followed while the job ran: the script stops
        // only when the test creates $STOP, which it does after this.
        await waitFor(
          'two lines from job logs --follow',
          async () => (out.includes('tick 2\n') ? true : undefined),
          180_000,
        );
        const whileRunning = await getJob(t, job.jobId);
        assert.ok(!FINAL.includes(whileRunning.Status), `the job is still running (${whileRunning.Status})`);
        writeFileSync(stop, '');
        assert.equal(await exited, 0, err);
      } finally {
        child.kill('SIGKILL');
      }
      const final = await waitForJob((p) => t.req('GET', p), job.jobId, ['Completed']);
      const stdoutFile = final.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
      const whole = await t.req('GET', `/JobFile/${stdoutFile.uniqueId}/content`);
      assert.equal(out, whole.body, 'every line, once, in order');
      assert.match(out, /^tick 1\ntick 2\n/);
    },
  );

  test('job list -o json, with the server and key of the saved profile, is one JSON array', SLOW, async () => {
    const noEnv = { XDG_CONFIG_HOME: env.XDG_CONFIG_HOME as string };
    const submitted = await submit(t, 'GLOBAL.Ok');
    const list = await cli(['job', 'list', '--definition', 'GLOBAL.Ok', '-o', 'json'], noEnv);
    assert.equal(list.code, 0, list.stderr);
    const jobs = JSON.parse(list.stdout);
    assert.ok(Array.isArray(jobs));
    assert.ok(jobs.every((j: { JobDefinition: string }) => j.JobDefinition === 'GLOBAL.Ok'));
    assert.ok(jobs.some((j: { jobId: number }) => j.jobId === submitted.jobId));
  });
});
