import { CompiledQuery, type Kysely, sql } from 'kysely';
import { engineCause } from '../domain/job-history.ts';
import type { JobStatus } from '../model/fields.ts';
import type { ChainStructure, JobRecord } from '../domain/job.ts';
import type {
  ChainJobId,
  Cause,
  HistoryEntry,
  JobListOptions,
  JobStore,
  LanePage,
  ListJobsOptions,
  StatusChange,
} from './job-store.ts';
import { itemAt } from '../domain/item-at.ts';
import { JobRowBuffer } from './kysely-job-buffer.ts';
import { KyselyJobReads } from './kysely-job-reads.ts';
import { ChainStructureCache } from './kysely-chain-structures.ts';
import { listByStatus, listJobs } from './kysely-job-lists.ts';
import * as queries from './kysely-job-queries.ts';
import { JobRowImages } from './kysely-job-images.ts';
import { BULK, COLUMNS, type JobRow, toHistoryEntry, toJob, toRow, UPDATED } from './kysely-job-rows.ts';
import {
  HISTORY,
  heldWrite,
  JOB_STATEMENTS,
  type JobStatements,
  newJobColumns,
  reserveIds,
  SQLITE_HISTORY_CHUNK,
  sqliteHistoryRows,
  sqliteUpdateOf,
} from './kysely-job-statements.ts';
import type { Database } from './tables.ts';
import { pgArray, pgColumns } from './pg-array.ts';
import { takeFromSequence } from './sequences.ts';

/**
 * The JobStore of one Kysely database or transaction; `onWrite` feeds the store's data version. The statements
 * live beside it, one function each naming its index: the hot ones as SQL text (kysely-job-statements.ts), the
 * other reads (kysely-job-queries.ts), the lists (kysely-job-lists.ts) and the files (kysely-job-files.ts). The
 * class turns rows into records and keeps what a transaction needs of them: status changes and their cause.
 * The reads that only query (timers, housekeeping, counts, files) are its base class's (kysely-job-reads.ts);
 * what it holds back for round trips is JobRowBuffer's (kysely-job-buffer.ts).
 */
export class KyselyJobStore extends KyselyJobReads implements JobStore {
  private readonly tracking: boolean;
  private readonly hot: JobStatements;
  private readonly structures: ChainStructureCache;
  /** The status each job record had when this store read it, so writes can tell status changes (alerts). */
  private readonly seen = new WeakMap<JobRecord, JobStatus>();
  private changes: StatusChange[] = [];
  private cause: Cause | undefined;
  /** Told the objects version read with a group's ids (reserveIds): the group's object reads may use the kept rows. */
  private readonly learnObjectsVersion: (version: string) => void;
  /** Rows read ahead (`prefetch`), new jobs held (`expectNew`) and updates deferred (`deferUpdates`). */
  private readonly buffer = new JobRowBuffer<string[]>(({ inserted, updated, history }) => {
    const insert = inserted.length > 0 ? pgColumns(inserted, COLUMNS) : [];
    const update = updated.length > 0 ? pgColumns(updated, BULK) : [];
    const parts = { insert: insert.length > 0, update: update.length > 0, history: history !== undefined };
    return this.run(heldWrite(parts), [...insert, ...update, ...(history ?? [])]);
  });
  /** Ids taken ahead for the new jobs this transaction expects (`expectNew`), first to use first. */
  private reserved: Array<{ jobId: number; uniqueId: number }> = [];
  /** SQLite, in a transaction: the jobs' rows as this transaction read or wrote them, so writes name what changed. */
  private readonly images: JobRowImages | undefined;

  /** `tracking`: keep status changes (a transaction's store; the others would only pile them up). */
  constructor(
    db: Kysely<Database>,
    dialect: 'sqlite' | 'postgres',
    onWrite: () => void,
    tracking = false,
    structures = new ChainStructureCache(),
    learnObjectsVersion: (version: string) => void = () => {},
  ) {
    super(db, dialect, onWrite);
    this.learnObjectsVersion = learnObjectsVersion;
    this.structures = structures;
    this.tracking = tracking;
    this.hot = JOB_STATEMENTS[dialect];
    if (dialect === 'sqlite' && tracking) this.images = new JobRowImages();
  }

