import { type Kysely, sql } from 'kysely';
import { FINAL } from '../domain/job-status.ts';
import { JOB_STATUS_NAMES, type JobStatus } from '../model/fields.ts';
import type { JobRow } from './kysely-job-rows.ts';
import type { Database } from './tables.ts';

/**
 * The reads of jobs built with Kysely's query builder (the timers', the counts, the checks before a delete, the
 * purges, a job's children and history): one function per statement, naming the index it reads as SQLite plans it
 * (the indexes are made by src/store/migrations/; test/integration/store/job-statement-indexes.test.ts checks the
 * plans). Each answers rows; the store turns them into records.
 */

type Db = Kysely<Database>;

/** A literal, not a parameter: SQLite uses the partial index jobs_scheduled only when the query names its status. */
const SCHEDULED = sql.lit<JobStatus>('Scheduled');

/** Scheduled jobs due by `now`, earliest first: index jobs_scheduled (status, requested_start, job_id), in order. */
export const dueScheduled = (db: Db, now: number, limit: number): Promise<JobRow[]> =>
  db
    .selectFrom('jobs')
    .selectAll()
    .where('status', '=', SCHEDULED)
    .where('requested_start', '<=', now)
    .orderBy('requested_start')
    .orderBy('job_id')
    .limit(limit)
    .execute();

/** The earliest requested start of a Scheduled job (after `after`): index jobs_scheduled alone. */
export async function nextScheduledStart(db: Db, after?: number): Promise<number | null | undefined> {
  let q = db
    .selectFrom('jobs')
    .select(sql<number | null>`min(requested_start)`.as('t'))
    .where('status', '=', SCHEDULED);
  if (after !== undefined) q = q.where('requested_start', '>', after);
  return (await q.executeTakeFirst())?.t;
}

/**
 * Jobs whose MaxRunTime fell due by `now`, earliest first: the partial index jobs_max_run_due (max_run_due, job_id),
 * which holds only the active jobs with a limit (migration 0015).
 */
export const dueMaxRun = (db: Db, now: number, limit: number): Promise<JobRow[]> =>
  db
    .selectFrom('jobs')
    .selectAll()
    .where('max_run_due', 'is not', null)
    .where('max_run_due', '<=', now)
    .orderBy('max_run_due')
    .orderBy('job_id')
    .limit(limit)
    .execute();

/** The earliest MaxRunTime still to fall due (after `after`): index jobs_max_run_due alone. */
export async function nextMaxRunDue(db: Db, after?: number): Promise<number | null | undefined> {
  let q = db
    .selectFrom('jobs')
    .select(sql<number | null>`min(max_run_due)`.as('t'))
    .where('max_run_due', 'is not', null);
  if (after !== undefined) q = q.where('max_run_due', '>', after);
  return (await q.executeTakeFirst())?.t;
}

/** Jobs per queue, process server and status, of the given statuses: index jobs_dispatch (leads with status). */
export const countActive = (db: Db, statuses: readonly JobStatus[]) =>
  db
    .selectFrom('jobs')
    .select(['queue', 'process_server', 'status', sql<number>`count(*)`.as('n')])
    .where('status', 'in', [...statuses])
    .groupBy(['queue', 'process_server', 'status'])
    .execute();

/** Jobs per status and queue: a scan of index jobs_dispatch (status, queue, …), no row read. */
export const countByStatusAndQueue = (db: Db) =>
  db
    .selectFrom('jobs')
    .select(['status', 'queue', sql<number>`count(*)`.as('n')])
    .groupBy(['status', 'queue'])
    .execute();

const COLUMN = { definition: 'definition', queue: 'queue', processServer: 'process_server' } as const;

/**
 * Some job naming the object (before it is deleted): index jobs_definition, jobs_list_process_server, or, for a
 * queue, jobs_dispatch (status, queue, …): no index leads with queue, so every status is named.
 */
export async function anyReferring(
  db: Db,
  column: keyof typeof COLUMN,
  key: string,
): Promise<{ job_id: number } | undefined> {
  let q = db.selectFrom('jobs').select('job_id').where(COLUMN[column], '=', key);
  if (column === 'queue') q = q.where('status', 'in', JOB_STATUS_NAMES);
  return q.limit(1).executeTakeFirst();
}

/** A definition's finished jobs beyond the newest `keep`: index jobs_definition (definition, job_id), newest first. */
export const finishedBeyond = (db: Db, definition: string, keep: number, limit: number) =>
  db
    .selectFrom('jobs')
    .select('job_id')
    .where('definition', '=', definition)
    .where('status', 'in', [...FINAL])
    .orderBy('job_id', 'desc')
    .limit(limit)
    .offset(keep)
    .execute();

/** Finished jobs that ended before `time`: index jobs_end (run_end, partial: ended jobs only). */
export const finishedBefore = (db: Db, dialect: 'sqlite' | 'postgres', time: number, limit: number) =>
  db
    .selectFrom('jobs')
    .select('job_id')
    .where('run_end', '<', time)
    // On SQLite `+status` keeps the planner off the status indexes: without statistics it prefers an equality
    // on status to the run_end range, and walked every finished job (all of the history) on each purge.
    .where(dialect === 'sqlite' ? sql<string>`+status` : sql.ref('status'), 'in', [...FINAL])
    .limit(limit)
    .execute();

/** A job's children in order: index jobs_parent (parent_job, job_id; partial: children only). */
export const children = (db: Db, parentJob: number): Promise<JobRow[]> =>
  db.selectFrom('jobs').selectAll().where('parent_job', '=', parentJob).orderBy('job_id').execute();

/** Whether a job of the group has this requested start: index jobs_group (job_group, job_id; partial). */
export const groupHasStart = async (db: Db, jobGroup: number, requestedStart: number): Promise<boolean> =>
  (await db
    .selectFrom('jobs')
    .select('job_id')
    .where('job_group', '=', jobGroup)
    .where('requested_start', '=', requestedStart)
    .limit(1)
    .executeTakeFirst()) !== undefined;

/** A job's history, oldest first: index job_history_job (job_id, id). */
export const history = (db: Db, jobId: number, limit: number) =>
  db.selectFrom('job_history').selectAll().where('job_id', '=', jobId).orderBy('id').limit(limit).execute();
