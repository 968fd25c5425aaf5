import type { DataOf } from '../model/data.ts';
import type { Privilege, TypeName } from '../model/fields.ts';
import type { EventStore } from './event-store.ts';
import type { AlertWorkStore } from './alert-work-store.ts';
import type { BlobStore } from './blob-store.ts';
import type { AuthFailureStore } from './auth-failure-store.ts';
import type { SessionStore } from './session-store.ts';
import type { FileWatchStore } from './file-watch-store.ts';
import type { ClusterStore, JobFileChunkStore } from './cluster-store.ts';
import type { JobStore, StatusChange } from './job-store.ts';
import { errorCode } from '../errors.ts';
import type { RuntimeStatsStore } from './runtime-stats-store.ts';
import type { AuditStore } from './audit-store.ts';

/**
 * The persistence contract. The services and the engine depend on this interface only; one Kysely
 * implementation serves SQLite and PostgreSQL, and one integration suite runs against both.
 * Instants are epoch milliseconds written by the application, never by database defaults.
 */

/** `locked`: neither changed nor deleted (GLOBAL.System queue); `undeletable`: may be edited, not deleted. */
export type Protection = 'locked' | 'undeletable';

/** What every stored object has besides its type and data. */
export interface ObjectHeader {
  uniqueId: number;
  /** Canonical business key without the type, e.g. `GLOBAL.Default`. */
  key: string;
  /** Partition whose privileges govern the object. */
  partition: string;
  protection: Protection | null;
  creationTime: number;
  modificationTime: number;
}

/**
 * An object of type `T`, its data typed from the type's declaration (model/data.ts); for a union of types, the
 * union of their objects. Without `T` (generic create, read, update and delete over any type) the data is an open
 * record.
 */
export type StoredObject<T extends TypeName = TypeName> = TypeName extends T
  ? ObjectHeader & { type: TypeName; data: Record<string, unknown> }
  : T extends TypeName
    ? ObjectHeader & { type: T; data: DataOf<T> }
    : never;

/** One reference held by an object, kept so a delete can find who still refers to its target. */
export interface ObjectRef {
  path: string;
  toId: number;
}

export interface User {
  name: string;
  /** `scrypt$N$r$p$salt$hash`, or null for a user who signs in with API keys only. */
  passwordHash: string | null;
  roles: string[];
  disabled: boolean;
  creationTime: number;
}

export interface Grant {
  /** A type name or `*` for every type. */
  type: string;
  /** A partition name or `*` for every partition. */
  partition: string;
  privileges: Privilege[];
}

export interface Role {
  name: string;
  description: string;
  grants: Grant[];
  builtin: boolean;
}

export interface ApiKey {
  /** Short public identifier, shown in listings and used to revoke. */
  id: string;
  userName: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  keyHash: string;
  description: string;
  creationTime: number;
  expiryTime: number;
  lastUsedTime: number | null;
  revokedTime: number | null;
}

export interface ListOptions {
  partition?: string;
  /** Only objects in these partitions (the caller's visible ones); undefined: every partition. */
  partitions?: readonly string[];
  /** Lower-case text found in the key or the Description. */
  search?: string;
  /** Keyset pagination: keys strictly after this one, in key order. */
  afterKey?: string;
  limit: number;
}

/** What a list of objects shows of each (the XML `list`): no data parsed. */
export interface ObjectSummary {
  key: string;
  partition: string;
  protection: Protection | null;
  /** The Description when it is a string, else null. */
  description: string | null;
}

export interface PoolStats {
  total: number;
  idle: number;
  /** Queries waiting for a client. */
  waiting: number;
  /** Statements sent since the store opened, each a round trip. */
  roundTrips: number;
}

