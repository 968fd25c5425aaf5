import type { JobRecord } from '../domain/job.ts';
import { decideRestart } from '../domain/restart.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import type { Effects } from './effects.ts';

/**
 * Job transitions shared by the dispatcher, the agent reports, the in-server jobs and the actions. Each runs inside
 * the caller's transaction and records what must happen after the commit in `fx`.
 */

/** Where a job waits once it may run: Scheduled until its start, QueueHeld while its queue is held, else Queued. */
export function pendingStatus(requestedStart: number, now: number, queueHeld: boolean): JobStatus {
  if (requestedStart > now) return 'Scheduled';
  return queueHeld ? 'QueueHeld' : 'Queued';
}

export async function isQueueHeld(tx: Store, queue: string): Promise<boolean> {
  const q = await tx.getObject('Queue', queue);
  return q?.data.Held === true;
}

/** Inserts a new job; picks its ids from the sequences. */
export async function insertJob(tx: Store, job: Omit<JobRecord, 'jobId' | 'uniqueId'>, fx: Effects): Promise<JobRecord> {
  const [uniqueId] = await tx.nextUniqueIds(1);
  const [jobId] = await tx.jobs.nextJobIds(1);
  const record: JobRecord = { ...job, jobId: jobId as number, uniqueId: uniqueId as number };
  await tx.jobs.insert(record);
  if (record.status === 'Queued') fx.dispatch = true;
  if (record.status === 'Scheduled') fx.wakeAt.push(record.requestedStart);
  return record;
}

/**
 * A copy of `job` that starts over (restart, resubmit, automatic restart): same definition snapshot, parameters
 * with their Out values cleared, a fresh status. The original keeps its own.
 */
export function copyForRerun(job: JobRecord, now: number, queueHeld: boolean): Omit<JobRecord, 'jobId' | 'uniqueId'> {
  const parameters = job.data.parameters.map((p) => ({
    ...p,
    OutValueString: null,
    OutValueNumber: null,
    OutValueDate: null,
  }));
  return {
    ...job,
    status: pendingStatus(now, now, queueHeld),
    processServer: null,
    requestedStart: now,
    scheduledStart: null,
    runStart: null,
    runEnd: null,
    returnCode: null,
    topStart: now,
    attempt: 0,
    data: { zone: job.data.zone, parameters, notes: [], spec: job.data.spec },
    creationTime: now,
    modificationTime: now,
  };
}

export interface FinalOutcome {
  status: JobStatus;
  runEnd?: number;
  returnCode?: number | null;
  notes?: string[];
}

/**
 * Moves a job to a final status and applies its definition's restart behaviour: Restart-like actions submit a
 * new job (while MaxStarts allows); RequestRestart parks it in ConsoleRestart for an operator.
 */
export async function finishJob(tx: Store, job: JobRecord, outcome: FinalOutcome, now: number, fx: Effects): Promise<void> {
  job.status = outcome.status;
  job.runEnd = outcome.runEnd ?? now;
  if (outcome.returnCode !== undefined) job.returnCode = outcome.returnCode;
  if (outcome.notes) job.data.notes.push(...outcome.notes);
  job.modificationTime = now;
  const spec = job.data.spec;
  const decision = decideRestart(outcome.status, spec.restart, job.starts, spec.maxStarts);
  if (decision === 'request') {
    const messageId = await createOperatorMessage(tx, job, outcome.status, now);
    job.data.notes.push(`Ended ${outcome.status}; restart requested: waiting for a reply to OperatorMessage:${messageId}`);
    job.data.pendingFinal = outcome.status;
    job.data.operatorMessage = messageId;
    job.status = 'ConsoleRestart';
  } else if (decision === 'restart') {
    const next = await insertJob(tx, { ...copyForRerun(job, now, await isQueueHeld(tx, job.queue)), starts: job.starts + 1 }, fx);
    job.data.notes.push(`Ended ${outcome.status}; restarted as Job:${next.jobId}`);
  }
  await tx.jobs.updateMany([job]);
  if (spec.keepJobs !== null) fx.purge.set(job.definition, spec.keepJobs);
  fx.dispatch = true;
}

/** Replies a RequestRestart operator message accepts. */
export const RESTART_REPLIES = 'Restart|NoRestart';

/** The operator message of a RequestRestart restart behaviour (product §1.4), kept with the other objects. */
async function createOperatorMessage(tx: Store, job: JobRecord, status: JobStatus, now: number): Promise<number> {
  const [id] = await tx.nextUniqueIds(1);
  const at = { ms: now, zone: job.data.zone };
  await tx.insertObject(
    {
      uniqueId: id as number,
      type: 'OperatorMessage',
      key: String(id),
      partition: job.partition,
      data: {
        FullText: `Job:${job.jobId} (${job.definition}) ended ${status}. Reply Restart to run it again, or NoRestart.`,
        ReplyExpression: RESTART_REPLIES,
        ReplyStatus: 'Required',
        Reply: null,
        SenderObject: `Job:${job.jobId}`,
        CreationTime: at,
        ReplyTime: null,
        ReplyUser: null,
      },
      protection: null,
      creationTime: now,
      modificationTime: now,
    },
    [],
  );
  return id as number;
}

/** Ends a job in ConsoleRestart with the final status it reached, after the operator's reply. */
export async function settleRestartRequest(tx: Store, job: JobRecord, restart: boolean, user: string, now: number, fx: Effects): Promise<void> {
  const status = job.data.pendingFinal ?? 'Error';
  delete job.data.pendingFinal;
  job.status = status;
  job.modificationTime = now;
  if (restart) {
    const next = await insertJob(tx, { ...copyForRerun(job, now, await isQueueHeld(tx, job.queue)), submittedBy: user, starts: 0 }, fx);
    job.data.notes.push(`${user} replied Restart; restarted as Job:${next.jobId}`);
  } else job.data.notes.push(`${user} replied NoRestart`);
  await tx.jobs.updateMany([job]);
  if (job.data.spec.keepJobs !== null) fx.purge.set(job.definition, job.data.spec.keepJobs);
}
