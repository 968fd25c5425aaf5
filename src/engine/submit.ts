import type {
  ChainInfo,
  JobParameter,
  JobRecord,
  JobSpec,
  MisfirePolicy,
  UserMessageSpec,
  OverdueAction,
  RecurrenceInfo,
} from '../domain/job.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store, StoredObject } from '../store/store.ts';
import { chainStructure, createStepJobs } from './chains.ts';
import type { Effects } from './effects.ts';
import { settlePending } from './pending.ts';
import { submitNextOccurrence } from './recurrences.ts';
import { insertJob } from './transitions.ts';

type Rec = Record<string, unknown>;
const list = (v: unknown): Rec[] => (Array.isArray(v) ? (v as Rec[]) : []);

/** What a job keeps of its definition (see JobSpec): editing the definition later does not change the job. */
export function specOf(definition: StoredObject, windowOverride?: string | null): JobSpec {
  const d = definition.data;
  return {
    type: d.JobDefinitionType as string,
    script: (d.Script as string | null) ?? null,
    completionStrategy: (d.CompletionStrategy as JobSpec['completionStrategy']) ?? 'Default',
    returnCodeMap: (d.ReturncodeMapToCompleted as string | null) ?? '0',
    restart: (d.RestartBehaviour as Record<string, string> | null) ?? {},
    maxStarts: (d.MaxStarts as number | null) ?? null,
    keepJobs: (d.KeepJobs as number | null) ?? null,
    timeWindow: windowOverride ?? (d.TimeWindow as string | null) ?? null,
    ...(typeof d.TimeZone === 'string' ? { windowZone: d.TimeZone } : {}),
    waitEvents: list(d.WaitEvents).map((w) => ({ event: w.EventDefinition as string, clears: w.ClearsEvent === true })),
    raiseEvents: list(d.RaiseEvents).map((r) => ({
      event: r.EventDefinition as string,
      status: (r.StatusToRaiseOn as string | null) ?? 'Completed',
      comment: (r.RaiseComment as string | null) ?? null,
    })),
    locks: Array.isArray(d.Locks) ? (d.Locks as string[]) : [],
    overdue: (d.ActWhenOverdue as OverdueAction | null) ?? 'Scheduled',
    overdueEvent: (d.OverdueEvent as string | null) ?? null,
    misfire: (d.MisfirePolicy as MisfirePolicy | null) ?? 'RunOnce',
    credential: (d.Credential as string | null) ?? null,
    userMessage: (d.UserMessage as UserMessageSpec | null) ?? null,
  };
}

/** A job to create, with every choice of the submitter already checked and resolved. */
export interface NewJob {
  definition: StoredObject;
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
  recurrence?: Omit<RecurrenceInfo, 'next'>;
  /** The recurrence's JobGroup; `self` makes the new job the first of its group. */
  jobGroup?: number | 'self';
  starts?: number;
  /** How deep a chain job is nested in other chains (0 for a chain submitted by itself). */
  chainDepth?: number;
}

/**
 * Creates a job (and, for a chain, its step and call jobs) in the caller's transaction. Shared by submit,
 * resubmit, chains, recurrences and auto-submit on events.
 */
export async function createJob(tx: Store, n: NewJob, now: number, fx: Effects): Promise<JobRecord> {
  const start = n.requestedStart ?? now;
  const job: Omit<JobRecord, 'jobId' | 'uniqueId'> = {
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
    jobGroup: typeof n.jobGroup === 'number' ? n.jobGroup : null,
    topStart: n.topStart ?? start,
    attempt: 0,
    starts: n.starts ?? 0,
    submittedBy: n.submittedBy,
    description: n.description,
    data: {
      zone: n.zone,
      parameters: n.parameters,
      notes: [],
      spec: specOf(n.definition, n.timeWindow),
      ...(n.chain ? { chain: n.chain } : {}),
      ...(n.recurrence ? { recurrence: n.recurrence } : {}),
    },
    creationTime: now,
    modificationTime: now,
  };
  if (job.data.spec.type === 'JobChain')
    job.data.chain = { ...job.data.chain, structure: await chainStructure(tx, n.definition, n.chainDepth ?? 0) };
  if (n.initialStatus === undefined) {
    if (n.hold) job.status = 'Held';
    else await settlePending(tx, job as JobRecord, now, fx);
  }
  const record = await insertJob(tx, job, fx, n.jobGroup === 'self');
  await createChainJobs(tx, record, now, fx);
  // A recurrence whose first occurrence is now: its successor is due now too (later ones: when they come).
  if (record.data.recurrence && record.status !== 'Scheduled' && record.status !== 'Held') {
    await submitNextOccurrence(tx, record, now, fx);
    await tx.jobs.updateMany([record]);
  }
  return record;
}

/** A chain job's step and call jobs (a new chain job, or one restarted as a copy). */
export async function createChainJobs(tx: Store, chain: JobRecord, now: number, fx: Effects): Promise<void> {
  const steps = chain.data.chain?.structure?.steps ?? [];
  for (let i = 0; i < steps.length; i++) await createStepJobs(tx, chain, i, now, fx);
}