  protected load = (row: JobRow): JobRecord => {
    const job = toJob(row);
    this.images?.saw(row);
    if (this.tracking) this.seen.set(job, job.status);
    return job;
  };

  private noteStatus(job: JobRecord): void {
    if (!this.tracking) return;
    const before = this.seen.get(job);
    if (before === job.status) return;
    const from = before ?? null;
    const cause = this.cause ?? { user: null, ...engineCause(job, from, job.status) };
    // The history keeps who and why; the audit's actor (address, API key id) stays out of it.
    const { user, cause: why, detail } = cause;
    const entry = { time: job.modificationTime, from, to: job.status, user, cause: why, detail };
    this.changes.push({ job, from, to: job.status, entry });
    this.seen.set(job, job.status);
  }

  takeStatusChanges(): StatusChange[] {
    const taken = this.changes;
    this.changes = [];
    return taken;
  }

  async withCause<T>(cause: Cause | undefined, fn: () => Promise<T>): Promise<T> {
    const outer = this.cause;
    this.cause = cause;
    try {
      return await fn();
    } finally {
      this.cause = outer;
    }
  }

  currentCause(): Cause | undefined {
    return this.cause;
  }

  /** On PostgreSQL the history rows go with the rows held back, in one statement (`heldWrite`). */
  async insertHistory(rows: ReadonlyArray<{ jobId: number; entry: HistoryEntry }>): Promise<void> {
    const values = rows.map(({ jobId, entry: e }) => [jobId, e.time, e.from, e.to, e.user, e.cause, e.detail]);
    if (this.dialect === 'postgres')
      return this.buffer.flush(
        values.length > 0 ? HISTORY.map((_, i) => pgArray(values.map((v) => v[i] ?? null))) : undefined,
      );
    await this.buffer.flush();
    for (let i = 0; i < values.length; i += SQLITE_HISTORY_CHUNK) {
      const chunk = values.slice(i, i + SQLITE_HISTORY_CHUNK);
      await this.run(sqliteHistoryRows(chunk.length), chunk.flat());
    }
  }

  async history(jobId: number, limit: number): Promise<HistoryEntry[]> {
    return (await queries.history(await this.flushed(), jobId, limit)).map(toHistoryEntry);
  }

  private run<R>(text: string, parameters: unknown[]) {
    return this.db.executeQuery<R>(CompiledQuery.raw(text, parameters));
  }

  nextJobIds(count: number): Promise<number[]> {
    return takeFromSequence(this.db, this.dialect, 'job_id', count);
  }

  async expectNew(count: number): Promise<void> {
    // A lone new job takes its ids as it is inserted (`insertNew`): nothing to save.
    if (!this.tracking || count < 2) return;
    if (this.dialect === 'sqlite') {
      this.reserved = await this.sqliteIds(count);
      return;
    }
    const rows = (await this.run<{ u: string; j: string; v: string }>(reserveIds(count), [])).rows;
    this.reserved = rows.map((r) => ({ jobId: Number(r.j), uniqueId: Number(r.u) }));
    if (rows[0]) this.learnObjectsVersion(String(rows[0].v));
  }

  /** SQLite: the ids of `count` new jobs, a statement per sequence (a group's two where each job took two). */
  private async sqliteIds(count: number): Promise<Array<{ jobId: number; uniqueId: number }>> {
    const uniqueIds = await takeFromSequence(this.db, this.dialect, 'unique_id', count);
    return (await this.nextJobIds(count)).map((jobId, i) => ({ jobId, uniqueId: itemAt(uniqueIds, i) }));
  }

  async insertNew(job: Omit<JobRecord, 'jobId' | 'uniqueId'>, ownGroup: boolean): Promise<JobRecord> {
    // Ids not taken ahead: SQLite takes them now; PostgreSQL's insert takes them itself (`insertWithIds`, below).
    const taken = this.reserved.shift() ?? (this.dialect === 'sqlite' ? itemAt(await this.sqliteIds(1), 0) : undefined);
    if (taken) {
      const record: JobRecord = { ...job, ...taken, jobGroup: ownGroup ? taken.jobId : job.jobGroup };
      if (this.dialect === 'sqlite') await this.insert(record);
      else {
        // PostgreSQL: held, and sent with the transaction's other held rows in one statement.
        this.buffer.hold(toRow(record));
        this.noteStatus(record);
        this.onWrite();
      }
      return record;
    }
    const ids = await insertWithIds(this.db, job, ownGroup);
    const record: JobRecord = { ...job, ...ids, jobGroup: ownGroup ? ids.jobId : job.jobGroup };
    this.noteStatus(record);
    this.onWrite();
    return record;
  }

