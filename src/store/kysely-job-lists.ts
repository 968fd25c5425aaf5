import { type Kysely, sql } from 'kysely';
import type { JobStatus } from '../model/fields.ts';
import type { JobListOptions, ListJobsOptions } from './job-store.ts';
import type { JobRow } from './kysely-job-rows.ts';
import { containsPattern, likeLower } from './sql-text.ts';
import type { Database } from './tables.ts';

/** Lists of jobs a page at a time, by keyset (docs/architecture.md §2, Lists): the store turns the rows into records. */

type Db = Kysely<Database>;

/**
 * A job list asking for several statuses (or, for a caller who sees some partitions only, several partitions) is
 * one query per status/partition pair, each reading its index (status, job_id) or (partition, job_id) newest
 * first, merged by UNION ALL: neither planner can walk an `IN` list in job_id order, and sorting every Completed
 * job to show the newest hundred would make page 1 as slow as the whole history. Beyond this many pairs the
 * partitions stay an `IN` filter.
 */
const MAX_LIST_BRANCHES = 32;

/** Jobs in some statuses after a job id, oldest first: index jobs_list_status (status, job_id). */
export function listByStatus(db: Db, statuses: readonly JobStatus[], options: ListJobsOptions): Promise<JobRow[]> {
  let q = db
    .selectFrom('jobs')
    .selectAll()
    .where('status', 'in', [...statuses]);
  if (options.definition !== undefined) q = q.where('definition', '=', options.definition);
  if (options.processServer !== undefined) q = q.where('process_server', '=', options.processServer);
  if (options.queue !== undefined) q = q.where('queue', '=', options.queue);
  if (options.jobGroup !== undefined) q = q.where('job_group', '=', options.jobGroup);
  if (options.afterJobId !== undefined) q = q.where('job_id', '>', options.afterJobId);
  return q.orderBy('job_id').limit(options.limit).execute();
}

/**
 * A page of a job list, newest first: each branch reads one of the list indexes of migration 0008
 * (jobs_list_status, jobs_list_partition, jobs_list_queue, jobs_list_process_server, jobs_group, jobs_parent), all
 * ending in job_id, from the cursor on.
 */
export async function listJobs(db: Db, o: JobListOptions): Promise<JobRow[]> {
  if (o.partitions?.length === 0 || o.statuses?.length === 0) return [];
  const statuses: Array<JobStatus | undefined> = o.statuses ? [...o.statuses] : [undefined];
  const byPartition = o.partitions !== undefined && statuses.length * o.partitions.length <= MAX_LIST_BRANCHES;
  const partitions: Array<string | undefined> = byPartition && o.partitions ? [...o.partitions] : [undefined];
  const pattern = o.search === undefined ? undefined : containsPattern(o.search);
  const branch = (status: JobStatus | undefined, partition: string | undefined) => {
    let q = db.selectFrom('jobs').selectAll();
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
  if (rest.length === 0) return first.execute();
  let union = db.selectFrom(first.as('b0')).selectAll();
  rest.forEach((b, i) => {
    union = union.unionAll(db.selectFrom(b.as(`b${i + 1}`)).selectAll());
  });
  return union.orderBy('job_id', 'desc').limit(o.limit).execute();
}
