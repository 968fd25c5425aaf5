import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { JobRecord } from '../../../src/domain/job.ts';
import type { Store } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';
import { upgradedFrom } from '../../helpers/older-database.ts';

/**
 * Migration 0011 gives every job row its definition's type as a column, which the dispatcher reads queued jobs by
 * (benchmark B2). Jobs queued before the upgrade are found by queue and type after it, in dispatch order, and a job
 * submitted after it too.
 */

const spec = (type: string) => ({ type, script: null, completionStrategy: 'Default', returnCodeMap: '', restart: {} });

for (const backend of backends())
  describe(`the definition type of queued jobs after migration 0011 (${backend.name})`, () => {
    let db: Awaited<ReturnType<typeof backend.create>>;
    let store: Store;
    before(async () => {
      db = await backend.create();
      store = await upgradedFrom(backend, db, '0010_cluster', async (kysely) => {
        // Three queued jobs of release 0010: two BASH (the second of higher priority), one System.
        for (const [id, type, priority] of [
          [1, 'BASH', 50],
          [2, 'System', 50],
          [3, 'BASH', 70],
        ] as const)
          await sql`insert into jobs (job_id, unique_id, definition, partition, status, priority, queue, requested_start,
            top_start, attempt, starts, submitted_by, data, creation_time, modification_time)
          values (${id}, ${5000 + id}, 'GLOBAL.J', 'GLOBAL', 'Queued', ${priority}, 'GLOBAL.Default', 1, 1, 0, 0,
            'admin', ${JSON.stringify({ zone: 'UTC', parameters: [], notes: [], spec: spec(type) })}, 1, 1)`.execute(
            kysely,
          );
      });
    });
    after(async () => {
      await store?.close();
      await db?.cleanup();
    });

    const lane = (definitionType: string, limit = 10, offset = 0) => ({
      queue: 'GLOBAL.Default',
      definitionType,
      limit,
      offset,
    });
    const ids = (pages: JobRecord[][]) => pages.map((page) => page.map((j) => j.jobId));

    test('jobs queued before the upgrade are read by queue and type, in dispatch order', async () => {
      // All lanes in one read (one statement on PostgreSQL), each answered in its place; the last pages the first.
      const pages = await store.jobs.dispatchCandidates([
        lane('BASH'),
        lane('System'),
        lane('JobChain'),
        lane('BASH', 1, 1),
      ]);
      assert.deepEqual(ids(pages), [[3, 1], [2], [], [1]]);
      assert.deepEqual(await store.jobs.dispatchCandidates([]), []);
    });

    test('a job stored after the upgrade is read by its type too', async () => {
      const old = await store.jobs.get(2);
      assert.ok(old);
      const jobId = 10;
      await store.jobs.insert({
        ...old,
        jobId,
        uniqueId: 9000,
        data: { ...old.data, spec: { ...old.data.spec, type: 'JobChain' } },
      });
      assert.deepEqual(ids(await store.jobs.dispatchCandidates([lane('JobChain')])), [[jobId]]);
    });
  });
