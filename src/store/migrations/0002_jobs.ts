import { type Kysely, sql } from 'kysely';
import type { Dialect } from './dialect.ts';

/** Jobs and their files: the history, with the columns the dispatcher filters and orders on. */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await sql`create sequence job_id_seq start 1`.execute(db);
  else await sql`insert into sequences (name, value) values ('job_id', 0)`.execute(db);

  await db.schema
    .createTable('jobs')
    .addColumn('job_id', 'bigint', (c) => c.primaryKey())
    .addColumn('unique_id', 'bigint', (c) => c.notNull().unique())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('partition', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('priority', 'integer', (c) => c.notNull())
    .addColumn('queue', 'text', (c) => c.notNull())
    .addColumn('process_server', 'text')
    .addColumn('requested_start', 'bigint', (c) => c.notNull())
    .addColumn('scheduled_start', 'bigint')
    .addColumn('run_start', 'bigint')
    .addColumn('run_end', 'bigint')
    .addColumn('return_code', 'integer')
    .addColumn('parent_job', 'bigint')
    .addColumn('job_group', 'bigint')
    .addColumn('top_start', 'bigint', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('starts', 'integer', (c) => c.notNull())
    .addColumn('submitted_by', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('creation_time', 'bigint', (c) => c.notNull())
    .addColumn('modification_time', 'bigint', (c) => c.notNull())
    .execute();
  // Dispatch order (docs/architecture.md §8) within a status; also serves "jobs in status S" and the active counts.
  await db.schema
    .createIndex('jobs_dispatch')
    .on('jobs')
    .columns(['status', 'queue', 'priority desc', 'top_start', 'requested_start', 'job_id'])
    .execute();
  await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'requested_start']).execute();
  await db.schema.createIndex('jobs_definition').on('jobs').columns(['definition', 'job_id']).execute();
  await db.schema.createIndex('jobs_process_server').on('jobs').columns(['process_server', 'status']).execute();
  await db.schema.createIndex('jobs_queue').on('jobs').columns(['queue']).execute();
  await db.schema.createIndex('jobs_end').on('jobs').columns(['run_end']).execute();
  await db.schema.createIndex('jobs_group').on('jobs').columns(['job_group']).execute();
  await db.schema.createIndex('jobs_parent').on('jobs').columns(['parent_job']).execute();

  await db.schema
    .createTable('job_files')
    .addColumn('unique_id', 'bigint', (c) => c.primaryKey())
    .addColumn('job_id', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('file_order', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('job_files_job_name', ['job_id', 'name'])
    .execute();
}
