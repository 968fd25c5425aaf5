import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.ts';

/**
 * The audit log (docs/architecture.md §18): one row per audited change, numbered without gaps, each holding the hash
 * of the one before it; and `audit_head`, a single row naming the last entry and its hash. An append locks that row
 * (PostgreSQL: `for update`, held until the change commits), so appends from several nodes form one line.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('audit_entries')
    // SQLite: INTEGER PRIMARY KEY is the rowid, so the table itself is in id order and a page is one range read.
    .addColumn('id', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.primaryKey())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('address', 'text')
    .addColumn('interface', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text')
    .addColumn('object_key', 'text')
    .addColumn('object_unique_id', 'bigint')
    .addColumn('detail', 'text')
    .addColumn('diff', 'text')
    .addColumn('restore', 'text')
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  // The filters of GET /AuditEntry, each newest first; time alone for the purge and Since/Until.
  await db.schema
    .createIndex('audit_entries_object')
    .on('audit_entries')
    .columns(['object_type', 'object_key', 'id'])
    .execute();
  await db.schema.createIndex('audit_entries_actor').on('audit_entries').columns(['actor', 'id']).execute();
  await db.schema.createIndex('audit_entries_action').on('audit_entries').columns(['action', 'id']).execute();
  await db.schema.createIndex('audit_entries_time').on('audit_entries').columns(['time', 'id']).execute();
  await db.schema
    .createTable('audit_head')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('last_id', 'bigint', (c) => c.notNull())
    .addColumn('last_hash', 'text', (c) => c.notNull())
    .execute();
  // Its row is made by the first append, so `millrace migrate` copies a source's head into a new database.
}
