/** Small pure helpers for showing values. */
/** @import { JobParameter } from './api-types.js' */

const GROUPS = {
  ok: ['Completed'],
  bad: ['Error', 'Killed', 'Unknown', 'Never'],
  quiet: ['Canceled', 'Ignored', 'Skipped', 'Disabled'],
  run: ['Running', 'PreRunning', 'PostRunning', 'Dispatched', 'Assigned', 'Killing', 'Canceling', 'Waiting'],
  wait: ['Console', 'ConsoleRestart', 'Held', 'QueueHeld', 'Overdue'],
};
const CLASS_OF = new Map(Object.entries(GROUPS).flatMap(([cls, statuses]) => statuses.map((s) => [s, cls])));

/**
 * The CSS class of a status badge: `status st-run`, … (everything else is pending).
 * @param {string} status
 */
export const statusClass = (status) => `status st-${CLASS_OF.get(status) ?? 'pending'}`;

/**
 * A value as text; null and undefined are an em dash.
 * @param {unknown} v
 */
export const text = (v) => (v === null || v === undefined || v === '' ? '—' : String(v));

/**
 * A parameter's In or Out value, whichever of its typed fields is set.
 * @param {JobParameter} p
 * @param {'In' | 'Out'} dir
 * @returns {string | number | null}
 */
export function paramValue(p, dir) {
  for (const k of /** @type {const} */ (['ValueString', 'ValueNumber', 'ValueDate'])) {
    const v = p[`${dir}${k}`];
    if (v !== null && v !== undefined) return v;
  }
  return null;
}

/**
 * What went wrong, in words: an error's message (the server's, for an ApiError), anything else thrown as text.
 * @param {unknown} err
 */
export const errorText = (err) => (err instanceof Error ? err.message : String(err));

/**
 * Status filter presets of the job monitor: the filter's value and its label.
 * @type {[string, string][]}
 */
export const STATUS_PRESETS = [
  ['', 'Any status'],
  ['Running,PreRunning,PostRunning,Dispatched,Assigned,Killing,Canceling,Waiting', 'Running'],
  ['Scheduled,Queued,QueueHeld,Held,EventWait,LockWait,Overdue,Chained,New,Delayed', 'Waiting'],
  ['Console,ConsoleRestart', 'Needs a reply'],
  ['Error,Killed,Unknown', 'Failed'],
  ['Completed', 'Completed'],
];

/**
 * `2026/11/23 21:54:33,487 UTC` → `11/23 21:54:33` for tables (the full text goes in the title).
 * @param {unknown} v
 */
export function shortTime(v) {
  const m = typeof v === 'string' ? /^\d{4}\/(\d{2}\/\d{2}) (\d{2}:\d{2}:\d{2})/.exec(v) : null;
  return m ? `${m[1]} ${m[2]}` : text(v);
}
