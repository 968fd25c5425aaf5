/** Small pure helpers for showing values. */

const GROUPS = {
  ok: ['Completed'],
  bad: ['Error', 'Killed', 'Unknown', 'Never'],
  quiet: ['Canceled', 'Ignored', 'Skipped', 'Disabled'],
  run: ['Running', 'PreRunning', 'PostRunning', 'Dispatched', 'Assigned', 'Killing', 'Canceling', 'Waiting'],
  wait: ['Console', 'ConsoleRestart', 'Held', 'QueueHeld', 'Overdue'],
};
const CLASS_OF = new Map(Object.entries(GROUPS).flatMap(([cls, statuses]) => statuses.map((s) => [s, cls])));

/** The CSS class of a status badge: `status st-run`, … (everything else is pending). */
export const statusClass = (status) => `status st-${CLASS_OF.get(status) ?? 'pending'}`;

/** A value as text; null and undefined are an em dash. */
export const text = (v) => (v === null || v === undefined || v === '' ? '—' : String(v));

/** A parameter's In or Out value, whichever of its typed fields is set. */
export function paramValue(p, dir) {
  for (const k of [`${dir}ValueString`, `${dir}ValueNumber`, `${dir}ValueDate`])
    if (p[k] !== null && p[k] !== undefined) return p[k];
  return null;
}

/** Status filter presets of the job monitor. */
export const STATUS_PRESETS = [
  ['', 'Any status'],
  ['Running,PreRunning,PostRunning,Dispatched,Assigned,Killing,Canceling,Waiting', 'Running'],
  ['Scheduled,Queued,QueueHeld,Held,EventWait,LockWait,Overdue,Chained,New,Delayed', 'Waiting'],
  ['Console,ConsoleRestart', 'Needs a reply'],
  ['Error,Killed,Unknown', 'Failed'],
  ['Completed', 'Completed'],
];

/** `2026/11/23 21:54:33,487 UTC` → `11/23 21:54:33` for tables (the full text goes in the title). */
export function shortTime(v) {
  const m = typeof v === 'string' ? /^\d{4}\/(\d{2}\/\d{2}) (\d{2}:\d{2}:\d{2})/.exec(v) : null;
  return m ? `${m[1]} ${m[2]}` : text(v);
}
