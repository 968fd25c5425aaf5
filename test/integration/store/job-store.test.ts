import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JobRecord } from '../../../src/domain/job.ts';
import { itemAt } from '../../../src/domain/item-at.ts';
import pg from 'pg';
import { JOB_STATEMENTS } from '../../../src/store/kysely-job-statements.ts';
import { backends } from '../../helpers/backends.ts';
import { addColumn, suiteStore } from '../../helpers/suite-store.ts';

/**
 * The JobStore queries that migration 0003 (partial indexes) and the precompiled statements touch: rows survive
 * insert, update (on PostgreSQL many jobs in one statement) and get unchanged, and each query still finds exactly
 * the jobs it should.
 */

const T0 = 1_790_000_000_000;

function job(jobId: number, over: Partial<JobRecord> = {}): JobRecord {
  return {
    jobId,
    uniqueId: 100_000 + jobId,
    definition: 'GLOBAL.System_Sleep',
    partition: 'GLOBAL',
    status: 'Queued',
    priority: 50,
    queue: 'GLOBAL.System',
    processServer: null,
    requestedStart: T0 + jobId,
    scheduledStart: null,
    runStart: null,
    runEnd: null,
    returnCode: null,
    parentJob: null,
    jobGroup: null,
    topStart: T0 + jobId,
    attempt: 0,
    starts: 0,
    submittedBy: 'admin',
    description: null,
    data: {
      zone: 'UTC',
      parameters: [],
      notes: [],
      spec: {
        type: 'System',
        script: null,
        completionStrategy: 'Default',
        returnCodeMap: '0',
        restart: {},
        maxStarts: null,
        keepJobs: null,
      },
    },
    creationTime: T0 + jobId,
    modificationTime: T0 + jobId,
    ...over,
  };
}

