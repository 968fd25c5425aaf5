import type { ServerMessage } from '../agent/protocol.ts';
import type { JobRecord } from '../domain/job.ts';

/**
 * What a transaction decided should happen outside the database. Collected while the transaction runs and
 * carried out only after it commits: an agent never hears of a dispatch that was rolled back.
 */
export interface Effects {
  /**
   * Messages to agents, by process server key; with `instance` (a `run`), only to that agent process: an attempt
   * dispatched to an instance replaced meanwhile is not sent to its successor.
   */
  messages: Array<{ processServer: string; message: ServerMessage; instance?: string }>;
  /** System jobs that became Running and are to be run inside the server. */
  startSystem: JobRecord[];
  /** System jobs to stop (killed, set Unknown). */
  stopSystem: number[];
  /** Jobs deleted: remove their files from disk. */
  removeFiles: number[];
  /** Definitions whose jobs finished, with the number of finished jobs their KeepJobs keeps. */
  purge: Map<string, number>;
  /** Jobs told to run now: the next dispatch pass starts them ignoring queue holds and limits. */
  runNow: number[];
  /** Run the dispatcher again. */
  dispatch: boolean;
  /** Wake the dispatcher at these instants (Scheduled jobs, time windows opening). */
  wakeAt: number[];
  /** Instants at which queued jobs' window openings end: look for overdue jobs then. */
  overdueAt: number[];
}

export const newEffects = (): Effects => ({
  messages: [],
  startSystem: [],
  stopSystem: [],
  removeFiles: [],
  purge: new Map(),
  runNow: [],
  dispatch: false,
  wakeAt: [],
  overdueAt: [],
});
