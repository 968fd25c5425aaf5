import { type Kysely, sql } from 'kysely';

/**
 * Job indexes sized for a long history (benchmarks B1 and B5, bench/README.md). Every index a row is in costs a page write per insert
 * or status change, and the finished jobs are nearly all rows; so the indexes that only serve pending or running
 * jobs, or columns that are mostly NULL, keep just the rows they serve:
 * - `jobs_scheduled` holds Scheduled jobs only (dueScheduled, nextScheduledStart: their queries name the status as
 *   a literal, which is how SQLite recognises that a partial index applies; it leads with status like
 *   `jobs_dispatch`, so that SQLite, which has no statistics, sees it as the better match);
 * - `jobs_end`, `jobs_process_server`, `jobs_group`, `jobs_parent` leave out rows whose column is NULL (a new job
 *   has no run end, process server, group or parent; `col = ?` and `col < ?` imply NOT NULL for both planners);
 * - `jobs_queue` goes: "is any job in this queue" is answered by `jobs_dispatch` (status, queue, …) with the status
 *   list spelled out.
 * A submitted job is then in 5 b-trees (table, job_id, unique_id, jobs_dispatch, jobs_definition) instead of 11.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const name of ['jobs_status', 'jobs_end', 'jobs_process_server', 'jobs_queue', 'jobs_group', 'jobs_parent'])
    await db.schema.dropIndex(name).execute();
  await db.schema
    .createIndex('jobs_scheduled')
    .on('jobs')
    .columns(['status', 'requested_start', 'job_id'])
    .where(sql<boolean>`status = 'Scheduled'`)
    .execute();
  await db.schema
    .createIndex('jobs_end')
    .on('jobs')
    .column('run_end')
    .where(sql<boolean>`run_end is not null`)
    .execute();
  await db.schema
    .createIndex('jobs_process_server')
    .on('jobs')
    .columns(['process_server', 'status'])
    .where(sql<boolean>`process_server is not null`)
    .execute();
  await db.schema
    .createIndex('jobs_group')
    .on('jobs')
    .column('job_group')
    .where(sql<boolean>`job_group is not null`)
    .execute();
  await db.schema
    .createIndex('jobs_parent')
    .on('jobs')
    .column('parent_job')
    .where(sql<boolean>`parent_job is not null`)
    .execute();
}
