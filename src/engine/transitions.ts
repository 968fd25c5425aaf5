import type { JobRecord, RecurrenceInfo } from '../domain/job.ts';
import { decideRestart } from '../domain/restart.ts';
import { substitute as substituteVariables } from '../domain/substitute.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import { closeQuestion } from './ask.ts';
import { onCallFinal } from './chains.ts';
import type { Effects } from './effects.ts';
import { raiseEvent } from './events.ts';
import { createOperatorMessage } from './operator-message.ts';
import { settlePending } from './pending.ts';
import { createChainJobs } from './submit.ts';

/**
 * Job transitions shared by the dispatcher, the agent reports, the in-server jobs and the actions. Each runs inside
 * the caller's transaction and records what must happen after the commit in `fx`.
 */

/** Inserts a new job; picks its ids from the sequences. */
export async function insertJob(
  tx: Store,
  job: Omit<JobRecord, 'jobId' | 'uniqueId'>,
  fx: Effects,
  ownGroup = false,
): Promise<JobRecord> {
  const [uniqueId] = await tx.nextUniqueIds(1);
  const [jobId] = await tx.jobs.nextJobIds(1);
  const record: JobRecord = { ...job, jobId: jobId as number, uniqueId: uniqueId as number };
  // The first job of a recurrence names its JobGroup after itself.
  if (ownGroup) record.jobGroup = record.jobId;
  await tx.jobs.insert(record);
  if (record.status === 'Queued') fx.dispatch = true;
  if (record.status === 'Scheduled') fx.wakeAt.push(record.requestedStart);
  return record;
}

/**
 * Submits a copy of `job` that starts over (restart, resubmit of the same values, automatic restart, the next
 * occurrence of a recurrence): the same definition snapshot, parameters with their Out values cleared, a fresh
 * pending status. The original keeps its own. An automatic restart keeps the job's place (its chain step, its
 * recurrence's group); an operator's restart makes a job of its own; a recurrence's occurrence stays in its group.
 * A chain's copy gets new step and call jobs.
 */
export async function rerun(
  tx: Store,
  job: JobRecord,
  now: number,
  fx: Effects,
  options: {
    keepPlace: boolean;
    submittedBy?: string;
    starts: number;
    at?: number;
    recurrence?: RecurrenceInfo;
    notes?: string[];
  },
): Promise<JobRecord> {
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
  // The copy's history starts with where it came from; a user's restart keeps naming the user.
  const outer = tx.jobs.currentCause();
  const detail = options.recurrence
    ? `Next occurrence of the recurrence of Job:${job.jobId}`
    : `Restart of Job:${job.jobId}`;
  const cause = {
    user: outer?.user ?? null,
    cause: outer?.cause ?? (options.recurrence ? 'recurrence' : 'restart'),
    detail,
  };
  return tx.jobs.withCause(cause, async () => {
    await settlePending(tx, copy as JobRecord, now, fx);
    const next = await insertJob(tx, copy, fx);
    // Its chain's step jobs are created by the engine, as on submit.
    await tx.jobs.withCause(outer, () => createChainJobs(tx, next, now, fx));
    return next;
  });
}

export interface FinalOutcome {
  status: JobStatus;
  runEnd?: number;
  returnCode?: number | null;
  notes?: string[];
}

/**
 * Moves a job to a final status and applies what follows from it: the definition's restart behaviour
 * (Restart-like actions submit a new job while MaxStarts allows; RequestRestart parks it in ConsoleRestart for an
 * operator), its RaiseEvents, the release of its locks, the end of its recurrence (StopSubmitFrame,
 * RestartNoResubmit), and, for a chain call, its step's next move.
 */
export async function finishJob(
  tx: Store,
  job: JobRecord,
  outcome: FinalOutcome,
  now: number,
  fx: Effects,
): Promise<void> {
  job.status = outcome.status;
  job.runEnd = outcome.runEnd ?? now;
  if (outcome.returnCode !== undefined) job.returnCode = outcome.returnCode;
  if (outcome.notes) job.data.notes.push(...outcome.notes);
  job.modificationTime = now;
  const spec = job.data.spec;
  const decision = decideRestart(outcome.status, spec.restart, job.starts, spec.maxStarts);
  if (decision === 'request') {
    const text = `Job:${job.jobId} (${job.definition}) ended ${outcome.status}. Reply Restart to run it again, or NoRestart.`;
    const messageId = await createOperatorMessage(tx, job, text, now);
    job.data.notes.push(
      `Ended ${outcome.status}; restart requested: waiting for a reply to OperatorMessage:${messageId}`,
    );
    job.data.pendingFinal = outcome.status;
    job.data.operatorMessage = messageId;
    job.status = 'ConsoleRestart';
  } else if (decision === 'restart') {
    const next = await rerun(tx, job, now, fx, { keepPlace: true, starts: job.starts + 1 });
    job.data.notes.push(`Ended ${outcome.status}; restarted as Job:${next.jobId}`);
  }
  await tx.jobs.updateMany([job]);
  if (spec.keepJobs !== null) fx.purge.set(job.definition, spec.keepJobs);
  fx.dispatch = true;
  await afterFinal(tx, job, outcome.status, now, fx, decision === 'none');
}

