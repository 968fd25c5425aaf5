import type { JobRecord } from '../domain/job.ts';
import { nextOpening } from '../domain/time-window.ts';
import type { Store } from '../store/store.ts';
import type { Effects } from './effects.ts';
import { openingEnd } from './gates.ts';
import { isRaised } from './events.ts';
import { loadWindow } from './windows.ts';

/**
 * Where a job waits once nothing holds it back by hand (submit, release, a due start time, a raised event, a chain
 * call whose step began). The gates in the order a job passes them: its start time (Scheduled), its wait events
 * (EventWait), whether its time window opens at all within two years (else Never, final), its queue's hold
 * (QueueHeld); then it is Queued and the dispatcher checks the rest (windows now, locks, limits).
 * Sets `job.status`; the caller writes the job.
 */
export async function settlePending(tx: Store, job: JobRecord, now: number, fx: Effects): Promise<void> {
  job.modificationTime = now;
  if (job.requestedStart > now) {
    job.status = 'Scheduled';
    fx.wakeAt.push(job.requestedStart);
    return;
  }
  for (const w of job.data.spec.waitEvents ?? [])
    if (!(await isRaised(tx, w.event))) {
      job.status = 'EventWait';
      return;
    }
  const key = job.data.spec.timeWindow;
  const window = key ? await loadWindow(tx, key, job.data.spec.windowZone ?? job.data.zone) : undefined;
  const deadline = window ? openingEnd(window, now) : undefined;
  if (window && deadline === undefined && nextOpening(window, now) === undefined) {
    job.status = 'Never';
    job.runEnd = now;
    job.data.notes.push(`Its time window ${key} does not open within two years`);
    return;
  }
  const queue = await tx.getObject('Queue', job.queue);
  job.status = queue?.data.Held === true ? 'QueueHeld' : 'Queued';
  if (job.status === 'Queued') fx.dispatch = true;
  // Still waiting when the opening it waits for is over → overdue (the dispatcher looks then).
  if (deadline !== undefined) {
    job.data.windowClosesAt = deadline;
    fx.overdueAt.push(deadline);
  }
}
