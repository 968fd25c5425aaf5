import type { AuditActor, AuditObject } from './audit-store.ts';
import type { ChainStructure, JobFileRecord, JobRecord } from '../domain/job.ts';
import type { JobStatus } from '../model/fields.ts';

/** A job by both its ids: a jobId rolled back with its transaction is given again, a uniqueId on PostgreSQL never. */
export type ChainJobId = Pick<JobRecord, 'jobId' | 'uniqueId'>;

/**
 * Jobs and job files: the runtime history, kept in their own tables (migration 0002) with the columns the
 * dispatcher filters and orders on. History is never held in memory; every read here is one indexed query.
 */

/** A page of one lane of the dispatcher's read (JobStore.dispatchCandidates). */
export interface LanePage {
  queue: string;
  definitionType: string;
  limit: number;
  offset: number;
}

/** Running jobs counted per queue and process server, for the dispatcher's limits. */
export interface ActiveCount {
  queue: string;
  processServer: string | null;
  status: JobStatus;
  count: number;
}

export interface ListJobsOptions {
  processServer?: string;
  queue?: string;
  jobGroup?: number;
  definition?: string;
  afterJobId?: number;
  limit: number;
}

/**
 * What made a job change status: a user's action names the user (`{user: 'alice', cause: 'hold'}`); the engine
 * leaves `user` null and names its reason in `detail`. Set for a stretch of a transaction with `withCause`.
 */
export interface Cause {
  user: string | null;
  cause: string;
  detail: string | null;
  /** A person's action: who, through what; its audit entry is written with it (docs/architecture.md §18). */
  actor?: AuditActor;
  /** The object the action is about, when the job it answers does not say (a message replied to, an event). */
  object?: AuditObject;
}

/** What `GET /Job` filters on (every field optional; all given ones must hold). */
export interface JobListFilter {
  statuses?: readonly JobStatus[];
  definition?: string;
  queue?: string;
  processServer?: string;
  parentJob?: number;
  jobGroup?: number;
  /** Creation time from, and up to, these instants (epoch ms, both inclusive). */
  since?: number;
  until?: number;
  /** Lower-case text found in the definition's key or the job's Description. */
  search?: string;
}

export interface JobListOptions extends JobListFilter {
  /** Only jobs in these partitions (the caller's visible ones); undefined: every partition. */
  partitions?: readonly string[];
  /** Keyset pagination, newest first: jobs with a smaller jobId only. */
  beforeJobId?: number;
  limit: number;
}

/** A job's status written differently from how it was read (from null: inserted, or not read in this store). */
export interface StatusChange {
  job: JobRecord;
  from: JobStatus | null;
  to: JobStatus;
  /** The history row of the change: its time (the job's modification time), status move and cause. */
  entry: HistoryEntry;
}

/** One row of a job's history (migration 0007), oldest first. */
export interface HistoryEntry {
  time: number;
  from: JobStatus | null;
  to: JobStatus;
  user: string | null;
  cause: string;
  detail: string | null;
}

export interface JobStore {
  nextJobIds(count: number): Promise<number[]>;
  insert(job: JobRecord): Promise<void>;
  /**
   * A new job with ids from the sequences (on PostgreSQL in the statement that inserts it: one round trip);
   * `ownGroup`: its JobGroup is its own id. Answers the record as stored.
   */
  insertNew(job: Omit<JobRecord, 'jobId' | 'uniqueId'>, ownGroup: boolean): Promise<JobRecord>;
  /**
   * About `count` new jobs follow in this transaction (a group of submits): their ids are taken now, in one round
   * trip on PostgreSQL (where `insertNew` then holds their rows, inserted in one statement before anything else
   * reads jobs and before the commit) and in two statements on SQLite (one per sequence, where each job took two).
   * Ids not used are skipped (as after a rollback).
   */
  expectNew(count: number): Promise<void>;
  /** Many new jobs in few statements (bulk loads of history: tests, benchmarks). */
  insertMany(jobs: readonly JobRecord[]): Promise<void>;
  get(jobId: number): Promise<JobRecord | undefined>;
  /**
   * Reads these jobs in one statement ahead of the `get`s that follow in this transaction (a batch of reports):
   * each row is handed out once, and dropped when the job is written first. PostgreSQL only (round trips).
   */
  prefetch(jobIds: readonly number[]): Promise<void>;
  getMany(jobIds: readonly number[]): Promise<JobRecord[]>;
  /**
   * From now on, until the commit, `updateMany` only notes its rows (PostgreSQL): they are sent together in one
   * statement before anything else reads jobs, and at the latest with the transaction's history rows just before
   * its commit (a batch of reports, a dispatch pass: one round trip where each report's end was one, and the
   * history another). `get` answers a noted row as written.
   */
  deferUpdates(): void;
  /** Writes every column of each job (the engine batches the transitions of a moment into one call). */
  updateMany(jobs: readonly JobRecord[]): Promise<void>;
  delete(jobIds: readonly number[]): Promise<void>;

