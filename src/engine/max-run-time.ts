/**
 * Kills the jobs that ran past their MaxRunTime (docs/architecture.md §6b), in the wake-up's transaction: through
 * the kill action's own transition (`Kernel.act`: the agent's kill with its grace and the process tree, a chain's
 * tree, an in-server job stopped), with the job history's cause `maxruntime`. The due jobs are read from the
 * database (index jobs_max_run_due) under the dispatch lock every change to jobs takes, so on several nodes the
 * first to wake kills and the others find the job Killing already; a restarted or surviving node finds them the
 * same way.
 */
import type { JobRecord } from '../domain/job.ts';
import { limitDue, MAX_RUN_TIME_CAUSE, maxRunDetail } from '../domain/max-run-time.ts';
import type { Store } from '../store/store.ts';
import type { Effects } from './effects.ts';
import type { Kernel } from './kernel.ts';

/** Kills at most this many jobs a wake-up; more due wake the next one at once. */
const KILLS_PER_WAKE = 500;

/** Kills the jobs whose limit has come, and asks to be woken when the next one comes. */
export async function killOverrunJobs(kernel: Kernel, tx: Store, now: number, effects: Effects): Promise<number> {
  const due = await tx.jobs.dueMaxRun(now, KILLS_PER_WAKE);
  for (const job of due) {
    const seconds = job.data.spec.maxRunTime as number;
    job.data.overrun = seconds;
    const cause = { user: null, cause: MAX_RUN_TIME_CAUSE, detail: maxRunDetail(job.jobId, seconds) };
    await tx.jobs.withCause(cause, () => kernel.act(tx, job, 'kill', { user: MAX_RUN_TIME_CAUSE }, now, effects));
  }
  if (due.length === KILLS_PER_WAKE) effects.wakeAt.push(now);
  else await wakeForNextLimit(tx, now, effects);
  return due.length;
}

/** Asks to be woken when the next limit of an active job falls due (at a start, and after each kill). */
export async function wakeForNextLimit(tx: Store, now: number, effects: Effects): Promise<void> {
  const next = await tx.jobs.nextMaxRunDue(now);
  if (next !== undefined) effects.wakeAt.push(next);
}

/** A job started (its run start set): every node is woken when its limit falls due (the wake hint is shared). */
export function wakeAtLimit(job: JobRecord, effects: Effects): void {
  const due = limitDue(job);
  if (due !== null) effects.wakeAt.push(due);
}
