import { ACTIVE, FINAL, INITIAL, type JobStatus, PENDING } from './job-status.ts';

/**
 * The job actions, declared once (docs/architecture.md §6). Everything that offers or checks an action
 * reads this table: the route (`PUT /Job/<id>/<action>`, its enum and the OpenAPI text), the service (privileges,
 * body, the 409), the dashboard's buttons (sent with the session) and the CLI's verbs. The effect itself runs in the
 * kernel (`Kernel.act`, keyed by the same names; resubmit is a submit), which the domain may not import.
 */

/**
 * What an action's body is: process properties, a submit body, an external completion, or a person's comment
 * (required: why a final status is set by hand).
 */
export type ActionBody = 'properties' | 'submit' | 'completion' | 'comment';

/** A privilege the user must hold; `Job` is checked on the job's partition, `JobDefinition` on its definition's. */
export interface ActionPrivilege {
  type: 'Job' | 'JobDefinition';
  privilege: 'Control' | 'Submit';
}

export interface JobActionSpec {
  /** Statuses the action applies in; elsewhere it is 409 naming the status. */
  applies: readonly JobStatus[];
  privileges: readonly ActionPrivilege[];
  body: ActionBody;
  /** Answers a new job (201) instead of the job acted on. */
  creates: boolean;
  /** What it does, in a line (OpenAPI, CLI help). */
  effect: string;
  /** The dashboard's button: its label, and whether it asks first. None: the dashboard does not offer it. */
  button?: { label: string; confirm?: boolean };
  /** Offered as a verb of `millrace job`. */
  verb?: boolean;
}

const CONTROL: ActionPrivilege = { type: 'Job', privilege: 'Control' };
const SUBMIT: ActionPrivilege = { type: 'JobDefinition', privilege: 'Submit' };
/** Pending before it is handed to a process server (Dispatched jobs are on their way: too late to cancel). */
const WAITING: readonly JobStatus[] = ['Scheduled', 'QueueHeld', 'Held', 'EventWait', 'LockWait', 'Queued', 'Overdue'];

/** In the order the interface lists them (enum, 400 on an unknown action) and the dashboard shows them. */
export const JOB_ACTION_TABLE = {
  cancel: {
    applies: [...INITIAL, ...WAITING],
    privileges: [CONTROL],
    body: 'properties',
    creates: false,
    effect: 'Initial or Pending → Canceled; cancelRecurrence=true also ends its recurrence',
    button: { label: 'Cancel', confirm: true },
    verb: true,
  },
  kill: {
    applies: ['Running', 'Waiting', 'Console'],
    privileges: [CONTROL],
    body: 'properties',
    creates: false,
    effect: 'Running → Killing → Killed: the agent kills the process group',
    button: { label: 'Kill', confirm: true },
    verb: true,
  },
  unknown: {
    applies: [...INITIAL, ...PENDING, ...ACTIVE],
    privileges: [CONTROL],
    body: 'properties',
    creates: false,
    effect: 'any job that is not final → Unknown; a running process is abandoned, not killed',
  },
  hold: {
    applies: WAITING.filter((s) => s !== 'Held'),
    privileges: [CONTROL],
    body: 'properties',
    creates: false,
    effect: 'Pending → Held',
    button: { label: 'Hold' },
    verb: true,
  },
  release: {
    applies: ['Held'],
    privileges: [CONTROL],
    body: 'properties',
    creates: false,
    effect: 'Held → back into the pending flow, re-evaluated',
    button: { label: 'Release' },
    verb: true,
  },
  restart: {
    applies: FINAL,
    privileges: [CONTROL, SUBMIT],
    body: 'properties',
    creates: true,
    effect: 'a final job → a new job copied from it, with the body applied',
    button: { label: 'Restart' },
    verb: true,
  },
  resubmit: {
    applies: [...INITIAL, ...PENDING, ...ACTIVE, ...FINAL],
    privileges: [CONTROL, SUBMIT],
    body: 'submit',
    creates: true,
    effect: 'any job → a new job copied from it, with the submit body applied (also PUT /Job/<id>)',
    button: { label: 'Resubmit…' },
  },
  runnow: {
    applies: WAITING,
    privileges: [CONTROL],
    body: 'properties',
    creates: false,
    effect: 'a pending job skips its start time, window, events, locks and queue limits',
    button: { label: 'Run now' },
    verb: true,
  },
  updateJob: {
    applies: ['Running'],
    privileges: [CONTROL],
    body: 'completion',
    creates: false,
    effect: 'a Running job with CompletionStrategy External: Status (final), Description, JobNotes, Out parameters',
  },
  markcompleted: {
    applies: ['Error', 'Killed', 'Unknown'],
    privileges: [CONTROL],
    body: 'comment',
    creates: false,
    effect:
      'a failed final job → Completed, with a comment; its history keeps the status it had; a chain it stopped goes on; its restart behaviour does not run',
    button: { label: 'Mark completed' },
  },
  markerror: {
    applies: ['Completed'],
    privileges: [CONTROL],
    body: 'comment',
    creates: false,
    effect:
      'a Completed job → Error, with a comment; its history keeps the status it had; what followed from it is not undone',
    button: { label: 'Mark error' },
  },
  disable: {
    applies: ['Chained'],
    privileges: [CONTROL],
    body: 'properties',
    creates: false,
    effect: 'a chain step or call that has not started: Chained → Disabled',
  },
  enable: {
    applies: ['Disabled'],
    privileges: [CONTROL],
    body: 'properties',
    creates: false,
    effect: 'Disabled → Chained',
  },
} as const satisfies Record<string, JobActionSpec>;

export type JobAction = keyof typeof JOB_ACTION_TABLE;
export const isJobAction = (name: string): name is JobAction => Object.hasOwn(JOB_ACTION_TABLE, name);
export const JOB_ACTIONS: readonly JobAction[] = Object.keys(JOB_ACTION_TABLE).filter(isJobAction);

/** The actions whose effect is the kernel's `act`: all but those with a submit body, which are a submit (resubmit). */
export type KernelAction = {
  [A in JobAction]: (typeof JOB_ACTION_TABLE)[A]['body'] extends 'submit' ? never : A;
}[JobAction];

export const jobAction = (action: JobAction): JobActionSpec => JOB_ACTION_TABLE[action];
export const isKernelAction = (action: JobAction): action is KernelAction => jobAction(action).body !== 'submit';

export function actionApplies(action: JobAction, status: JobStatus): boolean {
  const applies: readonly JobStatus[] = JOB_ACTION_TABLE[action].applies;
  return applies.includes(status);
}

/** The wording of the 409 when an action does not apply. */
export function notApplicableMessage(action: JobAction, jobId: number, status: JobStatus): string {
  return `Action ${action} does not apply to Job:${jobId} in status ${status}`;
}