  /** Jobs in any of `statuses`, oldest first, optionally on one process server or queue. */
  listByStatus(statuses: readonly JobStatus[], options: ListJobsOptions): Promise<JobRecord[]>;
  /** Jobs matching `options`, newest (highest jobId) first; one indexed query whatever the page (migration 0008). */
  listJobs(options: JobListOptions): Promise<JobRecord[]>;
  /** Whether the recurrence `jobGroup` already has a job for the occurrence `requestedStart`. */
  groupHasStart(jobGroup: number, requestedStart: number): Promise<boolean>;
  /** The jobs a chain or step job made (steps of a chain, calls of a step), oldest first. */
  listChildren(parentJob: number): Promise<JobRecord[]>;
  /** A chain job's steps and handlers, as kept at its submit (they never change); undefined for another job. */
  chainStructure(chain: ChainJobId): Promise<ChainStructure | undefined>;
  /** Keeps a new chain job's steps and handlers (once, right after its insert). */
  putChainStructure(chain: ChainJobId, structure: ChainStructure): Promise<void>;
  /** Whether any job is Queued (one index entry read). */
  hasQueued(): Promise<boolean>;
  /**
   * The Queued jobs of each lane (a queue and a definition type) in dispatch order (docs/architecture.md §8), a page
   * each (`limit` jobs after the first `offset`), in the order of `lanes`: on PostgreSQL one statement for them all.
   */
  dispatchCandidates(lanes: readonly LanePage[]): Promise<JobRecord[][]>;
  /** Jobs in `statuses` counted per queue, process server and status. */
  countActive(statuses: readonly JobStatus[]): Promise<ActiveCount[]>;
  /** Every job counted per status and queue: one grouped query over the dispatch index (metrics). */
  countByStatusAndQueue(): Promise<{ status: JobStatus; queue: string; count: number }[]>;
  /** Scheduled jobs whose RequestedStartTime has come, oldest first. */
  dueScheduled(now: number, limit: number): Promise<JobRecord[]>;
  /** Earliest RequestedStartTime of a Scheduled job (later than `after` when given), or undefined. */
  nextScheduledStart(after?: number): Promise<number | undefined>;
  /** Active jobs whose MaxRunTime fell due by `now`, earliest first (index jobs_max_run_due, migration 0015). */
  dueMaxRun(now: number, limit: number): Promise<JobRecord[]>;
  /** The earliest instant after `after` at which an active job's MaxRunTime falls due, or undefined. */
  nextMaxRunDue(after?: number): Promise<number | undefined>;
  /** Some job that refers to a definition, queue or process server, for the delete check. */
  anyReferring(column: 'definition' | 'queue' | 'processServer', key: string): Promise<number | undefined>;
  /** Finished jobs of a definition beyond the newest `keep`, at most `limit`. */
  finishedBeyond(definition: string, keep: number, limit: number): Promise<number[]>;
  /** Finished jobs that ended before `time`, at most `limit`. */
  finishedBefore(time: number, limit: number): Promise<number[]>;

  /** `ifAbsent`: a file whose job has one of that name already is left out (no read needed to know). */
  insertFiles(files: readonly JobFileRecord[], options?: { ifAbsent?: boolean }): Promise<void>;
  updateFiles(files: readonly JobFileRecord[]): Promise<void>;
  listFiles(jobId: number): Promise<JobFileRecord[]>;
  /** The files of several jobs at once (a page of a job list). */
  listFilesOfJobs(jobIds: readonly number[]): Promise<JobFileRecord[]>;
  getFile(uniqueId: number): Promise<JobFileRecord | undefined>;

  /** The status changes written through this store since the last call (a transaction's, for alert sources). */
  takeStatusChanges(): StatusChange[];
  /** Runs `fn` with `cause` recorded on the status changes it writes (inside a transaction), then restores. */
  withCause<T>(cause: Cause | undefined, fn: () => Promise<T>): Promise<T>;
  /** The cause in effect now, if any. */
  currentCause(): Cause | undefined;
  /** Writes history rows, one per entry (the store does this for each transaction's changes before it commits). */
  insertHistory(jobs: ReadonlyArray<{ jobId: number; entry: HistoryEntry }>): Promise<void>;
  /** A job's history, oldest first, at most `limit` entries. */
  history(jobId: number, limit: number): Promise<HistoryEntry[]>;

  /** Serialises dispatch decisions across server nodes for the rest of the transaction (PostgreSQL). */
  lockDispatch(): Promise<void>;
}
