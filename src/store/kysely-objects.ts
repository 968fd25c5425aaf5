// The object rows and their references (docs/architecture.md §3), apart from the store's transaction plumbing:
// one implementation for both dialects, used by KyselyStore for itself and for each of its transactions.
import { CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import type { TypeName } from '../model/fields.ts';
import { containsPattern, jsonText, likeLower, stringField } from './sql-text.ts';
import type {
  ListOptions,
  ObjectChange,
  ObjectRef,
  ObjectSummary,
  Protection,
  RecentListOptions,
  StoredObject,
} from './store.ts';
import type { ObjectRowCache } from './object-row-cache.ts';
import { PREPARED } from './pg-prepared.ts';
import { columnList, type Database, everyColumn } from './tables.ts';
import { takeFromSequence } from './sequences.ts';

export type ObjectRow = Database['objects'];

/** A row read for objects of type `T` (the query's `type`); its data was validated against T's fields when written. */
const toObject = <T extends TypeName>(r: ObjectRow): StoredObject<T> =>
  ({
    uniqueId: Number(r.unique_id),
    type: r.type,
    key: r.key,
    partition: r.partition,
    data: JSON.parse(r.data),
    protection: r.protection,
    creationTime: Number(r.creation_time),
    modificationTime: Number(r.modification_time),
  }) as StoredObject<T>;

/** The columns an object's read names, every one (`everyColumn`): not `select *`, for pg-prepared.ts's reason. */
const OBJECT = columnList(
  everyColumn<ObjectRow>()([
    'unique_id',
    'type',
    'key',
    'partition',
    'data',
    'protection',
    'creation_time',
    'modification_time',
  ]),
);
/** Prepared on PostgreSQL: planning it cost more than running it. */
const GET_OBJECT = {
  sqlite: `select ${OBJECT} from "objects" where "type" = ? and "key" = ?`,
  postgres: `${PREPARED}select ${OBJECT} from "objects" where "type" = $1 and "key" = $2`,
};

/** What the object rows share with the store that holds them. */
export interface ObjectRowsContext {
  /**
   * In a transaction: the object rows it read (null: none), until it writes an object. The submits sharing a
   * transaction (engine/group-commit.ts) read the same definition and queue; each caller still gets its own copy.
   */
  readRows: Map<string, ObjectRow | null> | undefined;
  /** Told of every write: it counts writes for the read cache and forgets `readRows`. */
  wrote: () => void;
  /** Told of every write with what changed, for the commit listener. */
  watch: (change: ObjectChange) => void;
  /** PostgreSQL: the rows kept across transactions (object-row-cache.ts), shared by a store and its transactions. */
  kept?: ObjectRowCache;
}

/** Objects and their references in one Kysely database or transaction. */
export class KyselyObjects {
  private readonly db: Kysely<Database>;
  private readonly dialect: 'sqlite' | 'postgres';
  private readonly readRows: ObjectRowsContext['readRows'];
  private readonly wrote: () => void;
  private readonly watch: (change: ObjectChange) => void;
  private readonly kept: ObjectRowCache | undefined;
  /** In a transaction: the objects version it read first, while it has written no object (object-row-cache.ts). */
  private known: number | undefined;
  /** This transaction wrote an object: from then on it reads its own rows, never the kept ones. */
  private wroteAny = false;

  constructor(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', context: ObjectRowsContext) {
    this.db = db;
    this.dialect = dialect;
    this.readRows = context.readRows;
    this.wrote = context.wrote;
    this.watch = context.watch;
    this.kept = context.kept;
  }

  /** An object written: this transaction's later reads must see its own writes, not rows kept for others. */
  private wroteHere(): void {
    this.wroteAny = true;
    this.known = undefined;
    this.wrote();
  }

  /** PostgreSQL's objects version (migration 0020; Store.objectsVersion), learned when read in a transaction. */
  async objectsVersion(): Promise<string | undefined> {
    if (this.dialect !== 'postgres') return undefined;
    const read = await this.db.executeQuery<{ version: string | number }>(
      CompiledQuery.raw(`${PREPARED}select "version" from "objects_version" where "id" = $1`, [1]),
    );
    const row = read.rows[0];
    if (row === undefined) return undefined;
    this.learn(String(row.version));
    return String(row.version);
  }

  /** The objects version this transaction read (also with a group's job ids): its reads by key may use `kept`. */
  learn(version: string): void {
    if (this.readRows && this.kept && !this.wroteAny) this.known ??= Number(version);
  }

  async countObjectsByField(type: TypeName, field: string): Promise<{ value: string | null; count: number }[]> {
    // A literal, not a parameter: PostgreSQL groups by an expression only when it is the selected one verbatim.
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(field)) throw new Error(`not a field name: ${field}`);
    const value =
      this.dialect === 'postgres'
        ? sql<string | null>`(data::jsonb ->> ${sql.lit(field)})`
        : sql<string | null>`json_extract(data, ${sql.lit(`$.${field}`)})`;
    const rows = await this.db
      .selectFrom('objects')
      .select([value.as('value'), sql<number>`count(*)`.as('n')])
      .where('type', '=', type)
      .groupBy(value)
      .execute();
    return rows.map((r) => ({ value: r.value === null ? null : String(r.value), count: Number(r.n) }));
  }

  nextUniqueIds(count: number): Promise<number[]> {
    return takeFromSequence(this.db, this.dialect, 'unique_id', count);
  }

  async getObject<T extends TypeName>(type: T, key: string): Promise<StoredObject<T> | undefined> {
    const id = `${type}\0${key}`;
    let row = this.readRows?.get(id);
    if (row === undefined) {
      const known = this.known;
      row = known === undefined ? undefined : this.kept?.get(known, id);
      if (row === undefined) {
        const query = CompiledQuery.raw(GET_OBJECT[this.dialect], [type, key]);
        row = (await this.db.executeQuery<ObjectRow>(query)).rows[0] ?? null;
        if (known !== undefined) this.kept?.set(known, id, row);
      }
      this.readRows?.set(id, row);
    }
    return row ? toObject<T>(row) : undefined;
  }

  async listObjects<T extends TypeName>(type: T, options: ListOptions): Promise<StoredObject<T>[]> {
    let q = this.db.selectFrom('objects').selectAll().where('type', '=', type);
    if (options.partitions?.length === 0) return [];
    if (options.partition !== undefined) q = q.where('partition', '=', options.partition);
    if (options.partitions !== undefined) q = q.where('partition', 'in', [...options.partitions]);
    if (options.afterKey !== undefined) q = q.where('key', '>', options.afterKey);
    if (options.search !== undefined) {
      const pattern = containsPattern(options.search);
      const description = jsonText(this.dialect, 'Description');
      q = q.where(({ or }) =>
        or([likeLower(sql`key`, pattern), likeLower(sql`coalesce(${description}, '')`, pattern)]),
      );
    }
    const rows = await q.orderBy('key').limit(options.limit).execute();
    return rows.map((r) => toObject<T>(r));
  }

  async listObjectSummaries(
    type: TypeName,
    options: Pick<ListOptions, 'partitions' | 'afterKey' | 'limit'>,
  ): Promise<ObjectSummary[]> {
    if (options.partitions?.length === 0) return [];
    let q = this.db
      .selectFrom('objects')
      .select(['key', 'partition', 'protection', stringField(this.dialect, 'Description').as('description')])
      .where('type', '=', type);
    if (options.partitions !== undefined) q = q.where('partition', 'in', [...options.partitions]);
    if (options.afterKey !== undefined) q = q.where('key', '>', options.afterKey);
    const rows = await q.orderBy('key').limit(options.limit).execute();
    return rows.map((r) => ({
      key: r.key,
      partition: r.partition,
      protection: r.protection,
      description: r.description ?? null,
    }));
  }

  async listRecentObjects<T extends TypeName>(type: T, options: RecentListOptions): Promise<StoredObject<T>[]> {
    if (options.partitions?.length === 0) return [];
    let q = this.db.selectFrom('objects').selectAll().where('type', '=', type);
    if (options.partitions !== undefined) q = q.where('partition', 'in', [...options.partitions]);
    if (options.beforeId !== undefined) q = q.where('unique_id', '<', options.beforeId);
    for (const { field, values } of options.fieldIn ?? []) {
      if (values.length === 0) return [];
      q = q.where(jsonText(this.dialect, field), 'in', [...values]);
    }
    if (options.participant) q = q.where(this.participates(options.participant.user, options.participant.roles));
    const rows = await q.orderBy('unique_id', 'desc').limit(options.limit).execute();
    return rows.map((r) => toObject<T>(r));
  }

  /**
   * `Participants` (a JSON list) names `user`, or `role:<r>` (any case of `role:`) for one of `roles`; or so does
   * the `Delegate` of an item of `Delegates` (a user message delegated to the caller).
   */
  private participates(user: string, roles: readonly string[]) {
    const names = (v: RawBuilder<unknown>) =>
      roles.length === 0
        ? sql`${v} = ${user}`
        : sql`(${v} = ${user} or (lower(substr(${v}, 1, 5)) = 'role:' and substr(${v}, 6) in (${sql.join(roles.map((r) => sql`${r}`))})))`;
    if (this.dialect === 'postgres') {
      const list = (name: string) =>
        sql`case when jsonb_typeof(objects.data::jsonb -> ${sql.lit(name)}) = 'array' then objects.data::jsonb -> ${sql.lit(name)} else '[]'::jsonb end`;
      return sql<boolean>`(exists (select 1 from jsonb_array_elements_text(${list('Participants')}) as p(v) where ${names(sql`p.v`)}) or exists (select 1 from jsonb_array_elements(${list('Delegates')}) as d(v) where ${names(sql`(d.v ->> 'Delegate')`)}))`;
    }
    return sql<boolean>`(exists (select 1 from json_each(objects.data, '$.Participants') as p where ${names(sql`p.value`)}) or exists (select 1 from json_each(objects.data, '$.Delegates') as d where ${names(sql`json_extract(d.value, '$.Delegate')`)}))`;
  }

  private async writeRefs(fromId: number, refs: ObjectRef[]): Promise<void> {
    await this.db.deleteFrom('object_refs').where('from_id', '=', fromId).execute();
    if (refs.length > 0)
      await this.db
        .insertInto('object_refs')
        .values(refs.map((r) => ({ from_id: fromId, path: r.path, to_id: r.toId })))
        .execute();
  }

  async insertObject(object: StoredObject, refs: ObjectRef[]): Promise<void> {
    await this.db
      .insertInto('objects')
      .values({
        unique_id: object.uniqueId,
        type: object.type,
        key: object.key,
        partition: object.partition,
        data: JSON.stringify(object.data),
        protection: object.protection,
        creation_time: object.creationTime,
        modification_time: object.modificationTime,
      })
      .execute();
    await this.writeRefs(object.uniqueId, refs);
    this.wroteHere();
    this.watch({ type: object.type, key: object.key, partition: object.partition, data: object.data, created: true });
  }

  async updateObject(object: StoredObject, refs: ObjectRef[]): Promise<void> {
    await this.db
      .updateTable('objects')
      .set({
        data: JSON.stringify(object.data),
        protection: object.protection,
        modification_time: object.modificationTime,
      })
      .where('unique_id', '=', object.uniqueId)
      .execute();
    await this.writeRefs(object.uniqueId, refs);
    this.wroteHere();
    this.watch({ type: object.type, key: object.key, partition: object.partition, data: object.data, created: false });
  }

  async patchObjectData(uniqueId: number, data: Record<string, unknown>): Promise<void> {
    const row = await this.db
      .updateTable('objects')
      .set({ data: JSON.stringify(data) })
      .where('unique_id', '=', uniqueId)
      .returning(['type', 'key', 'partition'])
      .executeTakeFirst();
    this.wroteHere();
    if (row) this.watch({ type: row.type, key: row.key, partition: row.partition, data, created: false });
  }

  async setProtection(uniqueId: number, protection: Protection | null): Promise<void> {
    await this.db.updateTable('objects').set({ protection }).where('unique_id', '=', uniqueId).execute();
    this.wroteHere();
  }

  async deleteObject(uniqueId: number): Promise<void> {
    await this.db.deleteFrom('object_refs').where('from_id', '=', uniqueId).execute();
    await this.db.deleteFrom('objects').where('unique_id', '=', uniqueId).execute();
    this.wroteHere();
  }

  async findReferrer(uniqueId: number): Promise<{ type: TypeName; key: string; path: string } | undefined> {
    const row = await this.db
      .selectFrom('object_refs as r')
      .innerJoin('objects as o', 'o.unique_id', 'r.from_id')
      .select(['o.type', 'o.key', 'r.path'])
      .where('r.to_id', '=', uniqueId)
      .where('r.from_id', '<>', uniqueId)
      .orderBy('o.type')
      .orderBy('o.key')
      .limit(1)
      .executeTakeFirst();
    return row ? { type: row.type, key: row.key, path: row.path } : undefined;
  }

  async referrerKeys(uniqueId: number, type: TypeName, path: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('object_refs as r')
      .innerJoin('objects as o', 'o.unique_id', 'r.from_id')
      .select('o.key')
      .where('r.to_id', '=', uniqueId)
      .where('r.path', '=', path)
      .where('o.type', '=', type)
      .orderBy('o.key')
      .execute();
    return rows.map((r) => r.key);
  }

  async referrerKeysInList(uniqueId: number, type: TypeName, list: string, field: string): Promise<string[]> {
    // Read through object_refs_to (to_id, path): the paths of one target are few, the pattern sorts them out. '['
    // is no wildcard in LIKE on SQLite or PostgreSQL; `list` and `field` are field names (letters only).
    const rows = await this.db
      .selectFrom('object_refs as r')
      .innerJoin('objects as o', 'o.unique_id', 'r.from_id')
      .select('o.key')
      .distinct()
      .where('r.to_id', '=', uniqueId)
      .where('r.path', 'like', `${list}[%].${field}`)
      .where('o.type', '=', type)
      .orderBy('o.key')
      .execute();
    return rows.map((r) => r.key);
  }
}