  async insert(job: JobRecord): Promise<void> {
    this.buffer.forget(job.jobId);
    const row = toRow(job);
    await this.run(
      this.hot.insert,
      COLUMNS.map((c) => row[c]),
    );
    this.images?.saw(row);
    this.noteStatus(job);
    this.onWrite();
  }

  async insertMany(jobs: readonly JobRecord[]): Promise<void> {
    for (const job of jobs) this.buffer.forget(job.jobId);
    // 25 parameters a row: 400 rows stay under SQLite's and PostgreSQL's limits on parameters per statement.
    const rows = jobs.map(toRow);
    for (let from = 0; from < rows.length; from += 400)
      await (await this.flushed())
        .insertInto('jobs')
        .values(rows.slice(from, from + 400))
        .execute();
    for (const row of rows) this.images?.saw(row);
    for (const job of jobs) this.noteStatus(job);
    if (jobs.length > 0) this.onWrite();
  }

  async prefetch(jobIds: readonly number[]): Promise<void> {
    // SQLite has no round trip to save: its get is a prepared statement, cheaper than a query built per batch.
    if (this.dialect === 'sqlite') return;
    const wanted = this.buffer.missing(jobIds);
    if (wanted.length < 2) return; // one job: its own get costs the same round trip
    this.buffer.readAhead(await this.db.selectFrom('jobs').selectAll().where('job_id', 'in', wanted).execute());
  }

  deferUpdates(): void {
    if (this.dialect === 'postgres') this.buffer.defer(); // SQLite: no round trip to save
  }

  /** Sends the rows held back (new jobs, deferred updates): the transaction calls it last before its commit. */
  sendHeld(): Promise<void> {
    return this.buffer.flush();
  }

  /** The database once the deferred updates are sent: every read of jobs goes through it (it sees them). */
  protected async flushed(): Promise<Kysely<Database>> {
    await this.buffer.flush();
    return this.db;
  }

  async get(jobId: number): Promise<JobRecord | undefined> {
    const held = this.buffer.take(jobId);
    if (held) return this.load(held);
    const row = (await this.run<JobRow>(this.hot.get, [jobId])).rows[0];
    return row ? this.load(row) : undefined;
  }

  async getMany(jobIds: readonly number[]): Promise<JobRecord[]> {
    if (jobIds.length === 0) return [];
    const rows = await (await this.flushed())
      .selectFrom('jobs')
      .selectAll()
      .where('job_id', 'in', [...jobIds])
      .execute();
    return rows.map(this.load);
  }

  async updateMany(jobs: readonly JobRecord[]): Promise<void> {
    for (const job of jobs) this.buffer.forget(job.jobId);
    // Held rows (new jobs not inserted yet, deferred updates) take the writes; the others are written now.
    const now = this.buffer.note(jobs.map(toRow));
    if (this.dialect === 'postgres' && now.length > 1) {
      // A job listed twice is written once, as its last entry says (as the row-by-row updates would leave it).
      const rows = [...new Map(now.map((r) => [r.job_id, r])).values()];
      await this.run(this.hot.updateBulk, pgColumns(rows, BULK));
    } else
      for (const row of now) {
        const columns = this.images?.columnsToWrite(row) ?? UPDATED;
        const text = columns === UPDATED ? this.hot.update : sqliteUpdateOf(columns);
        if (columns.length > 0) await this.run(text, [...columns.map((c) => row[c]), row.job_id]);
        this.images?.saw(row);
      }
    for (const j of jobs) this.noteStatus(j);
    if (jobs.length > 0) this.onWrite();
  }

  async delete(jobIds: readonly number[]): Promise<void> {
    if (jobIds.length === 0) return;
    for (const id of jobIds) {
      this.buffer.forget(id);
      this.images?.forget(id);
    }
    for (const table of ['job_history', 'job_files', 'chain_structures', 'jobs'] as const)
      await (await this.flushed())
        .deleteFrom(table)
        .where('job_id', 'in', [...jobIds])
        .execute();
    this.onWrite();
  }

