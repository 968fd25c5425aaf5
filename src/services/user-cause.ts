import type { Principal } from '../security/privileges.ts';
import type { Cause } from '../store/job-store.ts';

/** The job-history cause of a user's action: the user and the action's name. */
export const userCause = (principal: Principal, cause: string, detail: string | null = null): Cause => ({
  user: principal.user,
  cause,
  detail,
});
