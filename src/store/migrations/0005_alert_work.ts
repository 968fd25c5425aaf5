import { type Kysely, sql } from 'kysely';

/** Alert work (checks, escalations, deliveries) due at a time; the pending ones are read by due time. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('alert_work')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('alert_id', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('alert_work_pending')
    .on('alert_work')
    .column('due_at')
    .where(sql<boolean>`state = 'pending'`)
    .execute();
  await db.schema.createIndex('alert_work_alert').on('alert_work').column('alert_id').execute();
}
