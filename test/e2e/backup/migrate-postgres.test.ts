import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { NOT_COPIED } from '../../../src/backup/table-plan.ts';
import { FakeClock } from '../../../src/time/clock.ts';
import type { Backend } from '../../helpers/backends.ts';
import { cliEnv, ROOT, runCli } from '../../helpers/cli.ts';
import { insertJobs } from '../../helpers/job-rows.ts';
import { getJob, postCreated as post, submit, utcMillis, waitForStatus } from '../../helpers/jobs.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';
import { ADMIN_KEY, startE2eServer, startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitForJob } from '../../helpers/wait.ts';
import { SAMPLES } from '../../integration/objects/samples.ts';

/**
 * `millrace migrate` from a SQLite server's data folder to PostgreSQL: a server holding every object type, 10,000
 * jobs with history and job files, a chain, a recurrence, an operator message waiting, an alert open, users with
 * roles, API keys and passwords, credentials. The first run is killed half-way and the second finishes it; then a
 * server on PostgreSQL answers every GET of every object, job and job file as the SQLite server did, byte for
 * byte, the source's key and password sign in, a job uses a credential, and the recurrence fires once.
 */

const HOUR = 3_600_000;
const JOBS = 10_000;
const FILES = 500;
const T0 = Math.floor(Date.now() / HOUR) * HOUR;

/** A backend over a folder and database the test keeps (the servers' own cleanup removes nothing). */
const kept = (dataDir: string, databaseUrl?: string): Backend => ({
  name: databaseUrl ? 'postgres' : 'sqlite',
  create: async () => ({ dataDir, ...(databaseUrl ? { databaseUrl } : {}), cleanup: async () => {} }),
});

