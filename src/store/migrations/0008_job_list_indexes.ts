import { type Kysely, sql } from 'kysely';

/**
 * Indexes for the lists of the console (GET /Job, GET /OperatorMessage …): each filter of a job list has an index
 * that ends in job_id, so a page is read newest first from where the cursor points, as fast deep in the history
 * as at its top (keyset pagination; benchmark B9). The costs are weighed as in 0003_job_indexes.ts:
 * - `jobs_list_status` (status, job_id) is written at every status change, like `jobs_dispatch`: the one index
 *   that "the newest Error jobs" needs;
 * - `jobs_list_partition` and `jobs_list_queue` never change after the insert;
 * - `jobs_list_process_server` leaves out jobs that never ran (NULL);
 * - `jobs_group` and `jobs_parent` gain job_id in place (same rows, same writes; their old queries still match).
 * `objects_recent` serves the inboxes (messages and alerts newest first, by type).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('jobs_list_status').on('jobs').columns(['status', 'job_id']).execute();
  await db.schema.createIndex('jobs_list_partition').on('jobs').columns(['partition', 'job_id']).execute();
  await db.schema.createIndex('jobs_list_queue').on('jobs').columns(['queue', 'job_id']).execute();
  await db.schema
    .createIndex('jobs_list_process_server')
    .on('jobs')
    .columns(['process_server', 'job_id'])
    .where(sql<boolean>`process_server is not null`)
    .execute();
  for (const [name, column] of [
    ['jobs_group', 'job_group'],
    ['jobs_parent', 'parent_job'],
  ] as const) {
    await db.schema.dropIndex(name).execute();
    await db.schema
      .createIndex(name)
      .on('jobs')
      .columns([column, 'job_id'])
      .where(sql<boolean>`${sql.ref(column)} is not null`)
      .execute();
  }
  await db.schema.createIndex('objects_recent').on('objects').columns(['type', 'unique_id']).execute();
}
