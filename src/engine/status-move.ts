/**
 * The one place a job's status changes (docs/architecture.md §6a), apart from the kernel so that the kernel's parts
 * and the reactions can move a job without importing the kernel.
 */
import type { JobRecord } from '../domain/job.ts';
import { SYSTEM_SERVER } from '../domain/job.ts';
import type { JobStatus } from '../model/fields.ts';

/** Sets a job's status: the one place a status changes; the store records the transition when the row is written. */
export function move(job: JobRecord, to: JobStatus, now: number): JobRecord {
  job.status = to;
  job.modificationTime = now;
  return job;
}

/** Holds a slot on an agent: the agent must hear of a kill or of being let go. */
export const onAgent = (job: JobRecord) => job.processServer !== null && job.processServer !== SYSTEM_SERVER;
