import { type Kysely, sql } from 'kysely';

/**
 * Events: the raises of event definitions. `events_raised` is unique, so a definition never has two Raised
 * events whatever the writers do; it and `events_pending` hold only the rows of their status (their queries name
 * it as a literal, see 0003_job_indexes.ts), since nearly every event ends up Cleared. `events_definition` answers the next
 * RaiseSequence and deletes a definition's history.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('unique_id', 'bigint', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull().unique())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('partition', 'text', (c) => c.notNull())
    .addColumn('raise_sequence', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('raise_time', 'bigint', (c) => c.notNull())
    .addColumn('clear_time', 'bigint')
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('events_raised')
    .on('events')
    .column('definition')
    .unique()
    .where(sql<boolean>`status = 'Raised'`)
    .execute();
  await db.schema
    .createIndex('events_pending')
    .on('events')
    .columns(['definition', 'raise_sequence'])
    .where(sql<boolean>`status = 'Pending'`)
    .execute();
  await db.schema.createIndex('events_definition').on('events').columns(['definition', 'raise_sequence']).execute();
}