/** A list of runtime objects kept with the others (messages, alerts), newest (highest uniqueId) first. */
export interface RecentListOptions {
  partitions?: readonly string[];
  /** Keyset pagination: objects with a smaller uniqueId only. */
  beforeId?: number;
  /** Top-level fields of the data that must hold one of the values (field names come from the code). */
  fieldIn?: ReadonlyArray<{ field: string; values: readonly string[] }>;
  /** Only objects whose `Participants` name the user or, written `role:<name>`, one of the roles. */
  participant?: { user: string; roles: readonly string[] };
  limit: number;
}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  /** Jobs and job files; inside a transaction, part of it. */
  readonly jobs: JobStore;
  /** Raised, pending and cleared events; inside a transaction, part of it. */
  readonly events: EventStore;
  /** Alert work to do at a time (delayed checks, escalations, deliveries); inside a transaction, part of it. */
  readonly alertWork: AlertWorkStore;
  /** Library files and staged CAR archives; inside a transaction, part of it. */
  readonly blobs: BlobStore;
  /** The server nodes sharing this database, their leases and their agents; inside a transaction, part of it. */
  readonly cluster: ClusterStore;
  /** Job files kept in the database (`--job-files database`). */
  readonly jobFileChunks: JobFileChunkStore;
  /** Failed sign-ins per address and user name, counted for every node (migration 0012). */
  readonly authFailures: AuthFailureStore;
  /** The dashboard's sessions, for every node (migration 0018); inside a transaction, part of it. */
  readonly sessions: SessionStore;
  /** Runtime statistics per definition and chain step (migration 0014), added to as jobs finish. */
  readonly runtimeStats: RuntimeStatsStore;
  /** Files raised by file events and the agents' watch status (migration 0016); inside a transaction, part of it. */
  readonly fileWatches: FileWatchStore;
  /** The audit log (migration 0019, docs/architecture.md §18): added to inside a change's transaction. */
  readonly audit: AuditStore;
  /**
   * The channel nodes tell each other through (PostgreSQL's LISTEN/NOTIFY); undefined on SQLite, where one node
   * serves the database. Each call opens a new channel.
   */
  openChannel(): Channel | undefined;
  /** Runs `fn` in one transaction; inside a transaction it simply runs `fn` on the same one. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /**
   * Sets the hook that sees every transaction's job status changes just before it commits, in the same
   * transaction (alert sources). Changes written outside a transaction are not seen.
   */
  onStatusChanges(hook: StatusChangeHook | undefined): void;
  /**
   * Sets the listener told, right after each commit (never for a rollback), of the transaction's job status
   * changes and of the writes to objects of `objectTypes` (the live feed). Writes outside a transaction are told
   * at once.
   */
  onCommit(listener: CommitListener | undefined, objectTypes?: ReadonlySet<TypeName>): void;
  /**
   * Sets the listener told of every transaction's job status changes once it committed (metrics). It must not
   * throw nor write.
   */
  onCommittedStatusChanges(listener: ((changes: readonly StatusChange[]) => void) | undefined): void;
  /**
   * Asks the database which migrations have not run (an empty list when all have); rejects when the database does
   * not answer. For the readiness check.
   */
  pendingMigrations(): Promise<string[]>;
  /** Objects of a type counted per value of one top-level field of their data: one grouped query (metrics). */
  countObjectsByField(type: TypeName, field: string): Promise<{ value: string | null; count: number }[]>;
  /** The connection pool's clients (PostgreSQL); undefined for SQLite's single connection. */
  poolStats(): PoolStats | undefined;
  /** Sets the listener told how long each transaction took, in ms, and whether it committed (metrics). */
  onTransactionEnd(listener: ((ms: number, committed: boolean) => void) | undefined): void;
  /**
   * A token that changes whenever committed object data may have changed (own writes and, on SQLite, other
   * connections' commits), read before the data it validates. Undefined when the store cannot tell (PostgreSQL
   * with several server nodes): callers must not cache object reads then.
   */
  dataVersion(): string | undefined;
  /**
   * PostgreSQL: the count of committed transactions that wrote objects, every node's (migration 0020), as this
   * store sees it now: one small read, made before the reads it validates (in the same transaction for a
   * consistent answer). Read in a transaction, it also lets that transaction's `getObject`s use the rows kept
   * across transactions at that version (store/object-row-cache.ts). Undefined on SQLite, where `dataVersion` tells
   * without a read.
   */
  objectsVersion(): Promise<string | undefined>;
  /** Takes `count` numbers from the one global sequence of unique ids. */
  nextUniqueIds(count: number): Promise<number[]>;

  getObject<T extends TypeName>(type: T, key: string): Promise<StoredObject<T> | undefined>;
  listObjects<T extends TypeName>(type: T, options: ListOptions): Promise<StoredObject<T>[]>;
  /** listObjects' page as narrow rows: key, partition, protection and Description, read without the whole data. */
  listObjectSummaries(
    type: TypeName,
    options: Pick<ListOptions, 'partitions' | 'afterKey' | 'limit'>,
  ): Promise<ObjectSummary[]>;
  listRecentObjects<T extends TypeName>(type: T, options: RecentListOptions): Promise<StoredObject<T>[]>;
  insertObject(object: StoredObject, refs: ObjectRef[]): Promise<void>;
  updateObject(object: StoredObject, refs: ObjectRef[]): Promise<void>;
  deleteObject(uniqueId: number): Promise<void>;
  setProtection(uniqueId: number, protection: Protection | null): Promise<void>;
  /** Replaces an object's data without touching its references or modification time (runtime state such as a
   * process server's Status). */
  patchObjectData(uniqueId: number, data: Record<string, unknown>): Promise<void>;
  /** Some object that still refers to `uniqueId`, or undefined. */
  findReferrer(uniqueId: number): Promise<{ type: TypeName; key: string; path: string } | undefined>;
  /** Keys of the objects of `type` that refer to `uniqueId` through the field `path`. */
  referrerKeys(uniqueId: number, type: TypeName, path: string): Promise<string[]>;
  /** Keys of the objects of `type` that refer to `uniqueId` through `field` of any item of the list `list`
   * (`<list>[<i>].<field>`), in key order, each once. */
  referrerKeysInList(uniqueId: number, type: TypeName, list: string, field: string): Promise<string[]>;

  getUser(name: string): Promise<User | undefined>;
  listUsers(): Promise<User[]>;
  upsertUser(user: User): Promise<void>;
  /** Removes a user and its API keys. */
  deleteUser(name: string): Promise<void>;
  /**
   * Inside a transaction: holds every user row until it ends, so two transactions that each check "another
   * administrator is left" cannot both pass (PostgreSQL; SQLite writes one transaction at a time anyway).
   */
  lockUsers(): Promise<void>;
  getRole(name: string): Promise<Role | undefined>;
  listRoles(): Promise<Role[]>;
  upsertRole(role: Role): Promise<void>;
  deleteRole(name: string): Promise<void>;

  getApiKeyByHash(keyHash: string): Promise<ApiKey | undefined>;
  listApiKeys(userName?: string): Promise<ApiKey[]>;
  insertApiKey(key: ApiKey): Promise<void>;
  revokeApiKey(id: string, at: number): Promise<boolean>;
  /** Records last-used times, batched by the caller so the hot path does not write per request. */
  touchApiKeys(uses: ReadonlyArray<{ id: string; at: number }>): Promise<void>;

  getMeta(name: string): Promise<string | undefined>;
  setMeta(name: string, value: string): Promise<void>;

  /**
   * Tries a write that needs new room (64 KiB, rolled back): throws the database's error when it cannot grow (a
   * full disk, SQLite's `max_page_count`). Asked while a full disk keeps the server not ready.
   */
  probeSpace(): Promise<void>;

  close(): Promise<void>;
}

