import type { Kysely } from 'kysely';

/**
 * File events (docs/architecture.md §7b): a row per file an agent raised an event for, written in the transaction
 * of the raise, so that the same file (definition, process server, path, size, mtime, inode) is never raised twice,
 * whatever the agent resends after a restart or a lost connection and whichever node it reaches; and each process
 * server's watch status as its agent last reported it, for every node to show.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('file_raises')
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('process_server', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('mtime', 'bigint', (c) => c.notNull())
    .addColumn('inode', 'text', (c) => c.notNull())
    .addColumn('raise_time', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('file_raises_pk', ['definition', 'process_server', 'path', 'size', 'mtime', 'inode'])
    .execute();
  // Deleting a definition deletes its file raises with its events.
  await db.schema.createIndex('file_raises_definition').on('file_raises').column('definition').execute();
  await db.schema
    .createTable('file_watch_status')
    .addColumn('process_server', 'text', (c) => c.primaryKey())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