/** What a final status sets off besides restarts; `settled`: no restart follows, the job's place is done. */
async function afterFinal(
  tx: Store,
  job: JobRecord,
  status: JobStatus,
  now: number,
  fx: Effects,
  settled: boolean,
): Promise<void> {
  const spec = job.data.spec;
  if (job.data.userMessage !== undefined || job.data.operatorMessage !== undefined) await closeQuestion(tx, job, now);
  for (const r of spec.raiseEvents ?? [])
    if (r.status === status) {
      const comment = raiseComment(r.comment ?? DEFAULT_RAISE_COMMENT, job, status);
      await raiseEvent(tx, r.event, { comment, raiser: `Job:${job.jobId}` }, now, fx);
    }
  if ((spec.locks ?? []).length > 0) await releaseLockWaiters(tx, spec.locks ?? [], now, fx);
  const action = spec.restart[status];
  if (job.jobGroup !== null && (action === 'StopSubmitFrame' || action === 'RestartNoResubmit'))
    await endRecurrence(tx, job, now, fx);
  if (settled && job.data.chain?.call) await onCallFinal(tx, job, now, fx);
}

const DEFAULT_RAISE_COMMENT = 'Event raised by process:${jobid} (${jobdescription}) going to status ${jobstatus}';

/** The substitution variables of a raise comment (product §2.1 Raise Events). */
function raiseComment(text: string, job: JobRecord, status: JobStatus): string {
  const values: Record<string, string> = {
    jobid: String(job.jobId),
    jobstatus: status,
    jobdescription: job.description ?? job.definition,
    jobdefinition: job.definition,
    returncode: job.returnCode === null ? '' : String(job.returnCode),
    partition: job.partition,
  };
  return substituteVariables(text, values);
}

/** A job holding locks ended: the jobs waiting for any of them go back to Queued and the dispatcher decides again. */
async function releaseLockWaiters(tx: Store, locks: readonly string[], now: number, fx: Effects): Promise<void> {
  const waiting = await tx.jobs.listByStatus(['LockWait'], { limit: 100_000 });
  const moving = waiting.filter((j) => (j.data.spec.locks ?? []).some((l) => locks.includes(l)));
  for (const j of moving) {
    j.status = 'Queued';
    j.modificationTime = now;
  }
  if (moving.length > 0) {
    await tx.jobs.updateMany(moving);
    fx.dispatch = true;
  }
}

/** StopSubmitFrame / RestartNoResubmit: the recurrence's pending jobs are canceled, so nothing is submitted again. */
async function endRecurrence(tx: Store, job: JobRecord, now: number, fx: Effects): Promise<void> {
  const pending = await tx.jobs.listByStatus(['Scheduled', 'QueueHeld', 'Held', 'EventWait', 'Queued'], {
    jobGroup: job.jobGroup as number,
    limit: 10_000,
  });
  for (const other of pending)
    if (other.jobId !== job.jobId)
      await finishJob(
        tx,
        other,
        { status: 'Canceled', notes: [`Recurrence ended by Job:${job.jobId} (${job.status})`] },
        now,
        fx,
      );
}

/** Ends a job in ConsoleRestart with the final status it reached, after the operator's reply. */
export async function settleRestartRequest(
  tx: Store,
  job: JobRecord,
  restart: boolean,
  user: string,
  now: number,
  fx: Effects,
): Promise<void> {
  const status = job.data.pendingFinal ?? 'Error';
  delete job.data.pendingFinal;
  job.status = status;
  job.modificationTime = now;
  if (restart) {
    const next = await rerun(tx, job, now, fx, { keepPlace: true, submittedBy: user, starts: 0 });
    job.data.notes.push(`${user} replied Restart; restarted as Job:${next.jobId}`);
  } else job.data.notes.push(`${user} replied NoRestart`);
  await tx.jobs.updateMany([job]);
  if (job.data.spec.keepJobs !== null) fx.purge.set(job.definition, job.data.spec.keepJobs);
  if (!restart && job.data.chain?.call) await onCallFinal(tx, job, now, fx);
}
