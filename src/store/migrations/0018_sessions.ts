import type { Kysely } from 'kysely';

/**
 * The dashboard's sessions, where every node sees them (docs/architecture.md §10, §16): a row per signed-in session,
 * keyed by the SHA-256 of its cookie value (the database never holds what the cookie holds), with its user, when it
 * began, when it was last seen (written at most once a minute) and when it ends at the latest.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('creation_time', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_time', 'bigint', (c) => c.notNull())
    .addColumn('expiry_time', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_name').execute();
  await db.schema.createIndex('sessions_expiry').on('sessions').column('expiry_time').execute();
}
