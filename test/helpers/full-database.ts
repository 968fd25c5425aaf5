import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Store } from '../../src/store/store.ts';
import type { Database } from '../../src/store/tables.ts';

/**
 * A database made full as on a full file system, and freed again, without needing one (docs/architecture.md §9).
 */
export interface Filler {
  fill(): Promise<void>;
  free(): Promise<void>;
}

/** SQLite: `max_page_count` set on the server's writer (statements in a transaction run there). */
export function sqliteFiller(store: Store): Filler {
  // The writer is the store's own: the setting is per connection, so no other connection can make it full.
  const db = (store as unknown as { db: Kysely<Database> }).db;
  const pragma = (text: string) => db.transaction().execute((trx) => sql.raw(text).execute(trx));
  return {
    // A limit below the current size is taken as the current size: the file can no longer grow.
    fill: async () => void (await pragma('pragma max_page_count = 1')),
    free: async () => void (await pragma('pragma max_page_count = 1073741823')),
  };
}

/** PostgreSQL: inserts and updates of the tables writes grow refused with SQLSTATE 53100 by PostgreSQL itself. */
export function postgresFiller(url: string): Filler {
  const tables = ['jobs', 'job_history', 'objects', 'meta', 'job_file_chunks'];
  const exec = async (text: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  return {
    fill: () =>
      exec(
        `create function test_disk_full() returns trigger language plpgsql as $$ begin
           raise exception 'could not extend file: No space left on device' using errcode = 'disk_full'; end $$;
         ${tables.map((t) => `create trigger test_disk_full before insert or update on ${t} for each statement execute function test_disk_full();`).join('\n')}`,
      ),
    free: () => exec('drop function test_disk_full() cascade'),
  };
}
