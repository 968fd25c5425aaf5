import type { JobRecord } from '../domain/job.ts';
import { nextOccurrence, occurrencesBetween } from '../domain/recurrence.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import type { Effects, Kernel } from './kernel.ts';
import { loadFrame } from './submit-frames.ts';
import { loadWindow } from './windows.ts';

/**
 * Recurrences at run time. A recurrence keeps exactly one job waiting for its next occurrence: when that job's
 * occurrence comes (or it is started early by runnow), the next one is submitted, in the same transaction. Every
 * job of a recurrence carries the same JobGroup; canceling the waiting job (or cancelRecurrence) ends it.
 */

/** Later than this after its occurrence, a job is a misfire (the server was down): the misfire policy decides. */
export const MISFIRE_GRACE_MS = 60_000;
/** RunAll submits at most this many missed occurrences. */
const RUN_ALL_CAP = 1000;

/**
 * Submits the successor of a recurrence's job whose occurrence came, once. Returns 'skip' when the misfire
 * policy Skip says this late job does not run.
 */
export async function submitNextOccurrence(
  kernel: Kernel,
  tx: Store,
  job: JobRecord,
  now: number,
  effects: Effects,
): Promise<'run' | 'skip'> {
  const r = job.data.recurrence;
  if (!r || r.next || job.jobGroup === null) return 'run';
  r.next = true;
  const frame = await loadFrame(tx, r.frame, job.data.zone);
  if (!frame) {
    job.data.notes.push(`SubmitFrame ${r.frame} no longer exists: the recurrence ends`);
    return 'run';
  }
  const windowKey = job.data.spec.timeWindow;
  const jobWindow = windowKey ? await loadWindow(tx, windowKey, job.data.spec.windowZone ?? job.data.zone) : undefined;
  let verdict: 'run' | 'skip' = 'run';
  let after = r.occurrence;
  if (now - r.occurrence > MISFIRE_GRACE_MS) {
    const policy = job.data.spec.misfire ?? 'RunOnce';
    after = now;
    job.data.notes.push(`Occurrence missed by ${Math.round((now - r.occurrence) / 1000)} s; misfire policy ${policy}`);
    if (policy === 'Skip') verdict = 'skip';
    if (policy === 'RunAll')
      for (const t of occurrencesBetween(frame, r.anchor, r.occurrence, now, RUN_ALL_CAP, jobWindow))
        if (t > r.occurrence && t <= now) await submitOccurrence(kernel, tx, job, t, true, now, effects);
  }
  const next = nextOccurrence(frame, r.anchor, after, jobWindow);
  if (next !== undefined) await submitOccurrence(kernel, tx, job, next, false, now, effects);
  return verdict;
}

/** A job of the recurrence for occurrence `t`, copied from `job`; never two for one occurrence. */
async function submitOccurrence(
  kernel: Kernel,
  tx: Store,
  job: JobRecord,
  t: number,
  missed: boolean,
  now: number,
  effects: Effects,
): Promise<void> {
  const group = job.jobGroup;
  const r = job.data.recurrence;
  // Only a job of a recurrence (which always has its group) has a next occurrence.
  if (group === null || !r) return;
  if (await tx.jobs.groupHasStart(group, t)) return;
  await kernel.rerun(tx, job, now, effects, {
    keepPlace: false,
    starts: 0,
    at: t,
    recurrence: { frame: r.frame, anchor: r.anchor, occurrence: t, ...(missed ? { next: true } : {}) },
    notes: missed ? ['Submitted late for a missed occurrence (misfire policy RunAll)'] : [],
  });
}

/** Reaction to a final status: StopSubmitFrame / RestartNoResubmit cancel the recurrence's pending jobs. */
export async function endRecurrence(
  kernel: Kernel,
  tx: Store,
  { job, status }: { job: JobRecord; status: JobStatus },
  now: number,
  effects: Effects,
): Promise<void> {
  const action = job.data.spec.restart[status];
  if (job.jobGroup === null || (action !== 'StopSubmitFrame' && action !== 'RestartNoResubmit')) return;
  const pending = await tx.jobs.listByStatus(['Scheduled', 'QueueHeld', 'Held', 'EventWait', 'Queued'], {
    jobGroup: job.jobGroup,
    limit: 10_000,
  });
  for (const other of pending)
    if (other.jobId !== job.jobId)
      await kernel.finish(
        tx,
        other,
        { status: 'Canceled', notes: [`Recurrence ended by Job:${job.jobId} (${job.status})`] },
        now,
        effects,
      );
}
