import { type Kysely, sql } from 'kysely';

/**
 * A job's maximum run time (docs/architecture.md §6b): when the limit of an active job falls due, kept as a column
 * the store derives from the job at every write (`maxRunDue` of domain/max-run-time.ts), null for every job without
 * one. Each node's wake-up finds the due jobs through the partial index, which holds only the few limited jobs that
 * run, so neither a restart nor the death of the node that started a job loses the limit. Jobs stored before have
 * no limit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('max_run_due', 'bigint').execute();
  await db.schema
    .createIndex('jobs_max_run_due')
    .on('jobs')
    .columns(['max_run_due', 'job_id'])
    .where(sql.ref('max_run_due'), 'is not', null)
    .execute();
}
