/** The signed-in user and what they may do: the server's own grants, so the page offers only allowed buttons. */
/** @import { ActionButton, Session } from './api-types.js' */

/** @type {Session | null} */
let current = null;
/** How far the server's clock is ahead of this browser's (ms), as of the session's answer. */
let skew = 0;

/** @param {Session | null} s */
export const setSession = (s) => {
  current = s;
  skew = typeof s?.serverTime === 'number' ? s.serverTime - Date.now() : 0;
};
export const session = () => current;

/**
 * "Now" on the server's clock: plans (the forecast, a window's calendar) are the server's, and a workstation whose
 * clock is off must not shift them.
 */
export const serverNow = () => Date.now() + skew;

/**
 * Same rule as the server: some grant names the type (or *), the partition (or *) and the privilege.
 * @param {string} type
 * @param {string} partition
 * @param {string} privilege
 */
export function can(type, partition, privilege) {
  if (!current) return false;
  return current.grants.some(
    (g) =>
      (g.type === '*' || g.type === type) &&
      (g.partition === '*' || g.partition === partition) &&
      g.privileges.includes(privilege),
  );
}

/**
 * Whether some grant gives `privilege` on `type` in some partition: a "New" button is offered before the partition
 * is chosen (the server judges the one chosen).
 * @param {string} type
 * @param {string} privilege
 */
export const canSomewhere = (type, privilege) =>
  current?.grants.some((g) => (g.type === '*' || g.type === type) && g.privileges.includes(privilege)) ?? false;

/**
 * The partition of a business key `<partition>.<name>` (a job's is its definition's).
 * @param {unknown} key
 * @returns {string}
 */
export const partitionOf = (key) =>
  typeof key === 'string' && key.includes('.') ? key.slice(0, key.indexOf('.')) : 'GLOBAL';

/**
 * Whether a job action applies in a status (the engine's table, sent with the session).
 * @param {string} action
 * @param {string} status
 */
export const actionApplies = (action, status) => current?.actions?.[action]?.includes(status) ?? false;

/** The job action buttons the page may show, from the server's action table (name, label, confirm, privileges …). */
/** @returns {ActionButton[]} */
export const actionButtonSpecs = () => current?.actionButtons ?? [];

/** @param {string} status */
export const isFinal = (status) => current?.finalStatuses?.includes(status) ?? false;

/**
 * Whether a job in `status` may still be changed (PATCH /Job/<id>: it has not started; the server's list).
 * @param {string} status
 */
export const modifiable = (status) => current?.modifiableStatuses?.includes(status) ?? false;
