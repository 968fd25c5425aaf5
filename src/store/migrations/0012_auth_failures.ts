import type { Kysely } from 'kysely';

/**
 * Failed sign-ins counted where every node sees them (docs/architecture.md §10, §16): a row per address or user
 * name that failed lately, with its count and the start of its one-minute window. Rows are written only when a
 * sign-in fails and pruned once their window has ended, so the table holds about a minute of failures.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('auth_failures')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .execute();
}
