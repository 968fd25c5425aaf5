import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { getJob, postCreated as post, submit, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * GLOBAL.System_Backup on a recurrence every minute, in virtual time: each occurrence writes an archive named for
 * its time into the target folder and the folder keeps the last `Keep`; the job's note and stdout.log say what was
 * written and removed. On PostgreSQL the archive holds the files outside the database.
 */

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);

for (const backend of backends()) {
  describe(`GLOBAL.System_Backup on a recurrence (${backend.name})`, () => {
    let t: TestServer;
    let target = '';
    const clock = new FakeClock(T0);
    before(async () => {
      t = await startTestServer(backend, {}, { clock });
      target = await mkdtemp(join(tmpdir(), 'millrace-backups-'));
    });
    after(async () => {
      await t.close();
      await rm(target, { recursive: true, force: true });
    });

    test('every minute an archive; the last 3 are kept and the older ones removed', async () => {
      await post(t, '/SubmitFrame/GLOBAL.EveryMinute', {
        TimeZone: 'UTC',
        Elements: [{ Kind: 'Every', Every: 1, Unit: 'Minutes' }],
      });
      const first = await submit(t, 'GLOBAL.System_Backup', {
        SubmitFrame: 'GLOBAL.EveryMinute',
        JobParameters: [
          { Name: 'TargetFolder', InValueString: target },
          { Name: 'Keep', InValueNumber: 3 },
        ],
      });
      // The database is copied in a worker thread and the files streamed: the loop only waits for a hang here (the
      // real block is measured by bench:b15).
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      await waitForStatus(t, first.jobId, 'Completed');
      for (let i = 1; i <= 5; i++) {
        clock.set(T0 + i * MINUTE);
        await t.server.engine.tick();
        const job = await getJob(t, first.jobId + i);
        assert.equal(job.JobGroup, first.jobId);
        await waitForStatus(t, job.jobId, 'Completed');
      }
      loop.disable();
      assert.ok(loop.max / 1e6 < 10_000, `the event loop was held ${loop.max / 1e6} ms`);
      const names = (await readdir(target)).sort();
      assert.deepEqual(names, [
        'millrace-backup-20261126-090300-000.zip',
        'millrace-backup-20261126-090400-000.zip',
        'millrace-backup-20261126-090500-000.zip',
      ]);
      const last = await getJob(t, first.jobId + 5);
      assert.match(JSON.stringify(last), /Backup written to .*090500-000\.zip; 3 kept, 1 removed/);
      const log = last.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
      const content = await t.req('GET', `/JobFile/${log.uniqueId}/content`);
      assert.equal(content.status, 200);
      assert.match(content.body, /^written .*090500-000\.zip: \d+ bytes, \d+ files$/m);
      assert.match(content.body, /^removed .*090200-000\.zip$/m);
    });

    test('an operator without Edit on credentials may submit it, but the job refuses to write the secret key', async () => {
      const key = await t.keyWithRoles('night-operator', ['Operator']);
      const job = await submit(
        t,
        'GLOBAL.System_Backup',
        { JobParameters: [{ Name: 'TargetFolder', InValueString: join(target, 'operator') }] },
        key,
      );
      const done = await waitForStatus(t, job.jobId, 'Error');
      assert.match(JSON.stringify(done), /night-operator may not back up the server: that needs the Edit privilege/);
      assert.deepEqual(
        (await readdir(target)).filter((n) => n === 'operator'),
        [],
      );
    });

    test('a relative target folder ends the job in Error, saying why, and writes nothing', async () => {
      const job = await submit(t, 'GLOBAL.System_Backup', {
        JobParameters: [{ Name: 'TargetFolder', InValueString: 'backups' }],
      });
      const done = await waitForStatus(t, job.jobId, 'Error');
      assert.match(JSON.stringify(done), /TargetFolder must be an absolute path/);
    });
  });
}
