import { CompiledQuery, type Kysely, sql } from 'kysely';
import { engineCause } from '../domain/job-history.ts';
import { FINAL } from '../domain/job-status.ts';
import { JOB_STATUS_NAMES, type JobStatus } from '../model/fields.ts';
import type { ChainStructure, JobData, JobFileRecord, JobRecord } from '../domain/job.ts';
import type {
  ActiveCount,
  ChainJobId,
  Cause,
  HistoryEntry,
  JobListOptions,
  JobStore,
  ListJobsOptions,
  StatusChange,
} from './job-store.ts';
import type { Database } from './tables.ts';
import { containsPattern, likeLower } from './sql-text.ts';

type JobRow = Database['jobs'];

const num = (v: number | null): number | null => (v === null ? null : Number(v));

const toJob = (r: JobRow): JobRecord => ({
  jobId: Number(r.job_id),
  uniqueId: Number(r.unique_id),
  definition: r.definition,
  partition: r.partition,
  status: r.status as JobStatus,
  priority: Number(r.priority),
  queue: r.queue,
  processServer: r.process_server,
  requestedStart: Number(r.requested_start),
  scheduledStart: num(r.scheduled_start),
  runStart: num(r.run_start),
  runEnd: num(r.run_end),
  returnCode: num(r.return_code),
  parentJob: num(r.parent_job),
  jobGroup: num(r.job_group),
  topStart: Number(r.top_start),
  attempt: Number(r.attempt),
  starts: Number(r.starts),
  submittedBy: r.submitted_by,
  description: r.description,
  data: JSON.parse(r.data) as JobData,
  creationTime: Number(r.creation_time),
  modificationTime: Number(r.modification_time),
});

const toRow = (j: JobRecord): JobRow => ({
  job_id: j.jobId,
  unique_id: j.uniqueId,
  definition: j.definition,
  partition: j.partition,
  status: j.status,
  priority: j.priority,
  queue: j.queue,
  process_server: j.processServer,
  requested_start: j.requestedStart,
  scheduled_start: j.scheduledStart,
  run_start: j.runStart,
  run_end: j.runEnd,
  return_code: j.returnCode,
  parent_job: j.parentJob,
  job_group: j.jobGroup,
  top_start: j.topStart,
  attempt: j.attempt,
  starts: j.starts,
  submitted_by: j.submittedBy,
  description: j.description,
  data: JSON.stringify(j.data),
  creation_time: j.creationTime,
  modification_time: j.modificationTime,
  definition_type: j.data.spec.type,
});

/**
 * Chain structures of one database read lately, shared by its store and their transactions. A chain reads its
 * structure at every step: without the cache each step would parse it again. A structure never changes once
 * written. The key is both ids: a jobId taken by a transaction that rolled back is given to the next job, but its
 * uniqueId differs on PostgreSQL (a real sequence), and on SQLite (one node) writing the new job's structure drops
 * the old entry (putChainStructure). Entries are frozen so that no caller can change the shared copy.
 */
export class ChainStructureCache {
  private readonly entries = new Map<string, ChainStructure>();

  get(chain: ChainJobId): ChainStructure | undefined {
    return this.entries.get(cacheKey(chain));
  }

  forget(chain: ChainJobId): void {
    this.entries.delete(cacheKey(chain));
  }

