import type { JobStatus } from './job-status.ts';
import { isFinal } from './job-status.ts';
import type { JobRecord } from './job.ts';
import { MAX_RUN_TIME_CAUSE, maxRunDetail } from './max-run-time.ts';

/**
 * The engine's reason for a status change nobody set a cause for, told by the change itself: the transition and
 * what the job record says at that moment (its process server, return code, chain place, recurrence). User actions
 * and the few engine paths that know more (restarts, recurrences) set their cause explicitly instead. Pure.
 */
export interface DerivedCause {
  cause: string;
  detail: string | null;
}

const WAITS: Partial<Record<JobStatus, DerivedCause>> = {
  Scheduled: { cause: 'schedule', detail: 'Waiting for its requested start time' },
  EventWait: { cause: 'event', detail: 'Waiting for its events to be raised' },
  LockWait: { cause: 'lock', detail: 'Waiting for a lock held by another job' },
  QueueHeld: { cause: 'queue', detail: 'Its queue is held' },
  Overdue: { cause: 'window', detail: 'Its time window closed before it could start' },
  Never: { cause: 'window', detail: 'Its time window does not open within two years' },
  Skipped: { cause: 'recurrence', detail: 'Its occurrence was missed and skipped' },
};

/** Why a job left the status it waited in, for the move to Queued. */
const RELEASED_FROM: Partial<Record<JobStatus, DerivedCause>> = {
  Scheduled: { cause: 'schedule', detail: 'Its requested start time came' },
  EventWait: { cause: 'event', detail: 'Its wait events were raised' },
  LockWait: { cause: 'lock', detail: 'A lock it waits for was released' },
  QueueHeld: { cause: 'queue', detail: 'Its queue was released' },
  Chained: { cause: 'chain', detail: 'Its chain step started' },
};

export function engineCause(job: JobRecord, from: JobStatus | null, to: JobStatus): DerivedCause {
  if (from === null) {
    if (job.parentJob !== null) return { cause: 'chain', detail: `Created by Job:${job.parentJob}` };
    return { cause: 'submit', detail: `Submitted by ${job.submittedBy}` };
  }
  const ps = job.processServer;
  if (to === 'Dispatched') return { cause: 'dispatch', detail: `Dispatched to process server ${ps}` };
  if (to === 'Running' && (from === 'Dispatched' || from === 'Assigned'))
    return { cause: 'agent', detail: `Process server ${ps} started the process` };
  if (to === 'Running' || (to === 'Waiting' && job.data.chain?.structure))
    return { cause: 'dispatch', detail: `Started on process server ${ps}` };
  if (to === 'Queued') return RELEASED_FROM[from] ?? { cause: 'engine', detail: null };
  const wait = WAITS[to];
  if (wait) return wait;
  // Killed at its limit: the end tells why as the kill did, so an alert source can match it (max-run-time.ts).
  if (to === 'Killed' && job.data.overrun !== undefined)
    return { cause: MAX_RUN_TIME_CAUSE, detail: maxRunDetail(job.jobId, job.data.overrun) };
  if (isFinal(to) || to === 'ConsoleRestart') {
    const note = job.data.notes.at(-1) ?? null;
    if (job.returnCode !== null && ps !== null && (from === 'Running' || from === 'Killing' || from === 'Dispatched'))
      return { cause: 'agent', detail: `Process server ${ps} reported return code ${job.returnCode}` };
    return { cause: 'engine', detail: note };
  }
  if (to === 'Console') return { cause: 'engine', detail: job.data.notes.at(-1) ?? 'Waiting for a reply' };
  return { cause: 'engine', detail: null };
}
