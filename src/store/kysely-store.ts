import type { Kysely, Transaction } from 'kysely';
import type { TypeName } from '../model/fields.ts';
import type { AlertWorkStore } from './alert-work-store.ts';
import type { AuthFailureStore } from './auth-failure-store.ts';
import type { FileWatchStore } from './file-watch-store.ts';
import { KyselyFileWatches } from './kysely-file-watches.ts';
import type { AuditInput, AuditStore } from './audit-store.ts';
import { appendEntries, KyselyAudit } from './kysely-audit.ts';
import type { BlobStore } from './blob-store.ts';
import type { ClusterStore, JobFileChunkStore } from './cluster-store.ts';
import type { EventStore } from './event-store.ts';
import type { StatusChange } from './job-store.ts';
import { KyselyAccounts } from './kysely-accounts.ts';
import { KyselyAlertWorkStore } from './kysely-alert-work.ts';
import { KyselyAuthFailures } from './kysely-auth-failures.ts';
import { KyselySessions } from './kysely-sessions.ts';
import type { SessionStore } from './session-store.ts';
import { KyselyBlobStore } from './kysely-blobs.ts';
import { ChainStructureCache } from './kysely-chain-structures.ts';
import { KyselyClusterStore } from './kysely-cluster.ts';
import { KyselyEventStore } from './kysely-events.ts';
import { KyselyJobFileChunks } from './kysely-job-file-chunks.ts';
import { KyselyJobStore } from './kysely-jobs.ts';
import { KyselyObjects, type ObjectRow } from './kysely-objects.ts';
import { KyselyRuntimeStats } from './kysely-runtime-stats.ts';
import { finishedRuns, type RuntimeStatsStore } from './runtime-stats-store.ts';
import type {
  ApiKey,
  Channel,
  CommitListener,
  ListOptions,
  ObjectChange,
  ObjectRef,
  ObjectSummary,
  PoolStats,
  Protection,
  RecentListOptions,
  Role,
  StatusChangeHook,
  Store,
  StoredObject,
  User,
} from './store.ts';
import type { Database } from './tables.ts';
import * as meta from './kysely-meta.ts';
import { ObjectRowCache } from './object-row-cache.ts';

/**
 * Shared by a store and its transactions: counts committed object writes for `dataVersion`, and holds the hook
 * that sees each transaction's job status changes before it commits.
 */
interface WriteCounter {
  writes: number;
  /** PostgreSQL: object rows kept across transactions (object-row-cache.ts). */
  keptRows: ObjectRowCache;
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
  /** Audit entries added by the transaction, written last, just before it commits (docs/architecture.md §18). */
  audit: AuditInput[];
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
  /** In a transaction: the object rows it read (see ObjectRowsContext.readRows). */
  private readonly objectRows: Map<string, ObjectRow | null> | undefined;
  private readonly objects: KyselyObjects;
  private readonly accounts: KyselyAccounts;
  /** Chain structures read lately (shared with this store's transactions). */
  private readonly structures: ChainStructureCache;
  /** Jobs and job files, in the same database (and transaction) as this store. */
  readonly jobs: KyselyJobStore;
  /** Events, in the same database (and transaction) as this store. */
  readonly events: EventStore;
  readonly alertWork: AlertWorkStore;
  readonly blobs: BlobStore;
  readonly cluster: ClusterStore;
  readonly jobFileChunks: JobFileChunkStore;
  readonly authFailures: AuthFailureStore;
  readonly sessions: SessionStore;
  readonly runtimeStats: RuntimeStatsStore;
  readonly fileWatches: FileWatchStore;
  readonly audit: AuditStore;

