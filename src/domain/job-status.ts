/**
 * The stages of docs/architecture.md §6. Pure. Which action applies in which status is the action table's
 * (job-actions.ts).
 */

/** Every process status of docs/architecture.md §6, with its one-letter code. */
export const JOB_STATUSES = {
  New: '-',
  Chained: 'P',
  Disabled: 'J',
  Delayed: 'D',
  Scheduled: 'S',
  QueueHeld: 'B',
  Held: 'H',
  EventWait: 'V',
  LockWait: 'I',
  Queued: 'Q',
  Dispatched: 'q',
  Assigned: 'a',
  Overdue: 'O',
  PreRunning: '6',
  Running: 'R',
  PostRunning: '8',
  Waiting: 'W',
  Console: 'L',
  ConsoleRestart: 'r',
  Killing: 'k',
  Canceling: 'c',
  Completed: 'C',
  Error: 'E',
  Killed: 'K',
  Canceled: 'A',
  Unknown: 'U',
  Ignored: 'G',
  Skipped: 's',
  Never: 'n',
} as const;
export type JobStatus = keyof typeof JOB_STATUSES;
/** Whether a value is one of the process statuses (a name of JOB_STATUSES). */
export const isJobStatus = (v: unknown): v is JobStatus => typeof v === 'string' && Object.hasOwn(JOB_STATUSES, v);
export const JOB_STATUS_NAMES: readonly JobStatus[] = Object.keys(JOB_STATUSES).filter(isJobStatus);

export const INITIAL: readonly JobStatus[] = ['New', 'Chained', 'Disabled', 'Delayed'];
export const PENDING: readonly JobStatus[] = [
  'Scheduled',
  'QueueHeld',
  'Held',
  'EventWait',
  'LockWait',
  'Queued',
  'Dispatched',
  'Assigned',
  'Overdue',
];
export const ACTIVE: readonly JobStatus[] = [
  'PreRunning',
  'Running',
  'PostRunning',
  'Waiting',
  'Console',
  'ConsoleRestart',
  'Killing',
  'Canceling',
];
export const FINAL: readonly JobStatus[] = [
  'Completed',
  'Error',
  'Killed',
  'Canceled',
  'Unknown',
  'Ignored',
  'Skipped',
  'Never',
];

/**
 * Jobs that hold a slot of their queue and process server: handed to a process server and not yet final. A job in
 * ConsoleRestart has ended and only waits for an operator, so it holds none.
 */
export const OCCUPYING: readonly JobStatus[] = [
  'Dispatched',
  'Assigned',
  ...ACTIVE.filter((s) => s !== 'ConsoleRestart'),
];

const finalSet = new Set<JobStatus>(FINAL);
export const isFinal = (s: JobStatus): boolean => finalSet.has(s);
export const statusCode = (s: JobStatus): string => JOB_STATUSES[s];
