import type { Selectable } from 'kysely';
import type { JobFileRecord, JobRecord } from '../domain/job.ts';
import { maxRunDue } from '../domain/max-run-time.ts';
import type { HistoryEntry } from './job-store.ts';
import { type Database, everyColumn } from './tables.ts';

/**
 * A job's row and its record, one from the other, and the columns in the fixed order of the job statements'
 * parameters (kysely-job-statements.ts).
 */

export type JobRow = Database['jobs'];

const num = (v: number | null): number | null => (v === null ? null : Number(v));

export const toJob = (r: JobRow): JobRecord => ({
  jobId: Number(r.job_id),
  uniqueId: Number(r.unique_id),
  definition: r.definition,
  partition: r.partition,
  status: r.status,
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
  data: JSON.parse(r.data),
  creationTime: Number(r.creation_time),
  modificationTime: Number(r.modification_time),
});

export const toRow = (j: JobRecord): JobRow => ({
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
  max_run_due: maxRunDue(j),
});

export const toFile = (r: Database['job_files']): JobFileRecord => ({
  uniqueId: Number(r.unique_id),
  jobId: Number(r.job_id),
  name: r.name,
  fileOrder: Number(r.file_order),
  type: r.type,
  format: r.format,
  size: Number(r.size),
});

export const toHistoryEntry = (r: Selectable<Database['job_history']>): HistoryEntry => ({
  time: Number(r.time),
  from: r.from_status,
  to: r.to_status,
  user: r.user_name,
  cause: r.cause,
  detail: r.detail,
});

/** Columns of a jobs row in a fixed order: the order of the precompiled statements' parameters. */
export const COLUMNS = everyColumn<JobRow>()([
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
  'max_run_due',
]);

/** What an update writes: every column but the ids and what never changes after the insert. */
export const UPDATED = COLUMNS.filter(
  (c) => c !== 'job_id' && c !== 'unique_id' && c !== 'creation_time' && c !== 'definition_type',
);
export const BULK = ['job_id', ...UPDATED] as const;
export type UpdatedColumn = (typeof UPDATED)[number];

/**
 * The columns of `after` that differ from `before`, the same job's row as the database holds it. SQLite rewrites
 * the entry of every index whose columns an UPDATE names, changed or not: a job has fourteen, and naming all its
 * columns made each write of a status cost twice the time, and its commit three times the pages, of naming those
 * that changed (bench/README.md, B2). A value that differs only in form (a number for a text) counts as changed.
 */
export function changedColumns(before: JobRow, after: JobRow): UpdatedColumn[] {
  return UPDATED.filter((c) => before[c] !== after[c]);
}

/** Whether `row` has every column a write compares (a job read whole, not some of its columns). */
export const wholeRow = (row: JobRow): boolean => COLUMNS.every((c) => c in row);

/** Column types of migration 0002 on PostgreSQL, for the arrays of the bulk update. */
export const PG_TYPE: Record<(typeof COLUMNS)[number], 'bigint' | 'integer' | 'text'> = {
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
  max_run_due: 'bigint',
};
