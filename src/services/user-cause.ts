import { auditActor, type Principal } from '../security/privileges.ts';
import type { AuditObject } from '../store/audit-store.ts';
import type { Cause } from '../store/job-store.ts';

/**
 * The job-history cause of a user's action: the user and the action's name. It carries the actor, so the engine
 * writes the action's audit entry in its transaction (engine/audited-work.ts, docs/architecture.md §18); `object`
 * names what the action is about when it is not the job the work answers.
 */
export const userCause = (
  principal: Principal,
  cause: string,
  detail: string | null = null,
  object?: AuditObject,
): Cause => ({
  user: principal.user,
  cause,
  detail,
  actor: auditActor(principal),
  ...(object ? { object } : {}),
});
