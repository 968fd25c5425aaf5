import { type Kysely, sql } from 'kysely';
import type { Dialect } from './dialect.ts';

/**
 * The dispatcher reads queued jobs by queue and definition type (benchmark B2): a pass reads only the jobs that
 * servers with a free slot could run, at most as many as there are slots, where it read up to 500 whole queued rows
 * of every open queue to start a few. The type is `data.spec.type`, fixed at the submit; the dispatch index gains it
 * after the queue.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('jobs')
    .addColumn('definition_type', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  const type = dialect === 'postgres' ? sql`data::jsonb #>> '{spec,type}'` : sql`json_extract(data, '$.spec.type')`;
  await sql`update jobs set definition_type = coalesce(${type}, '')`.execute(db);
  await db.schema.dropIndex('jobs_dispatch').execute();
  await db.schema
    .createIndex('jobs_dispatch')
    .on('jobs')
    .columns(['status', 'queue', 'definition_type', 'priority desc', 'top_start', 'requested_start', 'job_id'])
    .execute();
}
