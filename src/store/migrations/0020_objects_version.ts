import { sql, type Kysely } from 'kysely';
import type { Dialect } from './dialect.ts';

/**
 * PostgreSQL: one row counting the committed transactions that wrote objects (docs/architecture.md §2), so what is
 * read of objects can be kept between transactions and known stale by one small read, whichever server node wrote
 * them. A trigger moves it, so every writer does, a node of an older version during an upgrade too. The trigger
 * is a deferred constraint trigger: it runs at the commit, after every other lock the transaction takes, so the
 * row's lock is held only from there to the end of the commit and two writers never wait for each other in a
 * circle. It moves the row once per transaction (a transaction-local setting remembers it), however many objects
 * the transaction writes. SQLite needs none: `pragma data_version` and the store's own count tell the same there.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await db.schema
    .createTable('objects_version')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into objects_version (id, version) values (1, 0)`.execute(db);
  await sql`
    create function objects_version_move() returns trigger language plpgsql as $$
    begin
      if coalesce(current_setting('millrace.objects_moved', true), '') <> 'on' then
        perform set_config('millrace.objects_moved', 'on', true);
        update objects_version set version = version + 1 where id = 1;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create constraint trigger objects_version_move after insert or update or delete on objects
    deferrable initially deferred for each row execute function objects_version_move()`.execute(db);
}
