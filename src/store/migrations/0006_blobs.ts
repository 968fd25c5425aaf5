import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.ts';

/** Binary content: library files and CAR archives waiting for their import job. */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('blobs')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('blobs_pk', ['kind', 'owner', 'name'])
    .execute();
}
