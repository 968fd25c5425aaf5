import type { Kysely } from 'kysely';
import type { FileIdentity, FileWatchStore } from './file-watch-store.ts';
import type { Database } from './tables.ts';

/** The FileWatchStore of one Kysely database or transaction; the same SQL on SQLite and PostgreSQL. */
export class KyselyFileWatches implements FileWatchStore {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async claim(f: FileIdentity, now: number): Promise<boolean> {
    // The primary key decides: two nodes offered the same file at once both try, one row wins.
    const result = await this.db
      .insertInto('file_raises')
      .values({
        definition: f.definition,
        process_server: f.processServer,
        path: f.path,
        size: f.size,
        mtime: f.mtime,
        inode: f.inode,
        raise_time: now,
      })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async saveStatus(processServer: string, data: string, now: number): Promise<void> {
    await this.db
      .insertInto('file_watch_status')
      .values({ process_server: processServer, data, updated_at: now })
      .onConflict((oc) => oc.column('process_server').doUpdateSet({ data, updated_at: now }))
      .execute();
  }

  async status(processServer: string): Promise<{ data: string; updatedAt: number } | undefined> {
    const row = await this.db
      .selectFrom('file_watch_status')
      .select(['data', 'updated_at'])
      .where('process_server', '=', processServer)
      .executeTakeFirst();
    return row ? { data: row.data, updatedAt: Number(row.updated_at) } : undefined;
  }

  async deleteOfDefinition(definition: string): Promise<void> {
    await this.db.deleteFrom('file_raises').where('definition', '=', definition).execute();
  }
}
