import type { JobStatus } from './job-status.ts';
import { INITIAL, PENDING } from './job-status.ts';

/**
 * Which process properties an action's body may change in
 * which status. Pure: the action checks every given field before it changes anything, so a refused field leaves
 * the job as it was and the action undone.
 */

/** Fields a submit or resubmit body may carry; only some of them can change on an existing job. */
export type ProcessProperty =
  | 'Description'
  | 'Priority'
  | 'RequestedStartTime'
  | 'Queue'
  | 'JobParameters'
  | 'HoldOnSubmit'
  | 'SubmitFrame'
  | 'MaxRunTime';

/** A job not yet handed to a process server: what it will run with (queue, start, priority, In values) may change. */
export const NOT_STARTED: ReadonlySet<JobStatus> = new Set<JobStatus>([
  ...INITIAL,
  ...PENDING.filter((s) => s !== 'Dispatched' && s !== 'Assigned'),
]);

/**
 * Why `field` cannot be changed on job `jobId` in `status` by `action`, or undefined when it can. Restart applies
 * the body to the new job, which has not started. The description is a label and can change in any status.
 */
export function unchangeableReason(
  field: ProcessProperty,
  jobId: number,
  status: JobStatus,
  action: string,
): string | undefined {
  if (field === 'HoldOnSubmit' || field === 'SubmitFrame' || field === 'MaxRunTime')
    return `Field "${field}" is given at submit; the ${action} action cannot change it`;
  if (field === 'Description' || action === 'restart' || NOT_STARTED.has(status)) return undefined;
  return `Field "${field}" cannot be changed while Job:${jobId} is ${status}`;
}
