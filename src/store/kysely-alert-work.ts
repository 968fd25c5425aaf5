import { type Kysely, sql } from 'kysely';
import type { AlertWorkItem, AlertWorkKind, AlertWorkStore } from './alert-work-store.ts';
import type { Database } from './tables.ts';

type Row = Database['alert_work'];

// A literal, not a parameter: SQLite uses the partial index only when the query names its state itself.
const PENDING = sql.lit<AlertWorkItem['state']>('pending');

const toItem = (r: Row): AlertWorkItem => ({
  id: Number(r.id),
  kind: r.kind,
  dueAt: Number(r.due_at),
  alertId: r.alert_id === null ? null : Number(r.alert_id),
  attempts: Number(r.attempts),
  state: r.state,
  lastError: r.last_error,
  data: JSON.parse(r.data),
});

/** The AlertWorkStore of one Kysely database or transaction. */
export class KyselyAlertWorkStore implements AlertWorkStore {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async add(items: ReadonlyArray<Omit<AlertWorkItem, 'attempts' | 'state' | 'lastError'>>): Promise<void> {
    if (items.length === 0) return;
    await this.db
      .insertInto('alert_work')
      .values(
        items.map((i) => ({
          id: i.id,
          kind: i.kind,
          due_at: i.dueAt,
          alert_id: i.alertId,
          attempts: 0,
          state: 'pending',
          last_error: null,
          data: JSON.stringify(i.data),
        })),
      )
      .execute();
  }

  async due(now: number, limit: number): Promise<AlertWorkItem[]> {
    const rows = await this.db
      .selectFrom('alert_work')
      .selectAll()
      .where('state', '=', PENDING)
      .where('due_at', '<=', now)
      .orderBy('due_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toItem);
  }

  async nextDue(): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('alert_work')
      .select('due_at')
      .where('state', '=', PENDING)
      .orderBy('due_at')
      .limit(1)
      .executeTakeFirst();
    return row ? Number(row.due_at) : undefined;
  }

  async update(item: AlertWorkItem): Promise<void> {
    // Done and canceled work is of no further use; failed deliveries stay, with their last error, for inspection.
    if (item.state === 'done' || item.state === 'canceled') {
      await this.db.deleteFrom('alert_work').where('id', '=', item.id).execute();
      return;
    }
    await this.db
      .updateTable('alert_work')
      .set({ state: item.state, due_at: item.dueAt, attempts: item.attempts, last_error: item.lastError })
      .where('id', '=', item.id)
      .execute();
  }

  async ofAlert(alertId: number, kind?: AlertWorkKind): Promise<AlertWorkItem[]> {
    let q = this.db.selectFrom('alert_work').selectAll().where('alert_id', '=', alertId).where('state', '=', PENDING);
    if (kind) q = q.where('kind', '=', kind);
    return (await q.orderBy('id').execute()).map(toItem);
  }
}
