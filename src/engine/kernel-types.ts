/**
 * The records the kernel's entry points take (docs/architecture.md §6a), apart from the kernel so that its parts
 * and reactions can name them without importing the kernel.
 */
import type { ChainInfo, JobParameter, JobRecord } from '../domain/job.ts';
import type { JobStatus } from '../model/fields.ts';
import type { StoredObject } from '../store/store.ts';

/** A reply to an operator message, on its way to its sender (`Job:<id>` or `Alert:<id>`). */
export interface Answer {
  sender: string;
  /** The operator message replied to (none for a reply to an alert itself). */
  message?: number;
  /** The waiting job, when the sender is a job still waiting for this message. */
  job?: JobRecord;
  reply: string;
  user: string;
}

export interface FinalOutcome {
  status: JobStatus;
  runEnd?: number;
  returnCode?: number | null;
  notes?: string[];
}

/** A job to create, with every choice of the submitter already checked and resolved. */
export interface NewJob {
  definition: StoredObject<'JobDefinition'>;
  queue: string;
  priority: number;
  /** Epoch ms; now when left out. */
  requestedStart?: number;
  zone: string;
  parameters: JobParameter[];
  hold: boolean;
  description: string | null;
  submittedBy: string;
  parentJob?: number;
  topStart?: number;
  /** Chain steps and calls start Chained (or Disabled) and move on when their step runs. */
  initialStatus?: JobStatus;
  chain?: ChainInfo;
  /** The job's own time window instead of the definition's (a chain call's TimeWindow). */
  timeWindow?: string | null;
  /** A recurrence: the job is submitted again at each occurrence of this SubmitFrame (key, View checked). */
  submitFrame?: string;
  /** How deep a chain job is nested in other chains (0 for a chain submitted by itself). */
  chainDepth?: number;
  /** The submit's MaxRunTime (seconds), in place of the definition's and its chain's. */
  maxRunTime?: number;
}

/** What an action needs besides the job: who acts, and the options of cancel and restart. */
export interface ActOptions {
  user: string;
  cancelRecurrence?: boolean;
  /** restart: the new job's requested start. */
  at?: number;
  /** updateJob: the final status set from outside. */
  status?: JobStatus;
  /** markcompleted, markerror: why (required by the service). */
  comment?: string;
}

/** A final job set to another final status by a person (markcompleted, markerror): it was `from` before. */
export interface Marked {
  job: JobRecord;
  from: JobStatus;
}