  async listByStatus(statuses: readonly JobStatus[], options: ListJobsOptions): Promise<JobRecord[]> {
    return (await listByStatus(await this.flushed(), statuses, options)).map(this.load);
  }

  async listJobs(options: JobListOptions): Promise<JobRecord[]> {
    return (await listJobs(await this.flushed(), options)).map(this.load);
  }

  async groupHasStart(jobGroup: number, requestedStart: number): Promise<boolean> {
    return queries.groupHasStart(await this.flushed(), jobGroup, requestedStart);
  }

  async chainStructure(chain: ChainJobId): Promise<ChainStructure | undefined> {
    const cached = this.structures.get(chain);
    if (cached) return cached;
    const row = await this.db
      .selectFrom('chain_structures')
      .select('structure')
      .where('job_id', '=', chain.jobId)
      .executeTakeFirst();
    return row ? this.structures.remember(chain, JSON.parse(row.structure)) : undefined;
  }

  async putChainStructure(chain: ChainJobId, structure: ChainStructure): Promise<void> {
    // A jobId (and on SQLite a uniqueId) is given again after its transaction rolled back: forget what was read of
    // the job that had it.
    this.structures.forget(chain);
    await this.db
      .insertInto('chain_structures')
      .values({ job_id: chain.jobId, structure: JSON.stringify(structure) })
      .execute();
  }

  async hasQueued(): Promise<boolean> {
    await this.buffer.flush();
    return (await this.run(this.hot.anyQueued, [])).rows.length > 0;
  }

  async dispatchCandidates(lanes: readonly LanePage[]): Promise<JobRecord[][]> {
    await this.buffer.flush();
    return (await laneRows(this.db, this.dialect, lanes)).map((rows) => rows.map(this.load));
  }

  async lockDispatch(): Promise<void> {
    // A transaction-scoped advisory lock: one node decides at a time; SQLite has one writer anyway.
    if (this.dialect === 'postgres') await sql`select pg_advisory_xact_lock(7070)`.execute(await this.flushed());
  }
}

/** The rows of each lane's page, in the order of `lanes`: a statement a lane on SQLite, one for all on PostgreSQL. */
async function laneRows(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  lanes: readonly LanePage[],
): Promise<JobRow[][]> {
  const text = JOB_STATEMENTS[dialect].candidates;
  const read = <R>(parameters: unknown[]) => db.executeQuery<R>(CompiledQuery.raw(text, parameters));
  if (dialect === 'sqlite') {
    const pages: JobRow[][] = [];
    for (const l of lanes) pages.push((await read<JobRow>([l.queue, l.definitionType, l.limit, l.offset])).rows);
    return pages;
  }
  if (lanes.length === 0) return [];
  // The lanes as four arrays, one a column; the statement numbers them from 1 (`lane`).
  const columns = [
    lanes.map((l) => l.queue),
    lanes.map((l) => l.definitionType),
    lanes.map((l) => l.limit),
    lanes.map((l) => l.offset),
  ];
  const rows = await read<JobRow & { lane: number }>(columns.map(pgArray));
  const pages = lanes.map((): JobRow[] => []);
  for (const row of rows.rows) pages[row.lane - 1]?.push(row);
  return pages;
}

/** PostgreSQL: a new job's row, its ids taken from the sequences in the same statement; answers them. */
async function insertWithIds(
  db: Kysely<Database>,
  job: Omit<JobRecord, 'jobId' | 'uniqueId'>,
  ownGroup: boolean,
): Promise<{ jobId: number; uniqueId: number }> {
  const row = toRow({ ...job, jobId: 0, uniqueId: 0 });
  const statement = ownGroup ? JOB_STATEMENTS.postgres.insertNewOwnGroup : JOB_STATEMENTS.postgres.insertNew;
  const given = newJobColumns(ownGroup).map((c) => row[c]);
  const ids = (await db.executeQuery<Pick<JobRow, 'job_id' | 'unique_id'>>(CompiledQuery.raw(statement, given)))
    .rows[0];
  if (!ids) throw new Error('the new job row was not answered');
  return { jobId: Number(ids.job_id), uniqueId: Number(ids.unique_id) };
}