  remember(chain: ChainJobId, structure: ChainStructure): ChainStructure {
    if (this.entries.size >= MAX_STRUCTURES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(cacheKey(chain), deepFreeze(structure));
    return structure;
  }
}

const MAX_STRUCTURES = 256;
const cacheKey = (chain: ChainJobId): string => `${chain.jobId}/${chain.uniqueId}`;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const toFile = (r: Database['job_files']): JobFileRecord => ({
  uniqueId: Number(r.unique_id),
  jobId: Number(r.job_id),
  name: r.name,
  fileOrder: Number(r.file_order),
  type: r.type as JobFileRecord['type'],
  format: r.format,
  size: Number(r.size),
});

/** A literal, not a parameter: SQLite uses the partial index jobs_scheduled only when the query names its status. */
const SCHEDULED = sql.lit<JobStatus>('Scheduled');

const COLUMN = { definition: 'definition', queue: 'queue', processServer: 'process_server' } as const;

/**
 * A job list asking for several statuses (or, for a caller who sees some partitions only, several partitions) is
 * one query per status/partition pair, each reading its index (status, job_id) or (partition, job_id) newest
 * first, merged by UNION ALL: neither planner can walk an `IN` list in job_id order, and sorting every Completed
 * job to show the newest hundred would make page 1 as slow as the whole history. Beyond this many pairs the
 * partitions stay an `IN` filter.
 */
const MAX_LIST_BRANCHES = 32;

/** Columns of a jobs row in a fixed order: the order of the precompiled statements' parameters. */
const COLUMNS = [
  'job_id',
  'unique_id',
  'definition',
  'partition',
  'status',
  'priority',
  'queue',
  'process_server',
  'requested_start',
  'scheduled_start',
  'run_start',
  'run_end',
  'return_code',
  'parent_job',
  'job_group',
  'top_start',
  'attempt',
  'starts',
  'submitted_by',
  'description',
  'data',
  'creation_time',
  'modification_time',
  'definition_type',
] as const satisfies ReadonlyArray<keyof JobRow>;

/** What an update writes: every column but the ids and what never changes after the insert. */
const UPDATED = COLUMNS.filter(
  (c) => c !== 'job_id' && c !== 'unique_id' && c !== 'creation_time' && c !== 'definition_type',
);
const BULK = ['job_id', ...UPDATED] as const;

/** Column types of migration 0002 on PostgreSQL, for the arrays of the bulk update. */
const PG_TYPE: Record<(typeof COLUMNS)[number], 'bigint' | 'integer' | 'text'> = {
  job_id: 'bigint',
  unique_id: 'bigint',
  definition: 'text',
  partition: 'text',
  status: 'text',
  priority: 'integer',
  queue: 'text',
  process_server: 'text',
  requested_start: 'bigint',
  scheduled_start: 'bigint',
  run_start: 'bigint',
  run_end: 'bigint',
  return_code: 'integer',
  parent_job: 'bigint',
  job_group: 'bigint',
  top_start: 'bigint',
  attempt: 'integer',
  starts: 'integer',
  submitted_by: 'text',
  description: 'text',
  data: 'text',
  creation_time: 'bigint',
  modification_time: 'bigint',
  definition_type: 'text',
};

/**
 * The statements every job goes through (submit, dispatch, completion, GET), as SQL text built once per dialect.
 * Building and compiling them with Kysely's query builder each time cost more than running them on SQLite; as
 * text, a no-op job takes about 10 % less server CPU in benchmark B1 (bench/README.md), and the SQLite statement
 * cache keeps one prepared statement per query.
 */
function hotStatements(dialect: 'sqlite' | 'postgres') {
  const p = (i: number) => (dialect === 'postgres' ? `$${i}` : '?');
  const list = (cols: readonly string[]) => cols.map((c) => `"${c}"`).join(', ');
  return {
    insert: `insert into "jobs" (${list(COLUMNS)}) values (${COLUMNS.map((_, i) => p(i + 1)).join(', ')})`,
    update:
      `update "jobs" set ${UPDATED.map((c, i) => `"${c}" = ${p(i + 1)}`).join(', ')} ` +
      `where "job_id" = ${p(UPDATED.length + 1)}`,
    get: `select * from "jobs" where "job_id" = ${p(1)}`,
    anyQueued: `select 1 as "one" from "jobs" where "status" = 'Queued' limit 1`,
    /** One lane of the dispatcher (a queue and a definition type), in dispatch order: index jobs_dispatch. */
    candidates:
      `select * from "jobs" where "status" = 'Queued' and "queue" = ${p(1)} and "definition_type" = ${p(2)} ` +
      `order by "priority" desc, "top_start", "requested_start", "job_id" limit ${p(3)} offset ${p(4)}`,
    nextJobIds: `update "sequences" set "value" = "value" + ${p(1)} where "name" = 'job_id' returning "value"`,
    /**
     * PostgreSQL: many jobs in one statement, one array parameter per column (each round trip to the server is
     * paid inside the engine's serial loop; a dispatch pass updates up to 500 jobs).
     */
    updateBulk:
      `update "jobs" as j set ${UPDATED.map((c) => `"${c}" = v."${c}"`).join(', ')} ` +
      `from unnest(${BULK.map((c, i) => `$${i + 1}::${PG_TYPE[c]}[]`).join(', ')}) as v(${list(BULK)}) ` +
      `where j."job_id" = v."job_id"`,
    /** One history row (SQLite: prepared once, run per row); PostgreSQL: all rows of a commit in one statement. */
    history:
      dialect === 'postgres'
        ? `insert into "job_history" (${list(HISTORY)}) select * from unnest($1::bigint[], $2::bigint[], ` +
          '$3::text[], $4::text[], $5::text[], $6::text[], $7::text[])'
        : `insert into "job_history" (${list(HISTORY)}) values (?, ?, ?, ?, ?, ?, ?)`,
  };
}

const HISTORY = ['job_id', 'time', 'from_status', 'to_status', 'user_name', 'cause', 'detail'] as const;

const HOT = { sqlite: hotStatements('sqlite'), postgres: hotStatements('postgres') };

/** The JobStore of one Kysely database or transaction; `onWrite` feeds the store's data version. */
export class KyselyJobStore implements JobStore {
  private readonly db: Kysely<Database>;
  private readonly dialect: 'sqlite' | 'postgres';
  private readonly onWrite: () => void;
  private readonly tracking: boolean;
  private readonly hot: ReturnType<typeof hotStatements>;
  private readonly structures: ChainStructureCache;
  /** The status each job record had when this store read it, so writes can tell status changes (alerts). */
  private readonly seen = new WeakMap<JobRecord, JobStatus>();
  private changes: StatusChange[] = [];
  private cause: Cause | undefined;

