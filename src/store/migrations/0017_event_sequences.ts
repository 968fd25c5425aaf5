import type { Kysely } from 'kysely';

/**
 * The highest RaiseSequence a definition gave to an event deleted since (`DELETE /Event/<id>`), so that deleting
 * the newest Cleared events never lets a later raise take their ids again: the next sequence is one more than the
 * highest of the events kept and of this row. Deleted with the definition's events.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_sequences')
    .addColumn('definition', 'text', (c) => c.primaryKey())
    .addColumn('last_sequence', 'integer', (c) => c.notNull())
    .execute();
}
