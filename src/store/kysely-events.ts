import { type Kysely, sql } from 'kysely';
import type { EventListOptions, EventRecord, EventStatus, EventStore } from './event-store.ts';
import type { Database } from './tables.ts';

type EventRow = Database['events'];

const toEvent = (r: EventRow): EventRecord => ({
  uniqueId: Number(r.unique_id),
  eventId: r.event_id,
  definition: r.definition,
  partition: r.partition,
  raiseSequence: Number(r.raise_sequence),
  status: r.status,
  raiseTime: Number(r.raise_time),
  clearTime: r.clear_time === null ? null : Number(r.clear_time),
  data: JSON.parse(r.data),
});

// Literals, not parameters: SQLite uses a partial index only when the query names the index's status itself.
const RAISED = sql.lit<EventStatus>('Raised');
const PENDING = sql.lit<EventStatus>('Pending');

/** The EventStore of one Kysely database or transaction. */
export class KyselyEventStore implements EventStore {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insert(e: EventRecord): Promise<void> {
    await this.db
      .insertInto('events')
      .values({
        unique_id: e.uniqueId,
        event_id: e.eventId,
        definition: e.definition,
        partition: e.partition,
        raise_sequence: e.raiseSequence,
        status: e.status,
        raise_time: e.raiseTime,
        clear_time: e.clearTime,
        data: JSON.stringify(e.data),
      })
      .execute();
  }

  async update(e: EventRecord): Promise<void> {
    await this.db
      .updateTable('events')
      .set({ status: e.status, clear_time: e.clearTime, data: JSON.stringify(e.data) })
      .where('unique_id', '=', e.uniqueId)
      .execute();
  }

  async get(eventId: string): Promise<EventRecord | undefined> {
    const row = await this.db.selectFrom('events').selectAll().where('event_id', '=', eventId).executeTakeFirst();
    return row ? toEvent(row) : undefined;
  }

  async raised(definition: string): Promise<EventRecord | undefined> {
    const row = await this.db
      .selectFrom('events')
      .selectAll()
      .where('definition', '=', definition)
      .where('status', '=', RAISED)
      .executeTakeFirst();
    return row ? toEvent(row) : undefined;
  }

  async pending(definition: string, limit: number): Promise<EventRecord[]> {
    const rows = await this.db
      .selectFrom('events')
      .selectAll()
      .where('definition', '=', definition)
      .where('status', '=', PENDING)
      .orderBy('raise_sequence')
      .limit(limit)
      .execute();
    return rows.map(toEvent);
  }

  async maxSequence(definition: string): Promise<number> {
    const row = await this.db
      .selectFrom('events')
      .select(sql<number | null>`max(raise_sequence)`.as('m'))
      .where('definition', '=', definition)
      .executeTakeFirst();
    const kept = row?.m === null || row?.m === undefined ? 0 : Number(row.m);
    return Math.max(kept, await this.deletedSequence(definition));
  }

  /** The highest RaiseSequence of the definition's deleted events, 0 when none was deleted. */
  private async deletedSequence(definition: string): Promise<number> {
    const row = await this.db
      .selectFrom('event_sequences')
      .select('last_sequence')
      .where('definition', '=', definition)
      .executeTakeFirst();
    return row ? Number(row.last_sequence) : 0;
  }

  async takenIds(eventIds: readonly string[]): Promise<string[]> {
    if (eventIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('events')
      .select('event_id')
      .where('event_id', 'in', [...eventIds])
      .execute();
    return rows.map((r) => r.event_id);
  }

  async anyLive(definition: string): Promise<EventRecord | undefined> {
    return (await this.raised(definition)) ?? (await this.pending(definition, 1))[0];
  }

  async list(o: EventListOptions): Promise<EventRecord[]> {
    if (o.partitions?.length === 0 || o.statuses?.length === 0) return [];
    let q = this.db.selectFrom('events').selectAll();
    if (o.partitions !== undefined) q = q.where('partition', 'in', [...o.partitions]);
    if (o.definition !== undefined) q = q.where('definition', '=', o.definition);
    if (o.statuses !== undefined) q = q.where('status', 'in', [...o.statuses]);
    if (o.since !== undefined) q = q.where('raise_time', '>=', o.since);
    if (o.beforeId !== undefined) q = q.where('unique_id', '<', o.beforeId);
    const rows = await q.orderBy('unique_id', 'desc').limit(o.limit).execute();
    return rows.map(toEvent);
  }

  async delete(uniqueId: number): Promise<void> {
    const row = await this.db
      .deleteFrom('events')
      .where('unique_id', '=', uniqueId)
      .returning(['definition', 'raise_sequence'])
      .executeTakeFirst();
    if (!row) return;
    // One statement, so two nodes deleting events of one definition at once both keep the higher sequence.
    await this.db
      .insertInto('event_sequences')
      .values({ definition: row.definition, last_sequence: Number(row.raise_sequence) })
      .onConflict((oc) =>
        oc.column('definition').doUpdateSet({
          last_sequence: sql<number>`case when excluded.last_sequence > event_sequences.last_sequence then excluded.last_sequence else event_sequences.last_sequence end`,
        }),
      )
      .execute();
  }

  async deleteOfDefinition(definition: string): Promise<void> {
    await this.db.deleteFrom('events').where('definition', '=', definition).execute();
    await this.db.deleteFrom('event_sequences').where('definition', '=', definition).execute();
  }
}