  constructor(
    db: Kysely<Database>,
    dialect: 'sqlite' | 'postgres',
    options: KyselyStoreOptions = {},
    txState?: TxState,
    counter: WriteCounter = { writes: 0, keptRows: new ObjectRowCache() },
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
    const learn = (version: string) => this.objects.learn(version);
    this.jobs = new KyselyJobStore(db, dialect, () => {}, txState !== undefined, structures, learn);
    this.events = new KyselyEventStore(db);
    this.alertWork = new KyselyAlertWorkStore(db);
    this.cluster = new KyselyClusterStore(db, dialect);
    this.jobFileChunks = new KyselyJobFileChunks(db);
    this.authFailures = new KyselyAuthFailures(db);
    this.sessions = new KyselySessions(db);
    this.runtimeStats = new KyselyRuntimeStats(db, dialect);
    this.fileWatches = new KyselyFileWatches(db);
    this.audit = new KyselyAudit(db, txState?.audit, (entry) => this.transaction((tx) => tx.audit.add(entry)));
    this.blobs = new KyselyBlobStore(db, () => this.wrote());
    this.objects = new KyselyObjects(db, dialect, {
      readRows: this.objectRows,
      wrote: () => this.wrote(),
      watch: (change) => this.watch(change),
      kept: dialect === 'postgres' ? this.counter.keptRows : undefined,
    });
    this.accounts = new KyselyAccounts(db, dialect, (work) => this.transaction((tx) => work((tx as KyselyStore).db)));
  }

  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    const state: TxState = { wroteObjects: false, objects: [], audit: [] };
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
          // The runs these changes finished join their definitions' statistics in the same transaction (docs/architecture.md §8b).
          if (statistics) await tx.runtimeStats.record(finishedRuns(changes));
          if (listener || statusListener) for (const c of changes) jobs.push(c);
          if (hook) await hook(tx, changes);
        }
        await tx.jobs.sendHeld();
        await appendEntries(trx, this.dialect, state.audit);
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

  objectsVersion(): Promise<string | undefined> {
    return this.objects.objectsVersion();
  }

  /** Outside a transaction every write commits at once; inside one, `transaction` counts it at the end. */
  private wrote(): void {
    this.objectRows?.clear();
    if (this.txState) this.txState.wroteObjects = true;
    else this.counter.writes += 1;
  }

  // The object rows and the accounts live in their own rooms (kysely-objects.ts, kysely-accounts.ts); the Store
  // interface keeps them flat, so these only pass the call on.
  countObjectsByField(type: TypeName, field: string): Promise<{ value: string | null; count: number }[]> {
    return this.objects.countObjectsByField(type, field);
  }

  nextUniqueIds(count: number): Promise<number[]> {
    return this.objects.nextUniqueIds(count);
  }

  getObject<T extends TypeName>(type: T, key: string): Promise<StoredObject<T> | undefined> {
    return this.objects.getObject(type, key);
  }

  listObjects<T extends TypeName>(type: T, options: ListOptions): Promise<StoredObject<T>[]> {
    return this.objects.listObjects(type, options);
  }

  listObjectSummaries(
    type: TypeName,
    options: Pick<ListOptions, 'partitions' | 'afterKey' | 'limit'>,
  ): Promise<ObjectSummary[]> {
    return this.objects.listObjectSummaries(type, options);
  }

  listRecentObjects<T extends TypeName>(type: T, options: RecentListOptions): Promise<StoredObject<T>[]> {
    return this.objects.listRecentObjects(type, options);
  }

  insertObject(object: StoredObject, refs: ObjectRef[]): Promise<void> {
    return this.objects.insertObject(object, refs);
  }

  updateObject(object: StoredObject, refs: ObjectRef[]): Promise<void> {
    return this.objects.updateObject(object, refs);
  }

  patchObjectData(uniqueId: number, data: Record<string, unknown>): Promise<void> {
    return this.objects.patchObjectData(uniqueId, data);
  }

  setProtection(uniqueId: number, protection: Protection | null): Promise<void> {
    return this.objects.setProtection(uniqueId, protection);
  }

  deleteObject(uniqueId: number): Promise<void> {
    return this.objects.deleteObject(uniqueId);
  }

  findReferrer(uniqueId: number): Promise<{ type: TypeName; key: string; path: string } | undefined> {
    return this.objects.findReferrer(uniqueId);
  }

  referrerKeys(uniqueId: number, type: TypeName, path: string): Promise<string[]> {
    return this.objects.referrerKeys(uniqueId, type, path);
  }

  referrerKeysInList(uniqueId: number, type: TypeName, list: string, field: string): Promise<string[]> {
    return this.objects.referrerKeysInList(uniqueId, type, list, field);
  }

  getUser(name: string): Promise<User | undefined> {
    return this.accounts.getUser(name);
  }

  listUsers(): Promise<User[]> {
    return this.accounts.listUsers();
  }

  upsertUser(user: User): Promise<void> {
    return this.accounts.upsertUser(user);
  }

  deleteUser(name: string): Promise<void> {
    return this.accounts.deleteUser(name);
  }

  lockUsers(): Promise<void> {
    return this.accounts.lockUsers();
  }

  getRole(name: string): Promise<Role | undefined> {
    return this.accounts.getRole(name);
  }

  listRoles(): Promise<Role[]> {
    return this.accounts.listRoles();
  }

  upsertRole(role: Role): Promise<void> {
    return this.accounts.upsertRole(role);
  }

  deleteRole(name: string): Promise<void> {
    return this.accounts.deleteRole(name);
  }

  getApiKeyByHash(keyHash: string): Promise<ApiKey | undefined> {
    return this.accounts.getApiKeyByHash(keyHash);
  }

  listApiKeys(userName?: string): Promise<ApiKey[]> {
    return this.accounts.listApiKeys(userName);
  }

  insertApiKey(key: ApiKey): Promise<void> {
    return this.accounts.insertApiKey(key);
  }

  revokeApiKey(id: string, at: number): Promise<boolean> {
    return this.accounts.revokeApiKey(id, at);
  }

  touchApiKeys(uses: ReadonlyArray<{ id: string; at: number }>): Promise<void> {
    return this.accounts.touchApiKeys(uses);
  }

  getMeta(name: string): Promise<string | undefined> {
    return meta.getMeta(this.db, name);
  }

  setMeta(name: string, value: string): Promise<void> {
    return meta.setMeta(this.db, name, value);
  }

  probeSpace(): Promise<void> {
    return meta.probeSpace(this.db);
  }

  async close(): Promise<void> {
    await this.options.onClose?.();
  }
}