/** GET of each path, 16 at a time; the answers by path. */
async function answers(t: TestServer, paths: readonly string[]): Promise<Map<string, string>> {
  const got = new Map<string, string>();
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++] as string;
      const r = await t.req('GET', path);
      got.set(path, `${r.status} ${r.body}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return got;
}

describe('millrace migrate: SQLite to PostgreSQL', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  let dir = '';
  let db: { url: string; drop(): Promise<void> };
  const clock = new FakeClock(T0);
  const paths: string[] = [];
  let before_: Map<string, string>;
  let operatorKey = '';
  let recurrence = 0;
  let jobCount = 0;
  let maxJobId = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-migrate-'));
    db = await createPgDatabase();
  });
  after(async () => {
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  test('a populated SQLite server; migrate refuses while it runs', async () => {
    const t = await startTestServer(kept(dir), {}, { clock });
    try {
      for (const s of SAMPLES) await post(t, `/${s.type}/${s.key}`, s.body);
      operatorKey = await t.keyWithRoles('operator', ['Operator']);
      await t.loginWithGrants('auditor', 'auditor-password-1', ['Queue:GLOBAL:View']);
      await post(t, '/SubmitFrame/GLOBAL.Hourly', {
        TimeZone: 'UTC',
        Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }],
      });
      await post(t, '/JobDefinition/GLOBAL.Hourly_Job', { Script: 'true' });
      recurrence = (await submit(t, 'GLOBAL.Hourly_Job', { SubmitFrame: 'GLOBAL.Hourly' })).jobId;
      await submit(t, 'Finance.MonthEnd', {});
      await submit(t, 'GLOBAL.System_OperatorMessage', {
        JobParameters: [{ Name: 'Message', InValueString: 'Approve the month-end close?' }],
      });
      await post(t, '/JobDefinitionAlertSource/GLOBAL.BackupFailed', {
        NamePattern: 'System_Backup',
        Statuses: [{ Status: 'Error' }],
      });
      const failed = await submit(t, 'GLOBAL.System_Backup', {
        JobParameters: [{ Name: 'TargetFolder', InValueString: 'relative' }],
      });
      await waitForStatus(t, failed.jobId, 'Error');
      const done = [];
      for (let i = 0; i < 20; i++)
        done.push(
          (await submit(t, 'GLOBAL.System_Sleep', { JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] }))
            .jobId,
        );
      for (const id of done) await waitForStatus(t, id, 'Completed');
      const template = await t.server.store.jobs.get(done[0] as number);
      assert.ok(template);
      const copies = await insertJobs(
        t,
        template,
        Array.from({ length: JOBS }, (_, i) => ({ description: `copy ${i}` })),
      );
      const store = t.server.store;
      await store.transaction(async (tx) => {
        await tx.jobs.insertHistory(
          copies.map((j) => ({
            jobId: j.jobId,
            entry: { time: T0, from: null, to: 'Completed', user: 'admin', cause: 'test', detail: null },
          })),
        );
        const ids = await tx.nextUniqueIds(FILES);
        await tx.jobs.insertFiles(
          copies.slice(0, FILES).map((j, i) => ({
            uniqueId: ids[i] as number,
            jobId: j.jobId,
            name: 'stdout.log',
            fileOrder: 1,
            type: 'Output',
            format: 'text/plain',
            size: Buffer.byteLength(`output of job ${j.jobId}\n`.repeat(i + 1)),
          })),
        );
      });
      for (const [i, j] of copies.slice(0, FILES).entries())
        await t.server.engine.files.replace(
          j.jobId,
          'stdout.log',
          Buffer.from(`output of job ${j.jobId}\n`.repeat(i + 1)),
        );

      const sqlite = new Database(join(dir, 'millrace.sqlite'), { readonly: true });
      try {
        jobCount = sqlite.prepare('select count(*) from jobs').pluck().get() as number;
        maxJobId = sqlite.prepare('select max(job_id) from jobs').pluck().get() as number;
        for (const [type, key] of sqlite
          .prepare("select type, key from objects where type <> 'JobFile'")
          .raw()
          .all() as [string, string][])
          paths.push(`/${type}/${key}`);
        // Every job; the history of every fiftieth (the copies' histories are alike).
        for (const id of sqlite.prepare('select job_id from jobs').pluck().all() as number[])
          paths.push(`/Job/${id}`, ...(id % 50 === 0 ? [`/Job/${id}/history`] : []));
        for (const id of sqlite.prepare('select unique_id from job_files').pluck().all() as number[])
          paths.push(`/JobFile/${id}/content`);
      } finally {
        sqlite.close();
      }
      before_ = await answers(t, paths);
      for (const type of ['Alert', 'OperatorMessage', 'Credential', 'JobChain'])
        assert.ok(
          [...before_].some(([path, answer]) => path.startsWith(`/${type}/`) && answer.startsWith('200 ')),
          `a ${type} is among the objects compared`,
        );
      assert.ok([...before_.values()].filter((a) => a.startsWith('200 ')).length > JOBS + FILES);
      const refused = await runCli(['migrate', '--from', dir, '--to', db.url]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^millrace: a server \(pid \d+\) is using .*; stop it before migrating\n$/);
    } finally {
      await t.close();
    }
  });

  test('a migration killed half-way, run again, ends with equal counts', async () => {
    const child = spawn(
      process.execPath,
      ['bin/millrace', 'migrate', '--from', dir, '--to', db.url, '--job-files', 'database', '--batch-rows', '10'],
      { cwd: ROOT, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_, signal) => resolve(signal)));
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (/^jobs: \d+ rows read/m.test(out)) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.once('exit', () => resolve());
    });
    assert.equal(await exited, 'SIGKILL', `the first run ended before it was killed:\n${out}`);
    assert.doesNotMatch(out, /counts match/);

    const again = await runCli(['migrate', '--from', dir, '--to', db.url, '--job-files', 'database']);
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.match(again.stdout, /^counts match: \d+ rows in [\d.]+ s \(\d+ rows\/s\)$/m);
    const counted = new Map(
      [...again.stdout.matchAll(/^(\w+) +(\d+) +(\d+)$/gm)].map((m) => [m[1] as string, [Number(m[2]), Number(m[3])]]),
    );
    assert.deepEqual(counted.get('jobs'), [jobCount, jobCount]);
    assert.ok((counted.get('job_file_chunks')?.[0] ?? 0) >= FILES, 'the job files went into the database');
    const sqlite = new Database(join(dir, 'millrace.sqlite'), { readonly: true });
    try {
      // Every table is copied (and counted) or named as not copied: a table a later migration adds is not lost.
      for (const table of sqlite
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
        .pluck()
        .all() as string[])
        assert.ok(
          counted.has(table) || table in NOT_COPIED,
          `table ${table} is neither copied nor listed in NOT_COPIED`,
        );
    } finally {
      sqlite.close();
    }
  });

  test('the server on PostgreSQL answers as the SQLite one did; keys, passwords, credentials and the recurrence go on', async () => {
    const t = await startTestServer(kept(dir, db.url), { jobFilesDir: 'database' }, { clock });
    try {
      const after_ = await answers(t, paths);
      const differ = paths.filter((p) => after_.get(p) !== before_.get(p));
      assert.deepEqual(
        differ.slice(0, 5),
        [],
        `${differ.length} answers differ, e.g. ${differ[0]}:\n${before_.get(differ[0] as string)?.slice(0, 300)}\n${after_.get(differ[0] as string)?.slice(0, 300)}`,
      );
      assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Hourly_Job', { key: operatorKey })).status, 200);
      const xml = await t.xml('GET', '/object/Queue/GLOBAL.Default', {
        auth: ['auditor', 'auditor-password-1'],
      });
      assert.equal(xml.status, 200, xml.body);
      const next = await getJob(t, recurrence + 1);
      assert.deepEqual([next.Status, utcMillis(next.RequestedStartTime)], ['Scheduled', T0 + HOUR]);
      clock.set(T0 + HOUR);
      await t.server.engine.tick();
      clock.set(T0 + HOUR + 1000);
      await t.server.engine.tick();
      assert.equal((await getJob(t, recurrence + 1)).Status, 'Queued');
      const made = (await t.req('GET', `/Job/${maxJobId + 1}`)).json;
      assert.deepEqual(
        [made.JobGroup, made.Status, utcMillis(made.RequestedStartTime)],
        [recurrence, 'Scheduled', T0 + 2 * HOUR],
      );
      assert.equal((await t.req('GET', `/Job/${maxJobId + 2}`)).status, 404, 'the occurrence made one job');
    } finally {
      await t.close();
    }
    const live = await startE2eServer(kept(dir, db.url), { jobFilesDir: 'database' });
    try {
      await post(live, '/JobDefinition/GLOBAL.UsesCredential', {
        Script: 'test "$CREDENTIAL_PASSWORD" = \'s3cret!\' && echo "user=$CREDENTIAL_USER"',
        Credential: 'Finance.LedgerDb',
      });
      const job = await submit(live, 'GLOBAL.UsesCredential', {});
      const done = await waitForJob((p) => live.req('GET', p), job.jobId);
      assert.equal(done.Status, 'Completed', JSON.stringify(done));
      const log = done.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
      assert.equal((await live.req('GET', `/JobFile/${log.uniqueId}/content`)).body, 'user=ledger\n');
      assert.equal((await live.req('GET', '/JobDefinition/GLOBAL.Hourly_Job', { key: ADMIN_KEY })).status, 200);
    } finally {
      await live.close();
    }
  });
});
