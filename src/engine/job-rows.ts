/**
 * The rows the kernel writes for a new job (docs/architecture.md §6a): a submitted job's first row and a rerun's
 * copy. Pure: the kernel settles, inserts and reacts to them in its transaction.
 */
import type { ChainInfo, JobRecord, RecurrenceInfo } from '../domain/job.ts';
import { specOf } from './definition-snapshot.ts';
import type { NewJob } from './kernel-types.ts';

/** A job row before the store gives it its ids. */
export type NewJobRow = Omit<JobRecord, 'jobId' | 'uniqueId'>;

/** How a rerun's copy is made (see Kernel.rerun). */
export interface RerunOptions {
  keepPlace: boolean;
  submittedBy?: string;
  starts: number;
  at?: number;
  recurrence?: RecurrenceInfo;
  notes?: string[];
}

/** A submitted job's row, Queued (or its initial status) until the kernel settles it. */
export function newJobRow(n: NewJob, start: number, recurrence: RecurrenceInfo | undefined, now: number): NewJobRow {
  return {
    definition: n.definition.key,
    partition: n.definition.partition,
    status: n.initialStatus ?? 'Queued',
    priority: n.priority,
    queue: n.queue,
    processServer: null,
    requestedStart: start,
    scheduledStart: null,
    runStart: null,
    runEnd: null,
    returnCode: null,
    parentJob: n.parentJob ?? null,
    jobGroup: null,
    topStart: n.topStart ?? start,
    attempt: 0,
    starts: 0,
    submittedBy: n.submittedBy,
    description: n.description,
    data: {
      zone: n.zone,
      parameters: n.parameters,
      notes: [],
      spec: {
        ...specOf(n.definition, n.timeWindow),
        ...(n.maxRunTime !== undefined ? { maxRunTime: n.maxRunTime } : {}),
      },
      ...(n.chain ? { chain: n.chain } : {}),
      ...(recurrence ? { recurrence } : {}),
    },
    creationTime: now,
    modificationTime: now,
  };
}

/**
 * A copy of `job` that starts over: parameters with their Out values cleared, a fresh Queued status; `place` is the
 * chain place it keeps (all of it when it keeps its place, else only a chain's own structure).
 */
export function rerunCopy(
  job: JobRecord,
  now: number,
  options: RerunOptions,
): { copy: NewJobRow; place: ChainInfo | undefined } {
  const at = options.at ?? now;
  const parameters = job.data.parameters.map((p) => ({
    ...p,
    OutValueString: null,
    OutValueNumber: null,
    OutValueDate: null,
  }));
  const chain = job.data.chain;
  const place = options.keepPlace ? chain : chain?.structure ? { structure: chain.structure } : undefined;
  const copy: Omit<JobRecord, 'jobId' | 'uniqueId'> = {
    ...job,
    status: 'Queued',
    processServer: null,
    requestedStart: at,
    scheduledStart: null,
    runStart: null,
    runEnd: null,
    returnCode: null,
    topStart: options.keepPlace ? job.topStart : at,
    parentJob: options.keepPlace ? job.parentJob : null,
    jobGroup: options.keepPlace || options.recurrence ? job.jobGroup : null,
    attempt: 0,
    starts: options.starts,
    submittedBy: options.submittedBy ?? job.submittedBy,
    data: {
      zone: job.data.zone,
      parameters,
      notes: options.notes ?? [],
      spec: job.data.spec,
      ...(place ? { chain: place } : {}),
      ...(options.recurrence ? { recurrence: options.recurrence } : {}),
    },
    creationTime: now,
    modificationTime: now,
  };
  return { copy, place };
}