  /** `tracking`: keep status changes (a transaction's store; the others would only pile them up). */
  constructor(
    db: Kysely<Database>,
    dialect: 'sqlite' | 'postgres',
    onWrite: () => void,
    tracking = false,
    structures = new ChainStructureCache(),
  ) {
    this.structures = structures;
    this.db = db;
    this.dialect = dialect;
    this.onWrite = onWrite;
    this.tracking = tracking;
    this.hot = HOT[dialect];
  }

  private load = (row: JobRow): JobRecord => {
    const job = toJob(row);
    if (this.tracking) this.seen.set(job, job.status);
    return job;
  };

  private noteStatus(job: JobRecord): void {
    if (!this.tracking) return;
    const before = this.seen.get(job);
    if (before === job.status) return;
    const from = before ?? null;
    const cause = this.cause ?? { user: null, ...engineCause(job, from, job.status) };
    const entry = { time: job.modificationTime, from, to: job.status, ...cause };
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

  async insertHistory(rows: ReadonlyArray<{ jobId: number; entry: HistoryEntry }>): Promise<void> {
    if (rows.length === 0) return;
    const values = rows.map(({ jobId, entry: e }) => [jobId, e.time, e.from, e.to, e.user, e.cause, e.detail]);
    if (this.dialect === 'postgres')
      await this.run(
        this.hot.history,
        HISTORY.map((_, i) => values.map((v) => v[i])),
      );
    else for (const v of values) await this.run(this.hot.history, v);
  }

  async history(jobId: number, limit: number): Promise<HistoryEntry[]> {
    const rows = await this.db
      .selectFrom('job_history')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      time: Number(r.time),
      from: r.from_status as JobStatus | null,
      to: r.to_status as JobStatus,
      user: r.user_name,
      cause: r.cause,
      detail: r.detail,
    }));
  }

  private run<R>(text: string, parameters: unknown[]) {
    return this.db.executeQuery<R>(CompiledQuery.raw(text, parameters));
  }

  async nextJobIds(count: number): Promise<number[]> {
    if (count < 1) return [];
    if (this.dialect === 'postgres') {
      const r = await sql<{ id: number }>`select nextval('job_id_seq') as id from generate_series(1, ${count})`.execute(
        this.db,
      );
      return r.rows.map((row) => Number(row.id));
    }
    const row = (await this.run<{ value: number }>(this.hot.nextJobIds, [count])).rows[0];
    if (!row) throw new Error('the job_id sequence is missing');
    const last = Number(row.value);
    return Array.from({ length: count }, (_, i) => last - count + 1 + i);
  }

  async insert(job: JobRecord): Promise<void> {
    const row = toRow(job);
    await this.run(
      this.hot.insert,
      COLUMNS.map((c) => row[c]),
    );
    this.noteStatus(job);
    this.onWrite();
  }

  async insertMany(jobs: readonly JobRecord[]): Promise<void> {
    // 23 parameters a row: 400 rows stay under SQLite's and PostgreSQL's limits on parameters per statement.
    for (let from = 0; from < jobs.length; from += 400)
      await this.db
        .insertInto('jobs')
        .values(jobs.slice(from, from + 400).map(toRow))
        .execute();
    for (const job of jobs) this.noteStatus(job);
    if (jobs.length > 0) this.onWrite();
  }

  async get(jobId: number): Promise<JobRecord | undefined> {
    const row = (await this.run<JobRow>(this.hot.get, [jobId])).rows[0];
    return row ? this.load(row) : undefined;
  }

  async getMany(jobIds: readonly number[]): Promise<JobRecord[]> {
    if (jobIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('job_id', 'in', [...jobIds])
      .execute();
    return rows.map(this.load);
  }

  async updateMany(jobs: readonly JobRecord[]): Promise<void> {
    if (this.dialect === 'postgres' && jobs.length > 1) {
      // A job listed twice is written once, as its last entry says (as the row-by-row updates would leave it).
      const rows = [...new Map(jobs.map((j) => [j.jobId, toRow(j)])).values()];
      await this.run(
        this.hot.updateBulk,
        BULK.map((c) => rows.map((r) => r[c])),
      );
    } else
      for (const j of jobs) {
        const row = toRow(j);
        await this.run(this.hot.update, [...UPDATED.map((c) => row[c]), row.job_id]);
      }
    for (const j of jobs) this.noteStatus(j);
    if (jobs.length > 0) this.onWrite();
  }

  async delete(jobIds: readonly number[]): Promise<void> {
    if (jobIds.length === 0) return;
    await this.db
      .deleteFrom('job_history')
      .where('job_id', 'in', [...jobIds])
      .execute();
    await this.db
      .deleteFrom('job_files')
      .where('job_id', 'in', [...jobIds])
      .execute();
    await this.db
      .deleteFrom('chain_structures')
      .where('job_id', 'in', [...jobIds])
      .execute();
    await this.db
      .deleteFrom('jobs')
      .where('job_id', 'in', [...jobIds])
      .execute();
    this.onWrite();
  }

  async listByStatus(statuses: readonly JobStatus[], options: ListJobsOptions): Promise<JobRecord[]> {
    let q = this.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', 'in', [...statuses]);
    if (options.definition !== undefined) q = q.where('definition', '=', options.definition);
    if (options.processServer !== undefined) q = q.where('process_server', '=', options.processServer);
    if (options.queue !== undefined) q = q.where('queue', '=', options.queue);
    if (options.jobGroup !== undefined) q = q.where('job_group', '=', options.jobGroup);
    if (options.afterJobId !== undefined) q = q.where('job_id', '>', options.afterJobId);
    return (await q.orderBy('job_id').limit(options.limit).execute()).map(this.load);
  }

  async listJobs(o: JobListOptions): Promise<JobRecord[]> {
    if (o.partitions?.length === 0 || o.statuses?.length === 0) return [];
    const statuses: Array<JobStatus | undefined> = o.statuses ? [...o.statuses] : [undefined];
    const byPartition = o.partitions !== undefined && statuses.length * o.partitions.length <= MAX_LIST_BRANCHES;
    const partitions: Array<string | undefined> = byPartition && o.partitions ? [...o.partitions] : [undefined];
    const pattern = o.search === undefined ? undefined : containsPattern(o.search);
    const branch = (status: JobStatus | undefined, partition: string | undefined) => {
      let q = this.db.selectFrom('jobs').selectAll();
      if (status !== undefined) q = q.where('status', '=', status);
      if (partition !== undefined) q = q.where('partition', '=', partition);
      else if (o.partitions !== undefined) q = q.where('partition', 'in', [...o.partitions]);
      if (o.definition !== undefined) q = q.where('definition', '=', o.definition);
      if (o.queue !== undefined) q = q.where('queue', '=', o.queue);
      if (o.processServer !== undefined) q = q.where('process_server', '=', o.processServer);
      if (o.parentJob !== undefined) q = q.where('parent_job', '=', o.parentJob);
      if (o.jobGroup !== undefined) q = q.where('job_group', '=', o.jobGroup);
      if (o.since !== undefined) q = q.where('creation_time', '>=', o.since);
      if (o.until !== undefined) q = q.where('creation_time', '<=', o.until);
      if (o.beforeJobId !== undefined) q = q.where('job_id', '<', o.beforeJobId);
      if (pattern !== undefined)
        q = q.where(({ or }) =>
          or([likeLower(sql`definition`, pattern), likeLower(sql`coalesce(description, '')`, pattern)]),
        );
      return q.orderBy('job_id', 'desc').limit(o.limit);
    };
    const branches = statuses.flatMap((s) => partitions.map((p) => branch(s, p)));
    const [first, ...rest] = branches;
    if (!first) return [];
    if (rest.length === 0) return (await first.execute()).map(this.load);
    let union = this.db.selectFrom(first.as('b0')).selectAll();
    rest.forEach((b, i) => {
      union = union.unionAll(this.db.selectFrom(b.as(`b${i + 1}`)).selectAll());
    });
    return (await union.orderBy('job_id', 'desc').limit(o.limit).execute()).map(this.load);
  }

  async groupHasStart(jobGroup: number, requestedStart: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('jobs')
      .select('job_id')
      .where('job_group', '=', jobGroup)
      .where('requested_start', '=', requestedStart)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async chainStructure(chain: ChainJobId): Promise<ChainStructure | undefined> {
    const cached = this.structures.get(chain);
    if (cached) return cached;
    const row = await this.db
      .selectFrom('chain_structures')
      .select('structure')
      .where('job_id', '=', chain.jobId)
      .executeTakeFirst();
    return row ? this.structures.remember(chain, JSON.parse(row.structure) as ChainStructure) : undefined;
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

  async listChildren(parentJob: number): Promise<JobRecord[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('parent_job', '=', parentJob)
      .orderBy('job_id')
      .execute();
    return rows.map(this.load);
  }

  async hasQueued(): Promise<boolean> {
    return (await this.run(this.hot.anyQueued, [])).rows.length > 0;
  }

  async dispatchCandidates(queue: string, definitionType: string, limit: number, offset = 0): Promise<JobRecord[]> {
    const rows = await this.run<JobRow>(this.hot.candidates, [queue, definitionType, limit, offset]);
    return rows.rows.map(this.load);
  }

  async countByStatusAndQueue(): Promise<{ status: JobStatus; queue: string; count: number }[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['status', 'queue', sql<number>`count(*)`.as('n')])
      .groupBy(['status', 'queue'])
      .execute();
    return rows.map((r) => ({ status: r.status as JobStatus, queue: r.queue, count: Number(r.n) }));
  }

  async countActive(statuses: readonly JobStatus[]): Promise<ActiveCount[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['queue', 'process_server', 'status', sql<number>`count(*)`.as('n')])
      .where('status', 'in', [...statuses])
      .groupBy(['queue', 'process_server', 'status'])
      .execute();
    return rows.map((r) => ({
      queue: r.queue,
      processServer: r.process_server,
      status: r.status as JobStatus,
      count: Number(r.n),
    }));
  }

  async dueScheduled(now: number, limit: number): Promise<JobRecord[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', '=', SCHEDULED)
      .where('requested_start', '<=', now)
      .orderBy('requested_start')
      .orderBy('job_id')
      .limit(limit)
      .execute();
    return rows.map(this.load);
  }

  async nextScheduledStart(after?: number): Promise<number | undefined> {
    let q = this.db
      .selectFrom('jobs')
      .select(sql<number | null>`min(requested_start)`.as('t'))
      .where('status', '=', SCHEDULED);
    if (after !== undefined) q = q.where('requested_start', '>', after);
    const row = await q.executeTakeFirst();
    return row?.t === null || row?.t === undefined ? undefined : Number(row.t);
  }

  async anyReferring(column: 'definition' | 'queue' | 'processServer', key: string): Promise<number | undefined> {
    let q = this.db.selectFrom('jobs').select('job_id').where(COLUMN[column], '=', key);
    // No index leads with queue: jobs_dispatch (status, queue, …) answers it once every status is named.
    if (column === 'queue') q = q.where('status', 'in', JOB_STATUS_NAMES);
    const row = await q.limit(1).executeTakeFirst();
    return row ? Number(row.job_id) : undefined;
  }

  async finishedBeyond(definition: string, keep: number, limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select('job_id')
      .where('definition', '=', definition)
      .where('status', 'in', [...FINAL])
      .orderBy('job_id', 'desc')
      .limit(limit)
      .offset(keep)
      .execute();
    return rows.map((r) => Number(r.job_id));
  }

  async finishedBefore(time: number, limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select('job_id')
      .where('run_end', '<', time)
      // On SQLite `+status` keeps the planner off the status indexes: without statistics it prefers an equality
      // on status to the run_end range, and walked every finished job (all of the history) on each purge.
      .where(this.dialect === 'sqlite' ? sql<string>`+status` : sql.ref('status'), 'in', [...FINAL])
      .limit(limit)
      .execute();
    return rows.map((r) => Number(r.job_id));
  }

  async insertFiles(files: readonly JobFileRecord[]): Promise<void> {
    if (files.length === 0) return;
    await this.db
      .insertInto('job_files')
      .values(
        files.map((f) => ({
          unique_id: f.uniqueId,
          job_id: f.jobId,
          name: f.name,
          file_order: f.fileOrder,
          type: f.type,
          format: f.format,
          size: f.size,
        })),
      )
      .execute();
    this.onWrite();
  }

  async updateFiles(files: readonly JobFileRecord[]): Promise<void> {
    for (const f of files)
      await this.db.updateTable('job_files').set({ size: f.size }).where('unique_id', '=', f.uniqueId).execute();
    if (files.length > 0) this.onWrite();
  }

  async listFiles(jobId: number): Promise<JobFileRecord[]> {
    const rows = await this.db
      .selectFrom('job_files')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('file_order')
      .orderBy('name')
      .execute();
    return rows.map(toFile);
  }

  async listFilesOfJobs(jobIds: readonly number[]): Promise<JobFileRecord[]> {
    if (jobIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('job_files')
      .selectAll()
      .where('job_id', 'in', [...jobIds])
      .orderBy('job_id')
      .orderBy('file_order')
      .orderBy('name')
      .execute();
    return rows.map(toFile);
  }

  async getFile(uniqueId: number): Promise<JobFileRecord | undefined> {
    const row = await this.db.selectFrom('job_files').selectAll().where('unique_id', '=', uniqueId).executeTakeFirst();
    return row ? toFile(row) : undefined;
  }

  async lockDispatch(): Promise<void> {
    // A transaction-scoped advisory lock: one node decides at a time; SQLite has one writer anyway.
    if (this.dialect === 'postgres') await sql`select pg_advisory_xact_lock(7070)`.execute(this.db);
  }
}
