// A person's work on jobs is audited where every such work passes: the serial loop and the submits beside it run it
// under its Cause, and a Cause made for a person (services/user-cause.ts) carries the actor (docs/architecture.md §18).
import type { AuditObject } from '../store/audit-store.ts';
import type { Cause } from '../store/job-store.ts';
import type { Store } from '../store/store.ts';

/** Whether job actions, submits and replies are audited (off only to measure what auditing costs). */
export interface JobAuditing {
  enabled: boolean;
  now: () => number;
}

/** The object a work's result names when the cause names none: the job it acted on or created. */
function objectOf(result: unknown): AuditObject | null {
  if (typeof result !== 'object' || result === null || !('jobId' in result)) return null;
  const { jobId, uniqueId } = result as { jobId: unknown; uniqueId?: unknown };
  return typeof jobId === 'number'
    ? { type: 'Job', key: String(jobId), uniqueId: typeof uniqueId === 'number' ? uniqueId : null }
    : null;
}

/**
 * Runs `work` under `cause` (the job history's) and, when the cause is a person's, adds its audit entry to the same
 * transaction: the action, the actor and the object (the cause's, else the job the work answers).
 */
export async function runAudited<T>(
  tx: Store,
  cause: Cause | undefined,
  auditing: JobAuditing | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const result = await tx.jobs.withCause(cause, work);
  const actor = cause?.actor;
  if (actor && auditing?.enabled)
    await tx.audit.add({
      time: auditing.now(),
      actor,
      action: cause.cause,
      object: cause.object ?? objectOf(result),
      detail: cause.detail,
      diff: null,
      restore: null,
    });
  return result;
}
