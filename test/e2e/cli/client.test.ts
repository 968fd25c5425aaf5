import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { cliEnv, ROOT, runCli } from '../../helpers/cli.ts';
import { getJob, postCreated, submit } from '../../helpers/jobs.ts';
import { ADMIN_KEY, startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

/**
 * The client CLI (`millrace job …`, `login`, `apply`, `def export`) run as a user runs it, against a real listening
 * server with its real local agent. CLI invocations are few and run in parallel where they are independent: each
 * one starts a Node process.
 */

const [backend] = backends();
const FINAL = ['Completed', 'Error', 'Killed', 'Canceled', 'Unknown'];

// Each CLI call starts a Node process: on a loaded machine that alone can take tens of seconds.
const SLOW = { timeout: 360_000 };

describe('millrace client commands against a running server', () => {
  let t: TestServer;
  let dir = '';
  let env: Record<string, string> = {};
  let url = '';
  before(async () => {
    t = await startTestServer(backend as NonNullable<typeof backend>, {}, { listen: true });
    const { port } = t.server.app.server.address() as { port: number };
    url = `http://127.0.0.1:${port}/millrace`;
    dir = mkdtempSync(join(tmpdir(), 'millrace-client-e2e-'));
    // A config folder of the test's own, so a developer's profiles cannot change what the test sees.
    env = { MILLRACE_URL: url, MILLRACE_API_KEY: ADMIN_KEY, XDG_CONFIG_HOME: join(dir, 'config') };
    await postCreated(t, '/JobDefinition/GLOBAL.Ok', { JobDefinitionType: 'BASH', Script: 'echo fine' });
    await postCreated(t, '/JobDefinition/GLOBAL.Fails', {
      JobDefinitionType: 'BASH',
      Script: 'echo "failing with $RC"; exit "$RC"',
      Parameters: [{ Name: 'RC', DefaultValue: '1' }],
    });
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  test(
    'submit --wait exits 0 for Completed and with the return code for Error; a wrong key is one line, exit 1',
    SLOW,
    async () => {
      const [ok, failed, wrongKey] = await Promise.all([
        runCli(['job', 'submit', 'Ok', '--wait'], env),
        runCli(['job', 'submit', 'GLOBAL.Fails', '-p', 'RC=3', '--wait'], env),
        runCli(['job', 'show', '1'], { ...env, MILLRACE_API_KEY: 'not-the-key-0123456789' }),
      ]);
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
        await waitFor(
          'the first line from job logs --follow',
          async () => (out.includes('tick 1\n') ? true : undefined),
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

  test(
    'login saves a profile (mode 0600) that later commands use; job list -o json is one JSON array',
    SLOW,
    async () => {
      const noEnv = { XDG_CONFIG_HOME: env.XDG_CONFIG_HOME as string };
      const submitted = await submit(t, 'GLOBAL.Ok');
      const login = await runCli(['login', '--server', url, '--profile', 'test'], {
        ...noEnv,
        MILLRACE_API_KEY: ADMIN_KEY,
      });
      assert.equal(login.code, 0, login.stderr);
      const file = join(noEnv.XDG_CONFIG_HOME, 'millrace', 'config');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const list = await runCli(['job', 'list', '--definition', 'GLOBAL.Ok', '-o', 'json'], noEnv);
      assert.equal(list.code, 0, list.stderr);
      const jobs = JSON.parse(list.stdout);
      assert.ok(Array.isArray(jobs));
      assert.ok(jobs.every((j: { JobDefinition: string }) => j.JobDefinition === 'GLOBAL.Ok'));
      assert.ok(jobs.some((j: { jobId: number }) => j.jobId === submitted.jobId));
    },
  );

  test(
    'apply creates in dependency order, changes nothing the second time, previews with --dry-run, prunes',
    SLOW,
    async () => {
      const files = join(dir, 'objects');
      mkdirSync(files);
      const chainFile = join(files, '0-chain.json');
      const mainFile = join(files, 'etl.yaml');
      // The chain comes first in file order; apply still creates what it calls before it.
      writeFileSync(
        chainFile,
        JSON.stringify({
          Type: 'JobChain',
          Key: 'APP.Flow',
          Steps: [{ Name: 'Load', Calls: [{ JobDefinition: 'APP.Load' }, { JobDefinition: 'APP.Extra' }] }],
        }),
      );
      const yaml = (withExtra: boolean) => `Type: JobDefinition
Key: APP.Load
DefaultQueue: APP.Nightly
Script: |
  echo loading
  echo done
---
Type: Queue
Key: APP.Nightly
ExecutionSize: 4
---
Type: QueueProvider
Key: GLOBAL.Local.APP.Nightly
---
Type: Partition
Key: APP
${withExtra ? '---\nType: JobDefinition\nKey: APP.Extra\nScript: echo extra\n' : ''}`;
      writeFileSync(mainFile, yaml(true));
      const first = await runCli(['apply', '-f', files], env);
      assert.equal(first.code, 0, first.stderr);
      const created = first.stdout.trim().split('\n');
      assert.equal(created.at(-1), '6 created, 0 changed, 0 unchanged');
      const at = (object: string) => created.indexOf(`created   ${object}`);
      const before = (a: string, b: string) =>
        assert.ok(at(a) >= 0 && at(a) < at(b), `${a} before ${b}:\n${first.stdout}`);
      assert.equal(at('Partition APP'), 0);
      before('Queue APP.Nightly', 'JobDefinition APP.Load');
      before('Queue APP.Nightly', 'QueueProvider GLOBAL.Local.APP.Nightly');
      before('JobDefinition APP.Load', 'JobChain APP.Flow');
      before('JobDefinition APP.Extra', 'JobChain APP.Flow');
      assert.equal((await t.req('GET', '/Queue/APP.Nightly')).json.ExecutionSize, 4);
      // Something outside the applied partitions, and a change made by hand.
      await postCreated(t, '/Partition/OTHER', {});
      await postCreated(t, '/Queue/OTHER.Keep', {});
      await postCreated(t, '/JobDefinition/APP.Manual', { Script: 'echo by hand' });

      const [second, exported] = await Promise.all([
        runCli(['apply', '-f', files, '-o', 'json'], env),
        runCli(['def', 'export', '--partition', 'APP', '--dir', join(dir, 'exported')], env),
      ]);
      assert.equal(second.code, 0, second.stderr);
      const outcomes = JSON.parse(second.stdout) as Array<{ action: string }>;
      assert.equal(outcomes.length, 6);
      assert.ok(
        outcomes.every((o) => o.action === 'unchanged'),
        second.stdout,
      );
      assert.equal(exported.code, 0, exported.stderr);

      assert.equal((await t.req('PUT', '/Queue/APP.Nightly', { body: { ExecutionSize: 9 } })).status, 200);
      writeFileSync(mainFile, yaml(false));
      writeFileSync(
        chainFile,
        JSON.stringify({
          Type: 'JobChain',
          Key: 'APP.Flow',
          Steps: [{ Name: 'Load', Calls: [{ JobDefinition: 'APP.Load' }] }],
        }),
      );
      const [dry, roundTrip] = await Promise.all([
        runCli(['apply', '-f', files, '--prune', '--dry-run'], env),
        runCli(['apply', '-f', join(dir, 'exported'), '-o', 'json'], env),
      ]);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /^changed {3}Queue APP.Nightly \(dry run\)\n {4}ExecutionSize: 9 → 4$/m);
      assert.match(dry.stdout, /^changed {3}JobChain APP.Flow \(dry run\)$/m);
      assert.match(dry.stdout, /^deleted {3}JobDefinition APP.Extra \(dry run\)$/m);
      assert.match(dry.stdout, /^deleted {3}JobDefinition APP.Manual \(dry run\)$/m);
      assert.match(dry.stdout, /nothing was changed/);
      assert.equal((await t.req('GET', '/Queue/APP.Nightly')).json.ExecutionSize, 9, 'a dry run changes nothing');
      assert.equal((await t.req('GET', '/JobDefinition/APP.Extra')).status, 200, 'a dry run deletes nothing');
      // def export wrote what apply reads back to the same objects (the definitions and the chain's steps).
      assert.equal(roundTrip.code, 0, roundTrip.stderr);
      const back = JSON.parse(roundTrip.stdout) as Array<{ action: string; type: string; key: string }>;
      assert.ok(back.some((o) => o.type === 'JobChain' && o.key === 'APP.Flow'));
      assert.ok(back.length >= 4 && back.every((o) => o.action === 'unchanged'), roundTrip.stdout);

      const pruned = await runCli(['apply', '-f', files, '--prune'], env);
      assert.equal(pruned.code, 0, pruned.stderr);
      // The chain stops calling APP.Extra before APP.Extra goes.
      const lines = pruned.stdout.trim().split('\n');
      assert.ok(lines.indexOf('changed   JobChain APP.Flow') < lines.indexOf('deleted   JobDefinition APP.Extra'));
      assert.equal(lines.at(-1), '0 created, 2 changed, 3 unchanged, 2 deleted');
      assert.equal((await t.req('GET', '/JobDefinition/APP.Extra')).status, 404);
      assert.equal((await t.req('GET', '/JobDefinition/APP.Manual')).status, 404);
      assert.equal((await t.req('GET', '/Queue/APP.Nightly')).json.ExecutionSize, 4);
      // Other partitions and built-in objects (the GLOBAL queue providers share a partition with the applied one).
      assert.equal((await t.req('GET', '/Queue/OTHER.Keep')).status, 200);
      assert.equal((await t.req('GET', '/QueueProvider/GLOBAL.Local.GLOBAL.Default')).status, 200);
      assert.equal((await t.req('GET', '/QueueProvider/GLOBAL.System.GLOBAL.System')).status, 200);
    },
  );
});
