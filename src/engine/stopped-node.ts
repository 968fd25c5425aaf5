import { type JobRecord, SYSTEM_SERVER } from '../domain/job.ts';
import type { Store } from '../store/store.ts';
import type { Effects, Kernel } from './kernel.ts';

/**
 * The System jobs a server node ran in its memory when it stopped (this node before its restart, or another node
 * that stopped beating: docs/architecture.md §16) end Unknown: their outcome is lost with the process. A chain job's
 * state is its children's, which survive in the database: it carries on. Returns how many ended.
 */
export async function endJobsOfStoppedNode(
  kernel: Kernel,
  tx: Store,
  ranThere: (job: JobRecord) => boolean,
  note: string,
  now: number,
  effects: Effects,
): Promise<number> {
  let ended = 0;
  for (const job of await tx.jobs.listByStatus(['Running', 'Killing'], {
    processServer: SYSTEM_SERVER,
    limit: 100_000,
  }))
    if (!job.data.chain?.structure && ranThere(job)) {
      await kernel.finish(tx, job, { status: 'Unknown', notes: [note] }, now, effects);
      ended += 1;
    }
  return ended;
}
