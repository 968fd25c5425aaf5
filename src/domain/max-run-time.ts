import type { JobRecord } from './job.ts';
import { actionApplies } from './job-actions.ts';

/**
 * A job's maximum run time (docs/architecture.md §6b): how long it may stay active before the engine kills it as
 * an operator's kill would. Pure: the store keeps `maxRunDue` of each job as a column (migration 0015), so that
 * every node finds the due jobs through an index, whatever process set the limit's clock going.
 */

/** The largest MaxRunTime, in seconds: a year. */
export const MAX_RUN_TIME_LIMIT = 31_536_000;

/** The cause the job history records for a kill at the limit (alert sources may match it). */
export const MAX_RUN_TIME_CAUSE = 'maxruntime';

/** When the limit of a job that started at `runStart` falls due (epoch ms), or null when it has none. */
export function limitDue(job: Pick<JobRecord, 'runStart' | 'data'>): number | null {
  const seconds = job.data.spec.maxRunTime ?? null;
  if (seconds === null || job.runStart === null || job.data.chain?.step) return null;
  return job.runStart + seconds * 1000;
}

/**
 * When a job must be killed for running too long, or null: only while the kill action applies to it (Running,
 * Waiting, Console) and it has not been killed for it yet. A chain's step jobs have no limit of their own: the
 * chain's limit kills them with the chain.
 */
export function maxRunDue(job: JobRecord): number | null {
  if (!actionApplies('kill', job.status)) return null;
  return limitDue(job);
}

/** The history detail of a kill at the limit of `job` (its jobId and seconds); it names the limit. */
export const maxRunDetail = (jobId: number, seconds: number): string =>
  `Job:${jobId} ran past its MaxRunTime of ${seconds} s`;