/** Messages between nodes: delivered to every listener of every node (the sender's included), at most once. */
export interface Channel {
  /** Starts listening; `onMessage` gets each payload, `onReconnect` follows a lost connection (messages lost). */
  listen(onMessage: (payload: string) => void, onReconnect: () => void): Promise<void>;
  /**
   * Sends payloads of at most 7,900 bytes each, in order, in one statement (a round trip, not one per payload);
   * resolves once the database took them.
   */
  notify(payloads: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** True when a write failed because a unique key exists already (both dialects). */
export function isUniqueViolation(e: unknown): boolean {
  const code = errorCode(e);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

const CONNECTION_LOST =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/;

/** True when the database cannot be reached or is busy; the interfaces answer 503 with Retry-After. */
export function isDatabaseUnavailable(e: unknown): boolean {
  const code = errorCode(e);
  // node-postgres names a connection lost under a statement, or one no longer usable, only in its message.
  if (code === undefined && e instanceof Error && CONNECTION_LOST.test(e.message)) return true;
  return (
    typeof code === 'string' &&
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      '57P01',
      '57P02',
      '57P03',
      '08000',
      '08001',
      '08003',
      '08006',
      'SQLITE_BUSY',
    ].includes(code)
  );
}

/**
 * True when a write failed for want of space: SQLite's SQLITE_FULL (a full file system, or its `max_page_count`),
 * PostgreSQL's disk_full (53100), a file write's ENOSPC or EDQUOT, or an error the SQLite store marked `diskFull`
 * (an I/O error while its file system had no space left). The interfaces answer 503 naming the full disk.
 */
export function isDiskFull(e: unknown): boolean {
  if (typeof e === 'object' && e !== null && 'diskFull' in e && e.diskFull === true) return true;
  const code = errorCode(e);
  return typeof code === 'string' && DISK_FULL_CODES.has(code);
}
const DISK_FULL_CODES = new Set(['SQLITE_FULL', '53100', 'ENOSPC', 'EDQUOT']);

/** An object of a watched type inserted or written (its data after the write). */
export interface ObjectChange {
  type: TypeName;
  key: string;
  partition: string;
  data: Record<string, unknown>;
  created: boolean;
}

export interface Committed {
  jobs: StatusChange[];
  objects: ObjectChange[];
}

export type CommitListener = (committed: Committed) => void;

export type StatusChangeHook = (tx: Store, changes: StatusChange[]) => Promise<void>;
