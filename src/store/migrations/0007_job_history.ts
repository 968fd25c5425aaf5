import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.ts';

/**
 * Job history: every status change with its time and cause, written in the transaction of the change and deleted
 * with the job. Read by job id in order; the one index is (job_id, id).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('job_history')
    // SQLite: an INTEGER PRIMARY KEY is the rowid, assigned on insert.
    .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('job_id', 'bigint', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('from_status', 'text')
    .addColumn('to_status', 'text', (c) => c.notNull())
    .addColumn('user_name', 'text')
    .addColumn('cause', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('job_history_job').on('job_history').columns(['job_id', 'id']).execute();
}
