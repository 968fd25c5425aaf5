import assert from 'node:assert/strict';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { KyselyJobStore } from '../../../src/store/kysely-jobs.ts';
import { migrationProvider } from '../../../src/store/migrations/index.ts';
import { keptPlan } from '../../../src/store/sqlite-kept-plans.ts';
import type { Database } from '../../../src/store/tables.ts';

/**
 * Each statement of the job store reads the index its function names (src/store/kysely-job-*.ts): SQLite's plan
 * of the very SQL the store runs, on a database the migrations made. A statement that fell back to scanning the
 * jobs table would make every dispatch pass, timer or purge as slow as the whole history.
 */

test('the job store statements read the indexes they name (SQLite plans)', async () => {
  const sqlite = new BetterSqlite3(':memory:');
  const statements: { sql: string; parameters: readonly unknown[] }[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: sqlite }),
    log: (event) => {
      if (event.level === 'query') statements.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider('sqlite') }).migrateToLatest();
    assert.equal(error, undefined);
    const store = new KyselyJobStore(db, 'sqlite', () => {});
    const cases: [string, () => Promise<unknown>, string][] = [
      [
        'dispatchCandidates',
        () => store.dispatchCandidates([{ queue: 'GLOBAL.System', definitionType: 'System', limit: 5, offset: 0 }]),
        'jobs_dispatch',
      ],
      ['hasQueued', () => store.hasQueued(), 'jobs_list_status'],
      ['dueScheduled', () => store.dueScheduled(1_000, 50), 'jobs_scheduled'],
      ['nextScheduledStart', () => store.nextScheduledStart(7), 'jobs_scheduled'],
      ['dueMaxRun', () => store.dueMaxRun(1_000, 500), 'jobs_max_run_due'],
      ['nextMaxRunDue', () => store.nextMaxRunDue(7), 'jobs_max_run_due'],
      ['nextMaxRunDue at a start', () => store.nextMaxRunDue(), 'jobs_max_run_due'],
      ['countActive', () => store.countActive(['Queued', 'Running']), 'jobs_dispatch'],
      ['countByStatusAndQueue', () => store.countByStatusAndQueue(), 'jobs_dispatch'],
      ['anyReferring definition', () => store.anyReferring('definition', 'GLOBAL.D'), 'jobs_definition'],
      ['anyReferring queue', () => store.anyReferring('queue', 'GLOBAL.Q'), 'jobs_dispatch'],
      ['anyReferring processServer', () => store.anyReferring('processServer', 'GLOBAL.P'), 'jobs_list_process_server'],
      ['finishedBeyond', () => store.finishedBeyond('GLOBAL.D', 10, 100), 'jobs_definition'],
      ['finishedBefore', () => store.finishedBefore(1_000, 100), 'jobs_end'],
      ['listChildren', () => store.listChildren(5), 'jobs_parent'],
      ['groupHasStart', () => store.groupHasStart(3, 4), 'jobs_group'],
      ['history', () => store.history(3, 10), 'job_history_job'],
      ['listByStatus', () => store.listByStatus(['Queued'], { limit: 10, afterJobId: 4 }), 'jobs_list_status'],
      ['listJobs by status', () => store.listJobs({ limit: 20, statuses: ['Error'] }), 'jobs_list_status'],
      ['listJobs by partition', () => store.listJobs({ limit: 20, partitions: ['A'] }), 'jobs_list_partition'],
    ];
    for (const [name, call, index] of cases) {
      statements.length = 0;
      await call();
      assert.equal(statements.length, 1, `${name} runs one statement`);
      const [{ sql, parameters }] = statements as [{ sql: string; parameters: readonly unknown[] }];
      const plan = sqlite
        .prepare(`explain query plan ${keptPlan(sql)}`)
        .all(...parameters)
        .map((row) => (row as { detail: string }).detail);
      const reads = plan.filter((detail) => /^(SEARCH|SCAN) jobs|^(SEARCH|SCAN) job_history/.test(detail));
      assert.ok(reads.length > 0, `${name}: ${plan.join(' | ')}`);
      for (const detail of reads)
        assert.match(detail, new RegExp(`USING (COVERING )?INDEX ${index}\\b`), `${name}: ${plan.join(' | ')}`);
    }
  } finally {
    await db.destroy();
  }
});
