import { randomBytes } from 'node:crypto';
import { CompiledQuery, type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { TypeName } from '../model/fields.ts';
import type { EventStore } from './event-store.ts';
import type { AlertWorkStore } from './alert-work-store.ts';
import type { JobStore, StatusChange } from './job-store.ts';
import { KyselyAlertWorkStore } from './kysely-alert-work.ts';
import type { ClusterStore, JobFileChunkStore } from './cluster-store.ts';
import { KyselyJobFileChunks } from './kysely-job-file-chunks.ts';
import type { AuthFailureStore } from './auth-failure-store.ts';
import { KyselyAuthFailures } from './kysely-auth-failures.ts';
import { KyselyRuntimeStats } from './kysely-runtime-stats.ts';
import { finishedRuns, type RuntimeStatsStore } from './runtime-stats-store.ts';
import { KyselyClusterStore } from './kysely-cluster.ts';
import { KyselyBlobStore } from './kysely-blobs.ts';
import type { BlobStore } from './blob-store.ts';
import { KyselyEventStore } from './kysely-events.ts';
import { ChainStructureCache } from './kysely-chain-structures.ts';
import { KyselyJobStore } from './kysely-jobs.ts';
import type { Database } from './tables.ts';
import { containsPattern, jsonText, likeLower, stringField } from './sql-text.ts';
import type {
  ApiKey,
  CommitListener,
  ObjectChange,
  ListOptions,
  ObjectSummary,
  ObjectRef,
  Channel,
  PoolStats,
  Protection,
  RecentListOptions,
  Role,
  StatusChangeHook,
  Store,
  StoredObject,
  User,
} from './store.ts';

type ObjectRow = Database['objects'];

/** Run for every submit: SQL text, as the job statements (kysely-job-statements.ts). SQLite's ids come from a row. */
const NEXT_UNIQUE_IDS = `update "sequences" set "value" = "value" + ? where "name" = 'unique_id' returning "value"`;
const GET_OBJECT = {
  sqlite: 'select * from "objects" where "type" = ? and "key" = ?',
  postgres: 'select * from "objects" where "type" = $1 and "key" = $2',
};

const toObject = (r: ObjectRow): StoredObject => ({
  uniqueId: Number(r.unique_id),
  type: r.type as TypeName,
  key: r.key,
  partition: r.partition,
  data: JSON.parse(r.data) as Record<string, unknown>,
  protection: r.protection as Protection | null,
  creationTime: Number(r.creation_time),
  modificationTime: Number(r.modification_time),
});

const toUser = (r: Database['users']): User => ({
  name: r.name,
  passwordHash: r.password_hash,
  roles: JSON.parse(r.roles) as string[],
  disabled: Number(r.disabled) !== 0,
  creationTime: Number(r.creation_time),
});

const toRole = (r: Database['roles']): Role => ({
  name: r.name,
  description: r.description,
  grants: JSON.parse(r.grants) as Role['grants'],
  builtin: Number(r.builtin) !== 0,
});

const toApiKey = (r: Database['api_keys']): ApiKey => ({
  id: r.id,
  userName: r.user_name,
  keyHash: r.key_hash,
  description: r.description,
  creationTime: Number(r.creation_time),
  expiryTime: Number(r.expiry_time),
  lastUsedTime: r.last_used_time === null ? null : Number(r.last_used_time),
  revokedTime: r.revoked_time === null ? null : Number(r.revoked_time),
});

/**
 * Shared by a store and its transactions: counts committed object writes for `dataVersion`, and holds the hook
 * that sees each transaction's job status changes before it commits.
 */
interface WriteCounter {
  writes: number;
  beforeCommit?: StatusChangeHook;
  afterCommit?: CommitListener;
  watched?: ReadonlySet<TypeName>;
  /** Metrics: every committed transaction's job status changes, and each transaction's duration. */
  committedStatus?: (changes: readonly StatusChange[]) => void;
  transactionEnd?: (ms: number, committed: boolean) => void;
}

/**
 * Whether a transaction wrote object rows (only those change what the object read cache holds), and the writes
 * to watched objects, told to the commit listener once committed.
 */
interface TxState {
  wroteObjects: boolean;
  objects: ObjectChange[];
}

export interface KyselyStoreOptions {
  onClose?: () => Promise<void>;
  /** SQLite's `PRAGMA data_version`: changes when another connection commits. */
  externalVersion?: () => number;
  /** Migrations not yet run (see Store.pendingMigrations). */
  pendingMigrations?: () => Promise<string[]>;
  poolStats?: () => PoolStats;
  /** PostgreSQL: a new LISTEN/NOTIFY channel. */
  openChannel?: () => Channel;
  /** False: finished jobs are not added to the runtime statistics (benchmarking their cost). */
  runtimeStatistics?: boolean;
}

/** One implementation for both dialects; a transaction is the same class over a Kysely Transaction. */
export class KyselyStore implements Store {
  readonly dialect: 'sqlite' | 'postgres';
  private readonly db: Kysely<Database>;
  private readonly inTransaction: boolean;
  private readonly options: KyselyStoreOptions;
  private readonly counter: WriteCounter;
  private readonly txState: TxState | undefined;
  /**
   * In a transaction: the object rows it read (null: none), until it writes an object. The submits sharing a
   * transaction (engine/group-commit.ts) read the same definition and queue; each caller still gets its own copy.
   */
  private readonly objectRows: Map<string, ObjectRow | null> | undefined;
  /** Chain structures read lately (shared with this store's transactions). */
  private readonly structures: ChainStructureCache;
  /** Jobs and job files, in the same database (and transaction) as this store. */
  readonly jobs: JobStore;
  /** Events, in the same database (and transaction) as this store. */
  readonly events: EventStore;
  readonly alertWork: AlertWorkStore;
  readonly blobs: BlobStore;
  readonly cluster: ClusterStore;
  readonly jobFileChunks: JobFileChunkStore;
  readonly authFailures: AuthFailureStore;
  readonly runtimeStats: RuntimeStatsStore;

  constructor(
    db: Kysely<Database>,
    dialect: 'sqlite' | 'postgres',
    options: KyselyStoreOptions = {},
    txState?: TxState,
    counter: WriteCounter = { writes: 0 },
    structures = new ChainStructureCache(),
  ) {
    this.db = db;
    this.dialect = dialect;
    this.options = options;
    this.inTransaction = txState !== undefined;
    this.txState = txState;
    this.objectRows = txState ? new Map() : undefined;
    this.counter = counter;
    // Job writes do not touch object rows, so they leave the object read cache valid.
    this.structures = structures;
    this.jobs = new KyselyJobStore(db, dialect, () => {}, txState !== undefined, structures);
    this.events = new KyselyEventStore(db);
    this.alertWork = new KyselyAlertWorkStore(db);
    this.cluster = new KyselyClusterStore(db, dialect);
    this.jobFileChunks = new KyselyJobFileChunks(db);
    this.authFailures = new KyselyAuthFailures(db);
    this.runtimeStats = new KyselyRuntimeStats(db, dialect);
    this.blobs = new KyselyBlobStore(db, () => this.wrote());
  }

  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    const state: TxState = { wroteObjects: false, objects: [] };
    const listener = this.counter.afterCommit;
    const jobs: StatusChange[] = [];
    const started = performance.now();
    let committed = false;
    const statusListener = this.counter.committedStatus;
    const statistics = this.options.runtimeStatistics !== false;
    try {
      const result = await this.db.transaction().execute(async (trx: Transaction<Database>) => {
        const tx = new KyselyStore(trx, this.dialect, {}, state, this.counter, this.structures);
        const result = await fn(tx);
        const hook = this.counter.beforeCommit;
        // The hook's own writes (alerts, their jobs' notes) may change statuses again: until none is left.
        for (let changes = tx.jobs.takeStatusChanges(); changes.length > 0; changes = tx.jobs.takeStatusChanges()) {
          await tx.jobs.insertHistory(changes.map((c) => ({ jobId: c.job.jobId, entry: c.entry })));
          // The runs these changes finished join their definitions' statistics in the same transaction (§8b).
          if (statistics) await tx.runtimeStats.record(finishedRuns(changes));
          if (listener || statusListener) for (const c of changes) jobs.push(c);
          if (hook) await hook(tx, changes);
        }
        return result;
      });
      committed = true;
      if (listener && (jobs.length > 0 || state.objects.length > 0)) listener({ jobs, objects: state.objects });
      if (statusListener && jobs.length > 0) statusListener(jobs);
      return result;
    } finally {
      // Counted after the commit (or rollback), never before: a reader that saw the old token cannot have
      // cached data newer than it, and one that cached older data under the old token misses next time.
      if (state.wroteObjects) this.counter.writes += 1;
      this.counter.transactionEnd?.(performance.now() - started, committed);
    }
  }

  onStatusChanges(hook: StatusChangeHook | undefined): void {
    this.counter.beforeCommit = hook;
  }

  async pendingMigrations(): Promise<string[]> {
    const pending = this.options.pendingMigrations;
    if (!pending) throw new Error('pendingMigrations is asked of the store, not of a transaction');
    return pending();
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

  openChannel(): Channel | undefined {
    return this.options.openChannel?.();
  }

  poolStats(): PoolStats | undefined {
    return this.options.poolStats?.();
  }

  onCommittedStatusChanges(listener: ((changes: readonly StatusChange[]) => void) | undefined): void {
    this.counter.committedStatus = listener;
  }

  onTransactionEnd(listener: ((ms: number, committed: boolean) => void) | undefined): void {
    this.counter.transactionEnd = listener;
  }

  onCommit(listener: CommitListener | undefined, objectTypes?: ReadonlySet<TypeName>): void {
    this.counter.afterCommit = listener;
    this.counter.watched = listener ? objectTypes : undefined;
  }

  /** A write to an object of a watched type: told after the commit, or at once outside a transaction. */
  private watch(change: ObjectChange): void {
    if (!this.counter.watched?.has(change.type)) return;
    if (this.txState) this.txState.objects.push(change);
    else this.counter.afterCommit?.({ jobs: [], objects: [change] });
  }

  dataVersion(): string | undefined {
    const external = this.options.externalVersion;
    return external ? `${this.counter.writes}:${external()}` : undefined;
  }

  /** Outside a transaction every write commits at once; inside one, `transaction` counts it at the end. */
  private wrote(): void {
    this.objectRows?.clear();
    if (this.txState) this.txState.wroteObjects = true;
    else this.counter.writes += 1;
  }

  async nextUniqueIds(count: number): Promise<number[]> {
    if (count < 1) return [];
    if (this.dialect === 'postgres') {
      const r = await sql<{
        id: number;
      }>`select nextval('unique_id_seq') as id from generate_series(1, ${count})`.execute(this.db);
      return r.rows.map((row) => Number(row.id));
    }
    const query = CompiledQuery.raw(NEXT_UNIQUE_IDS, [count]);
    const row = (await this.db.executeQuery<{ value: number }>(query)).rows[0];
    if (!row) throw new Error('the unique_id sequence is missing');
    const last = Number(row.value);
    return Array.from({ length: count }, (_, i) => last - count + 1 + i);
  }

  async getObject(type: TypeName, key: string): Promise<StoredObject | undefined> {
    const id = `${type}\0${key}`;
    let row = this.objectRows?.get(id);
    if (row === undefined) {
      const query = CompiledQuery.raw(GET_OBJECT[this.dialect], [type, key]);
      row = (await this.db.executeQuery<ObjectRow>(query)).rows[0] ?? null;
      this.objectRows?.set(id, row);
    }
    return row ? toObject(row) : undefined;
  }

  async listObjects(type: TypeName, options: ListOptions): Promise<StoredObject[]> {
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
    return rows.map(toObject);
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
      protection: r.protection as Protection | null,
      description: r.description ?? null,
    }));
  }

  async listRecentObjects(type: TypeName, o: RecentListOptions): Promise<StoredObject[]> {
    if (o.partitions?.length === 0) return [];
    let q = this.db.selectFrom('objects').selectAll().where('type', '=', type);
    if (o.partitions !== undefined) q = q.where('partition', 'in', [...o.partitions]);
    if (o.beforeId !== undefined) q = q.where('unique_id', '<', o.beforeId);
    for (const { field, values } of o.fieldIn ?? []) {
      if (values.length === 0) return [];
      q = q.where(jsonText(this.dialect, field), 'in', [...values]);
    }
    if (o.participant) q = q.where(this.participates(o.participant.user, o.participant.roles));
    const rows = await q.orderBy('unique_id', 'desc').limit(o.limit).execute();
    return rows.map(toObject);
  }

  /** `Participants` (a JSON list) names `user`, or `role:<r>` (any case of `role:`) for one of `roles`. */
  private participates(user: string, roles: readonly string[]) {
    const role = (v: RawBuilder<unknown>) =>
      roles.length === 0
        ? sql``
        : sql` or (lower(substr(${v}, 1, 5)) = 'role:' and substr(${v}, 6) in (${sql.join(roles.map((r) => sql`${r}`))}))`;
    if (this.dialect === 'postgres') {
      const v = sql`p.v`;
      return sql<boolean>`exists (select 1 from jsonb_array_elements_text(case when jsonb_typeof(objects.data::jsonb -> 'Participants') = 'array' then objects.data::jsonb -> 'Participants' else '[]'::jsonb end) as p(v) where ${v} = ${user}${role(v)})`;
    }
    const v = sql`p.value`;
    return sql<boolean>`exists (select 1 from json_each(objects.data, '$.Participants') as p where ${v} = ${user}${role(v)})`;
  }

  private async writeRefs(fromId: number, refs: ObjectRef[]): Promise<void> {
    await this.db.deleteFrom('object_refs').where('from_id', '=', fromId).execute();
    if (refs.length > 0)
      await this.db
        .insertInto('object_refs')
        .values(refs.map((r) => ({ from_id: fromId, path: r.path, to_id: r.toId })))
        .execute();
  }

  async insertObject(o: StoredObject, refs: ObjectRef[]): Promise<void> {
    await this.db
      .insertInto('objects')
      .values({
        unique_id: o.uniqueId,
        type: o.type,
        key: o.key,
        partition: o.partition,
        data: JSON.stringify(o.data),
        protection: o.protection,
        creation_time: o.creationTime,
        modification_time: o.modificationTime,
      })
      .execute();
    await this.writeRefs(o.uniqueId, refs);
    this.wrote();
    this.watch({ type: o.type, key: o.key, partition: o.partition, data: o.data, created: true });
  }

  async updateObject(o: StoredObject, refs: ObjectRef[]): Promise<void> {
    await this.db
      .updateTable('objects')
      .set({ data: JSON.stringify(o.data), protection: o.protection, modification_time: o.modificationTime })
      .where('unique_id', '=', o.uniqueId)
      .execute();
    await this.writeRefs(o.uniqueId, refs);
    this.wrote();
    this.watch({ type: o.type, key: o.key, partition: o.partition, data: o.data, created: false });
  }

  async patchObjectData(uniqueId: number, data: Record<string, unknown>): Promise<void> {
    const row = await this.db
      .updateTable('objects')
      .set({ data: JSON.stringify(data) })
      .where('unique_id', '=', uniqueId)
      .returning(['type', 'key', 'partition'])
      .executeTakeFirst();
    this.wrote();
    if (row) this.watch({ type: row.type as TypeName, key: row.key, partition: row.partition, data, created: false });
  }

  async setProtection(uniqueId: number, protection: Protection | null): Promise<void> {
    await this.db.updateTable('objects').set({ protection }).where('unique_id', '=', uniqueId).execute();
    this.wrote();
  }

  async deleteObject(uniqueId: number): Promise<void> {
    await this.db.deleteFrom('object_refs').where('from_id', '=', uniqueId).execute();
    await this.db.deleteFrom('objects').where('unique_id', '=', uniqueId).execute();
    this.wrote();
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
    return row ? { type: row.type as TypeName, key: row.key, path: row.path } : undefined;
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

  async getUser(name: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toUser(row) : undefined;
  }

  async listUsers(): Promise<User[]> {
    return (await this.db.selectFrom('users').selectAll().orderBy('name').execute()).map(toUser);
  }

  async upsertUser(u: User): Promise<void> {
    const values = {
      name: u.name,
      password_hash: u.passwordHash,
      roles: JSON.stringify(u.roles),
      disabled: u.disabled ? 1 : 0,
      creation_time: u.creationTime,
    };
    await this.db
      .insertInto('users')
      .values(values)
      .onConflict((oc) =>
        oc.column('name').doUpdateSet({
          password_hash: values.password_hash,
          roles: values.roles,
          disabled: values.disabled,
        }),
      )
      .execute();
  }

  async getRole(name: string): Promise<Role | undefined> {
    const row = await this.db.selectFrom('roles').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toRole(row) : undefined;
  }

  async listRoles(): Promise<Role[]> {
    return (await this.db.selectFrom('roles').selectAll().orderBy('name').execute()).map(toRole);
  }

  async upsertRole(r: Role): Promise<void> {
    const values = {
      name: r.name,
      description: r.description,
      grants: JSON.stringify(r.grants),
      builtin: r.builtin ? 1 : 0,
    };
    await this.db
      .insertInto('roles')
      .values(values)
      .onConflict((oc) => oc.column('name').doUpdateSet({ description: values.description, grants: values.grants }))
      .execute();
  }

  async deleteRole(name: string): Promise<void> {
    await this.db.deleteFrom('roles').where('name', '=', name).execute();
  }

  async getApiKeyByHash(keyHash: string): Promise<ApiKey | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    return row ? toApiKey(row) : undefined;
  }

  async listApiKeys(userName?: string): Promise<ApiKey[]> {
    let q = this.db.selectFrom('api_keys').selectAll();
    if (userName !== undefined) q = q.where('user_name', '=', userName);
    return (await q.orderBy('creation_time').orderBy('id').execute()).map(toApiKey);
  }

  async insertApiKey(k: ApiKey): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({
        id: k.id,
        user_name: k.userName,
        key_hash: k.keyHash,
        description: k.description,
        creation_time: k.creationTime,
        expiry_time: k.expiryTime,
        last_used_time: k.lastUsedTime,
        revoked_time: k.revokedTime,
      })
      .execute();
  }

  async revokeApiKey(id: string, at: number): Promise<boolean> {
    const r = await this.db
      .updateTable('api_keys')
      .set({ revoked_time: at })
      .where('id', '=', id)
      .where('revoked_time', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async touchApiKeys(uses: ReadonlyArray<{ id: string; at: number }>): Promise<void> {
    if (uses.length === 0) return;
    await this.transaction(async (tx) => {
      const db = (tx as KyselyStore).db;
      for (const u of uses)
        await db.updateTable('api_keys').set({ last_used_time: u.at }).where('id', '=', u.id).execute();
    });
  }

  async getMeta(name: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('meta').select('value').where('name', '=', name).executeTakeFirst();
    return row?.value;
  }

  async setMeta(name: string, value: string): Promise<void> {
    await this.db
      .insertInto('meta')
      .values({ name, value })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
      .execute();
  }

  async probeSpace(): Promise<void> {
    // Random text, which neither dialect can store in less room; the row never commits.
    const value = randomBytes(SPACE_PROBE_BYTES * 0.75).toString('base64');
    const rollback = new Error('space probe rolled back');
    try {
      await this.db.transaction().execute(async (trx) => {
        await trx.insertInto('meta').values({ name: 'space-probe', value }).execute();
        throw rollback;
      });
    } catch (err) {
      if (err !== rollback) throw err;
    }
  }

  async close(): Promise<void> {
    await this.options.onClose?.();
  }
}

/** What the space probe writes: more than a few pages, less than a cost a readiness check would notice. */
const SPACE_PROBE_BYTES = 64 * 1024;
