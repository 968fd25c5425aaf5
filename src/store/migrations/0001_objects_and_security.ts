import { type Kysely, sql } from 'kysely';
import type { Dialect } from './dialect.ts';

/**
 * The objects of every type (their data as JSON, keyed by type and key), the references between them, security
 * (users, roles, API keys) and `meta`, named values the store keeps for itself. Unique ids come from a sequence (a
 * table of counters on SQLite, which has none).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') {
    // A real sequence: nextval never blocks on another transaction's row lock.
    await sql`create sequence unique_id_seq start 1000`.execute(db);
  } else {
    await db.schema
      .createTable('sequences')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'bigint', (c) => c.notNull())
      .execute();
    await sql`insert into sequences (name, value) values ('unique_id', 999)`.execute(db);
  }

  await db.schema
    .createTable('objects')
    .addColumn('unique_id', 'bigint', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('partition', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('protection', 'text')
    .addColumn('creation_time', 'bigint', (c) => c.notNull())
    .addColumn('modification_time', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('objects_type_key', ['type', 'key'])
    .execute();
  await db.schema.createIndex('objects_type_partition').on('objects').columns(['type', 'partition', 'key']).execute();

  await db.schema
    .createTable('object_refs')
    .addColumn('from_id', 'bigint', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('to_id', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('object_refs_pk', ['from_id', 'path'])
    .execute();
  await db.schema.createIndex('object_refs_to').on('object_refs').columns(['to_id', 'path']).execute();

  await db.schema
    .createTable('users')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('password_hash', 'text')
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('creation_time', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('roles')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('grants', 'text', (c) => c.notNull())
    .addColumn('builtin', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('creation_time', 'bigint', (c) => c.notNull())
    .addColumn('expiry_time', 'bigint', (c) => c.notNull())
    .addColumn('last_used_time', 'bigint')
    .addColumn('revoked_time', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_user').on('api_keys').column('user_name').execute();

  await db.schema
    .createTable('meta')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}
