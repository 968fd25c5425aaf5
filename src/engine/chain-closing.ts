// Ending what a chain will not run (docs/architecture.md §3): closing a job's descendants that have not started,
// canceling a chain or step with them, and killing a chain or step with its children.
import { type JobRecord, SYSTEM_SERVER } from '../domain/job.ts';
import { INITIAL, isFinal, PENDING } from '../domain/job-status.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import type { Effects, Kernel } from './kernel.ts';
import { save } from './chain-creation.ts';

export function closeAs(job: JobRecord, status: JobStatus, now: number, note: string): void {
  job.status = status;
  job.runEnd = now;
  job.modificationTime = now;
  job.data.notes.push(note);
}

/** Sets every not yet started descendant of `job` to `status` (canceling or skipping what a chain will not run). */
export async function closeDescendants(
  tx: Store,
  job: JobRecord,
  status: JobStatus,
  now: number,
  note: string,
): Promise<void> {
  for (const child of await tx.jobs.listChildren(job.jobId)) {
    if (
      !INITIAL.includes(child.status) &&
      !(PENDING.includes(child.status) && child.status !== 'Dispatched' && child.status !== 'Assigned')
    )
      continue;
    closeAs(child, status, now, note);
    await save(tx, [child]);
    await closeDescendants(tx, child, status, now, note);
  }
}

/**
 * Kill reaches the children: what has not started is Canceled, running agent jobs are killed, in-server jobs
 * stop; the chain (or step) is Killed once all of them are final.
 */
export async function killTree(
  kernel: Kernel,
  tx: Store,
  job: JobRecord,
  now: number,
  effects: Effects,
): Promise<void> {
  job.status = 'Killing';
  job.modificationTime = now;
  await save(tx, [job]);
  for (const child of await tx.jobs.listChildren(job.jobId)) {
    if (isFinal(child.status)) continue;
    if (
      INITIAL.includes(child.status) ||
      (PENDING.includes(child.status) && child.status !== 'Dispatched' && child.status !== 'Assigned')
    ) {
      closeAs(child, 'Canceled', now, `Canceled: Job:${job.jobId} was killed`);
      await save(tx, [child]);
      await closeDescendants(tx, child, 'Canceled', now, `Canceled: Job:${job.jobId} was killed`);
    } else if (child.data.chain?.structure || child.data.chain?.step) {
      await killTree(kernel, tx, child, now, effects);
    } else if (child.processServer === SYSTEM_SERVER) {
      effects.stopSystem.push(child.jobId);
      closeAs(child, 'Killed', now, `Killed with Job:${job.jobId}`);
      await save(tx, [child]);
    } else if (child.processServer !== null && child.status !== 'Killing') {
      effects.messages.push({
        processServer: child.processServer,
        message: { type: 'kill', jobId: child.jobId, attempt: child.attempt },
      });
      child.status = 'Killing';
      child.modificationTime = now;
      await save(tx, [child]);
    }
  }
  await settleKilling(kernel, tx, job, now, effects);
}

/** A chain or step being killed becomes Killed once all its children are final; the chain above may follow. */
export async function settleKilling(
  kernel: Kernel,
  tx: Store,
  job: JobRecord,
  now: number,
  effects: Effects,
): Promise<void> {
  if (job.status !== 'Killing') return;
  const children = await tx.jobs.listChildren(job.jobId);
  if (!children.every((c) => isFinal(c.status))) return;
  await kernel.finish(tx, job, { status: 'Killed' }, now, effects);
  if (job.data.chain?.step && job.parentJob !== null) {
    const chain = await tx.jobs.get(job.parentJob);
    if (chain) await settleKilling(kernel, tx, chain, now, effects);
  }
}

/** Reaction to a canceled chain or step: what has not started of it is canceled too. */
export const cancelTree = (_k: Kernel, tx: Store, job: JobRecord, now: number): Promise<void> =>
  closeDescendants(tx, job, 'Canceled', now, `Canceled with Job:${job.jobId}`);