for (const backend of backends()) {
  describe(`the JobStore queries (${backend.name})`, () => {
    const t = suiteStore(backend);

    test('a job reads back as written, awkward text included', async () => {
      const j = job(1, {
        description: 'quote " backslash \\ braces {a,b} comma, NULL',
        data: { ...job(1).data, notes: ['"x"', '\\', '{}', 'ünïcödé ✓', 'NULL'] },
      });
      await t.store.transaction((tx) => tx.jobs.insert(j));
      assert.deepEqual(await t.store.jobs.get(1), j);
      assert.equal(await t.store.jobs.get(999), undefined);
    });

    test("a job's files list in their order; ifAbsent leaves out a name the job has and adds the others", async () => {
      await t.store.transaction((tx) => tx.jobs.insert(job(90)));
      const file = (uniqueId: number, name: string, fileOrder: number, size = 0) => ({
        uniqueId,
        jobId: 90,
        name,
        fileOrder,
        type: 'Output' as const,
        format: 'text/plain',
        size,
      });
      // Inserted out of order: the list is by file order, then by name.
      await t.store.transaction((tx) =>
        tx.jobs.insertFiles([
          file(900_003, 'b.csv', 3, 5),
          file(900_001, 'stdout.log', 1, 7),
          file(900_004, 'a.csv', 3),
        ]),
      );
      await t.store.transaction((tx) =>
        tx.jobs.insertFiles([file(900_011, 'stdout.log', 1), file(900_012, 'stderr.log', 2)], { ifAbsent: true }),
      );
      const listed = await t.store.jobs.listFiles(90);
      assert.deepEqual(
        listed.map((f) => [f.name, f.uniqueId, f.size]),
        [
          ['stdout.log', 900_001, 7],
          ['stderr.log', 900_012, 0],
          ['a.csv', 900_004, 0],
          ['b.csv', 900_003, 5],
        ],
      );
      // Without ifAbsent a name the job has is refused, and the transaction with it.
      await assert.rejects(t.store.transaction((tx) => tx.jobs.insertFiles([file(900_021, 'a.csv', 4)])));
      assert.equal((await t.store.jobs.listFiles(90)).length, 4);
    });

    test("history rows of one commit, more than one statement's worth, read back in their order", async () => {
      await t.store.transaction(async (tx) => {
        await tx.jobs.insert(job(91));
        await tx.jobs.insert(job(92));
      });
      const statuses = ['Queued', 'Held'] as const;
      // 37 rows, the two jobs' interleaved: SQLite writes them in statements of up to 16 rows.
      const rows = Array.from({ length: 37 }, (_, i) => ({
        jobId: 91 + (i % 2),
        entry: {
          time: T0 + i,
          from: i < 2 ? null : (statuses[(i + 1) % 2] ?? null),
          to: statuses[i % 2] ?? 'Queued',
          user: i % 3 === 0 ? null : `user ${i}`,
          cause: `cause ${i}`,
          detail: i % 5 === 0 ? `detail "${i}"` : null,
        },
      }));
      await t.store.transaction((tx) => tx.jobs.insertHistory(rows));
      // After the row of each job's insert (its submit).
      for (const jobId of [91, 92])
        assert.deepEqual(
          (await t.store.jobs.history(jobId, 100)).slice(1),
          rows.filter((r) => r.jobId === jobId).map((r) => r.entry),
        );
    });

    test('writes after a read in one transaction leave the row as the last record says, values set back included', async () => {
      await t.store.transaction((tx) => tx.jobs.insert(job(93)));
      const dispatched = {
        ...job(93),
        status: 'Dispatched' as const,
        processServer: 'GLOBAL.P',
        modificationTime: T0 + 1,
      };
      // A record from elsewhere, older than what the transaction wrote: the row takes all of it.
      const stale = { ...job(93), priority: 7, description: 'from elsewhere' };
      await t.store.transaction(async (tx) => {
        const read = await tx.jobs.get(93);
        assert.deepEqual(read, job(93));
        await tx.jobs.updateMany([dispatched]);
        assert.deepEqual(await tx.jobs.get(93), dispatched);
        // Back to the values it was read with: written, though they equal what the transaction first read.
        await tx.jobs.updateMany([job(93)]);
        assert.deepEqual(await tx.jobs.get(93), job(93));
        await tx.jobs.updateMany([dispatched, stale]);
      });
      assert.deepEqual(await t.store.jobs.get(93), stale);
      // A transaction rolled back writes nothing; the next one, reading the row afresh, writes the same change.
      const held = { ...stale, status: 'Held' as const, modificationTime: T0 + 2 };
      await assert.rejects(
        t.store.transaction(async (tx) => {
          await tx.jobs.get(93);
          await tx.jobs.updateMany([held]);
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.deepEqual(await t.store.jobs.get(93), stale);
      await t.store.transaction(async (tx) => {
        await tx.jobs.get(93);
        await tx.jobs.updateMany([held]);
      });
      assert.deepEqual(await t.store.jobs.get(93), held);
    });

    test('updateMany writes every job it is given; a job listed twice ends as its last entry says', async () => {
      const jobs = [job(10), job(11), job(12)];
      await t.store.transaction(async (tx) => {
        for (const j of jobs) await tx.jobs.insert(j);
      });
      const a = { ...job(10), status: 'Running' as const, processServer: 'GLOBAL.System', runStart: T0 + 100 };
      const b = {
        ...job(11),
        status: 'Completed' as const,
        processServer: 'GLOBAL.System',
        runEnd: T0 + 200,
        returnCode: 0,
        description: 'it\'s "done"',
        data: { ...job(11).data, notes: ['a "note", with {braces}', '\\n'] },
      };
      const cFirst = { ...job(12), status: 'Held' as const };
      const cLast = { ...job(12), status: 'Queued' as const, priority: 99, jobGroup: 7, parentJob: 3 };
      await t.store.transaction((tx) => tx.jobs.updateMany([a, b, cFirst, cLast]));
      assert.deepEqual(await t.store.jobs.get(10), a);
      assert.deepEqual(await t.store.jobs.get(11), b);
      assert.deepEqual(await t.store.jobs.get(12), cLast);
      // And back to NULLs.
      await t.store.transaction((tx) => tx.jobs.updateMany([job(11), job(12)]));
      assert.deepEqual(await t.store.jobs.get(11), job(11));
      assert.deepEqual(await t.store.jobs.get(12), job(12));
    });

    test('insertNew gives a job fresh ids in its insert, its own JobGroup when asked; it reads back as answered', async () => {
      // Past the fixed ids the other tests insert.
      await t.store.transaction((tx) => tx.jobs.nextJobIds(1000));
      const { jobId: _j, uniqueId: _u, ...fresh } = job(0, { description: 'new' });
      const [a, b] = await t.store.transaction(async (tx) => [
        await tx.jobs.insertNew(fresh, false),
        await tx.jobs.insertNew({ ...fresh, jobGroup: null }, true),
      ]);
      assert.ok(a && b);
      assert.ok(a.jobId >= 1000 && b.jobId > a.jobId, `${a.jobId}, ${b.jobId}`);
      assert.notEqual(a.uniqueId, b.uniqueId);
      assert.equal(a.jobGroup, null);
      assert.equal(b.jobGroup, b.jobId);
      assert.deepEqual(await t.store.jobs.get(a.jobId), a);
      assert.deepEqual(await t.store.jobs.get(b.jobId), b);
      // A rolled-back insert leaves no row.
      let lost: JobRecord | undefined;
      await assert.rejects(
        t.store.transaction(async (tx) => {
          lost = await tx.jobs.insertNew(fresh, false);
          throw new Error('roll back');
        }),
      );
      assert.ok(lost);
      assert.equal(await t.store.jobs.get(lost.jobId), undefined);
    });

    test('new jobs expected in a group read back as written, are stored by the commit, and a refused one stores none', async () => {
      await t.store.transaction((tx) => tx.jobs.nextJobIds(2000));
      const { jobId: _j, uniqueId: _u, ...fresh } = job(0, { description: 'grouped' });
      let takenBetween = 0;
      const [a, b, c] = await t.store.transaction(async (tx) => {
        await tx.jobs.expectNew(2);
        // The two expected jobs' ids were taken ahead, on both databases: an id taken now comes after them.
        takenBetween = itemAt(await tx.jobs.nextJobIds(1), 0);
        const made = [
          await tx.jobs.insertNew(fresh, false),
          await tx.jobs.insertNew({ ...fresh, jobGroup: null }, true),
          await tx.jobs.insertNew(fresh, false), // one more than expected
        ];
        const [first] = made;
        assert.ok(first);
        assert.deepEqual(await tx.jobs.get(first.jobId), first, 'a new job reads back before it is sent');
        const held = { ...first, status: 'Held' as const };
        await tx.jobs.updateMany([held]);
        const listed = await tx.jobs.listByStatus(['Held'], { limit: 100 });
        assert.deepEqual(
          listed.filter((j) => j.jobId === first.jobId),
          [held],
          'written, then seen by a query',
        );
        made[0] = held;
        return made;
      });
      assert.ok(a && b && c);
      assert.ok(
        a.jobId >= 2000 && b.jobId > a.jobId && takenBetween > b.jobId && c.jobId > takenBetween,
        `${a.jobId}, ${b.jobId}, ${takenBetween}, ${c.jobId}`,
      );
      assert.equal(new Set([a.uniqueId, b.uniqueId, c.uniqueId]).size, 3);
      assert.equal(b.jobGroup, b.jobId);
      for (const made of [a, b, c]) assert.deepEqual(await t.store.jobs.get(made.jobId), made);
      // A new job the database refuses (a null definition: on PostgreSQL at the commit, on SQLite at once) fails
      // the transaction: the other new job does not stay either.
      let lost: JobRecord | undefined;
      await assert.rejects(
        t.store.transaction(async (tx) => {
          await tx.jobs.expectNew(2);
          lost = await tx.jobs.insertNew(fresh, false);
          await tx.jobs.insertNew({ ...fresh, definition: null as unknown as string }, false);
        }),
      );
      assert.ok(lost);
      assert.equal(await t.store.jobs.get(lost.jobId), undefined);
    });

    test('jobs read ahead are handed out as stored, and as written once written in the transaction', async () => {
      await t.store.transaction(async (tx) => {
        for (const id of [60, 61, 62]) await tx.jobs.insert(job(id));
      });
      await t.store.transaction(async (tx) => {
        await tx.jobs.prefetch([60, 61, 62, 63]);
        assert.deepEqual(await tx.jobs.get(60), job(60));
        // Read ahead or not (SQLite reads each when asked), the answers are the same.
        const changed = { ...job(61), status: 'Held' as const };
        await tx.jobs.updateMany([changed]);
        assert.deepEqual(await tx.jobs.get(61), changed, 'written after the read ahead');
        const first = await tx.jobs.get(62);
        assert.ok(first);
        first.status = 'Running';
        assert.deepEqual(await tx.jobs.get(62), job(62), 'a second get reads the row again, not the first copy');
        assert.equal(await tx.jobs.get(63), undefined);
      });
    });

    test('deferred updates read back as written, are sent before another read of jobs, and fail the transaction when refused', async () => {
      await t.store.transaction(async (tx) => {
        for (const id of [70, 71]) await tx.jobs.insert(job(id));
      });
      const held = { ...job(70), status: 'Held' as const };
      await t.store.transaction(async (tx) => {
        tx.jobs.deferUpdates();
        await tx.jobs.updateMany([held]);
        assert.deepEqual(await tx.jobs.get(70), held);
        const listed = await tx.jobs.listByStatus(['Held'], { limit: 100 });
        assert.deepEqual(
          listed.filter((j) => j.jobId === 70),
          [held],
        );
        await tx.jobs.updateMany([{ ...job(71), priority: 7 }]);
      });
      assert.deepEqual(await t.store.jobs.get(70), held);
      assert.equal((await t.store.jobs.get(71))?.priority, 7);
      const [before70, before71] = [await t.store.jobs.history(70, 10), await t.store.jobs.history(71, 10)];
      await assert.rejects(
        t.store.transaction(async (tx) => {
          tx.jobs.deferUpdates();
          await tx.jobs.updateMany([
            { ...job(71), priority: 8 },
            { ...job(70), definition: null as unknown as string },
          ]);
        }),
      );
      assert.equal((await t.store.jobs.get(71))?.priority, 7, 'nothing of the refused transaction stored');
      assert.deepEqual(await t.store.jobs.get(70), held);
      // Its history rows (the records were not read in it: each a change from no status) went with the refused
      // rows, in one statement on PostgreSQL: none of them stayed either.
      assert.deepEqual(await t.store.jobs.history(70, 10), before70);
      assert.deepEqual(await t.store.jobs.history(71, 10), before71);
    });

    test("held rows go with the commit's history rows: new and written-back jobs and their history in one statement", async () => {
      await t.store.transaction(async (tx) => {
        for (const id of [80, 81]) await tx.jobs.insert(job(id));
      });
      await t.store.transaction((tx) => tx.jobs.nextJobIds(3000));
      const { jobId: _j, uniqueId: _u, ...fresh } = job(0, { description: 'held with its history' });
      const sent = () => t.store.poolStats()?.roundTrips ?? 0;
      const before = sent();
      const made = await t.store.transaction(async (tx) => {
        await tx.jobs.expectNew(2);
        const created = [await tx.jobs.insertNew(fresh, false), await tx.jobs.insertNew(fresh, false)];
        await tx.jobs.prefetch([80, 81]);
        const [held, raised] = [await tx.jobs.get(80), await tx.jobs.get(81)];
        assert.ok(held && raised);
        tx.jobs.deferUpdates();
        held.status = 'Held';
        await tx.jobs.updateMany([held]);
        raised.priority = 9;
        await tx.jobs.updateMany([raised]); // no status change: its row, no history
        return created;
      });
      if (backend.name === 'postgres')
        assert.equal(sent() - before, 4, 'BEGIN with the new ids, the jobs read, the rows with their history, COMMIT');
      const to = async (jobId: number) => (await t.store.jobs.history(jobId, 10)).map((e) => e.to);
      for (const m of made) {
        assert.deepEqual(await t.store.jobs.get(m.jobId), m);
        assert.deepEqual(await to(m.jobId), ['Queued']);
      }
      assert.equal((await t.store.jobs.get(80))?.status, 'Held');
      assert.equal((await t.store.jobs.get(81))?.priority, 9);
      assert.deepEqual(await to(80), ['Queued', 'Held']);
      assert.deepEqual(await to(81), ['Queued']);
    });

    test('Scheduled jobs: the earliest start and the due ones, oldest first', async () => {
      await t.store.transaction(async (tx) => {
        await tx.jobs.insert(job(20, { status: 'Scheduled', requestedStart: T0 + 5000 }));
        await tx.jobs.insert(job(21, { status: 'Scheduled', requestedStart: T0 + 3000 }));
        await tx.jobs.insert(job(22, { status: 'Scheduled', requestedStart: T0 + 9000 }));
        await tx.jobs.insert(job(23, { status: 'Queued', requestedStart: T0 + 1000 }));
      });
      assert.equal(await t.store.jobs.nextScheduledStart(), T0 + 3000);
      assert.deepEqual(
        (await t.store.jobs.dueScheduled(T0 + 6000, 10)).map((j) => j.jobId),
        [21, 20],
      );
      assert.deepEqual(
        (await t.store.jobs.dueScheduled(T0 + 6000, 1)).map((j) => j.jobId),
        [21],
      );
    });

    test('finishedBefore finds finished jobs that ended before the time, not ConsoleRestart ones', async () => {
      await t.store.transaction(async (tx) => {
        await tx.jobs.insert(job(30, { status: 'Completed', runEnd: T0 + 10 }));
        await tx.jobs.insert(job(31, { status: 'Error', runEnd: T0 + 20 }));
        await tx.jobs.insert(job(32, { status: 'ConsoleRestart', runEnd: T0 + 15 }));
        await tx.jobs.insert(job(33, { status: 'Completed', runEnd: T0 + 50 }));
        await tx.jobs.insert(job(34, { status: 'Running', runStart: T0 }));
      });
      assert.deepEqual(
        (await t.store.jobs.finishedBefore(T0 + 30, 100)).sort((x, y) => x - y),
        [30, 31],
      );
      assert.equal((await t.store.jobs.finishedBefore(T0 + 30, 1)).length, 1);
    });

    test('anyReferring finds a job of a queue, a process server or a definition in any status', async () => {
      await t.store.transaction((tx) =>
        tx.jobs.insert(
          job(40, { status: 'Never', queue: 'GLOBAL.Rare', processServer: 'GLOBAL.Box', definition: 'GLOBAL.D' }),
        ),
      );
      assert.equal(await t.store.jobs.anyReferring('queue', 'GLOBAL.Rare'), 40);
      assert.equal(await t.store.jobs.anyReferring('processServer', 'GLOBAL.Box'), 40);
      assert.equal(await t.store.jobs.anyReferring('definition', 'GLOBAL.D'), 40);
      assert.equal(await t.store.jobs.anyReferring('queue', 'GLOBAL.Nobody'), undefined);
      assert.equal(await t.store.jobs.anyReferring('processServer', 'GLOBAL.Nobody'), undefined);
    });

    test('jobs of a group and of a process server are found by status', async () => {
      await t.store.transaction(async (tx) => {
        await tx.jobs.insert(job(50, { status: 'Queued', jobGroup: 500 }));
        await tx.jobs.insert(job(51, { status: 'Completed', jobGroup: 500, runEnd: T0 }));
        await tx.jobs.insert(job(52, { status: 'Running', processServer: 'GLOBAL.Box2' }));
      });
      assert.deepEqual(
        (await t.store.jobs.listByStatus(['Queued', 'Held'], { jobGroup: 500, limit: 10 })).map((j) => j.jobId),
        [50],
      );
      assert.deepEqual(
        (await t.store.jobs.listByStatus(['Running'], { processServer: 'GLOBAL.Box2', limit: 10 })).map((j) => j.jobId),
        [52],
      );
    });

    test("a dispatch pass's lanes are read together, each in dispatch order up to its page", async () => {
      const a = 'GLOBAL.LaneA';
      const b = 'GLOBAL.LaneB';
      const bash = (j: JobRecord): JobRecord => ({ ...j, data: { ...j.data, spec: { ...j.data.spec, type: 'BASH' } } });
      await t.store.transaction(async (tx) => {
        await tx.jobs.insert(job(7001, { queue: a }));
        await tx.jobs.insert(job(7002, { queue: a, priority: 70 }));
        await tx.jobs.insert(job(7003, { queue: a, topStart: T0 })); // an older chain's step: before its equals
        await tx.jobs.insert(bash(job(7004, { queue: a })));
        await tx.jobs.insert(job(7005, { queue: b }));
        await tx.jobs.insert(job(7006, { queue: b, status: 'Running', processServer: 'GLOBAL.Box' }));
      });
      const lane = (queue: string, definitionType: string, limit: number, offset = 0) => ({
        queue,
        definitionType,
        limit,
        offset,
      });
      const pages = await t.store.transaction((tx) =>
        tx.jobs.dispatchCandidates([
          lane(b, 'System', 10),
          lane(a, 'System', 2),
          lane(a, 'System', 10, 2),
          lane(a, 'BASH', 10),
          lane(b, 'BASH', 10),
        ]),
      );
      assert.deepEqual(
        pages.map((page) => page.map((j) => j.jobId)),
        [[7005], [7002, 7003], [7001], [7004], []],
      );
      if (t.db.databaseUrl) {
        // Each lane can be read from the dispatch index, in its order. The test's table is a page or two, which
        // PostgreSQL could rightly scan whole instead, so the plan is asked for with sequential scans off.
        const client = new pg.Client({ connectionString: t.db.databaseUrl });
        await client.connect();
        try {
          await client.query('set enable_seqscan = off');
          await client.query(`prepare lanes as ${JOB_STATEMENTS.postgres.candidates}`);
          const plan = await client.query<{ 'QUERY PLAN': string }>(
            `explain execute lanes('{${a},${b}}', '{System,System}', '{5,5}', '{0,0}')`,
          );
          const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
          assert.match(text, /Index Scan using jobs_dispatch on jobs/, text);
        } finally {
          await client.end();
        }
      }
    });

    // Last: it adds a column. The reads of every job are prepared statements on PostgreSQL (src/store/pg-prepared.ts),
    // and a prepared `select *` whose columns change fails ("cached plan must not change result type").
    test('a job and the dispatch candidates read as before after a newer node adds a column to jobs', async () => {
      const queued = job(9000, { uniqueId: 990_000, queue: 'GLOBAL.Later' });
      await t.store.transaction((tx) => tx.jobs.insert(queued));
      const read = async () => {
        assert.deepEqual(await t.store.jobs.get(9000), queued);
        const lane = { queue: 'GLOBAL.Later', definitionType: 'System', limit: 10, offset: 0 };
        const candidates = await t.store.transaction((tx) => tx.jobs.dispatchCandidates([lane]));
        assert.deepEqual(candidates, [[queued]]);
      };
      for (let i = 0; i < 3; i++) await read(); // prepared on the connections that run them
      await addColumn(t.db, 'jobs', 'added_by_a_newer_node');
      for (let i = 0; i < 3; i++) await read();
    });
  });
}
