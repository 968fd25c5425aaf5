import type { Kysely } from 'kysely';

/**
 * Runtime statistics (docs/architecture.md §8b), kept as jobs finish, in the transaction that makes a job final:
 * `runtime_stats` holds a row per definition and chain step with the count of runs per final status, their summed
 * and longest duration; `runtime_buckets` a row per occupied bucket of the duration histogram (32 buckets per
 * doubling) with its count and its shortest and longest run. Both are only ever added to (an upsert per row, so
 * several nodes add to them atomically); purging jobs leaves them as they are.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('runtime_stats')
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('step', 'text', (c) => c.notNull())
    .addColumn('runs', 'bigint', (c) => c.notNull())
    .addColumn('completed', 'bigint', (c) => c.notNull())
    .addColumn('error', 'bigint', (c) => c.notNull())
    .addColumn('killed', 'bigint', (c) => c.notNull())
    .addColumn('unknown', 'bigint', (c) => c.notNull())
    .addColumn('total_ms', 'bigint', (c) => c.notNull())
    .addColumn('max_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('runtime_stats_key', ['definition', 'step'])
    .execute();
  await db.schema
    .createTable('runtime_buckets')
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('step', 'text', (c) => c.notNull())
    .addColumn('bucket', 'integer', (c) => c.notNull())
    .addColumn('runs', 'bigint', (c) => c.notNull())
    .addColumn('min_ms', 'bigint', (c) => c.notNull())
    .addColumn('max_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('runtime_buckets_key', ['definition', 'step', 'bucket'])
    .execute();
}
