import type { JobStatus } from '../model/fields.ts';

/**
 * A job and its files as the engine and the services see them (the rows of migration 0002). Pure types.
 */

/** A parameter value of a job, as shown in GET /Job (DESIGN §12). Dates are epoch ms with the zone they came in. */
export interface JobParameter {
  Name: string;
  /** `JobDefinitionParameter:<partition>.<definition>.<name>` (spec §2.3). */
  JobDefinitionParameter: string;
  Direction: 'In' | 'Out' | 'InOut';
  DataType: 'String' | 'Number' | 'Date';
  InValueString: string | null;
  InValueNumber: number | null;
  InValueDate: { ms: number; zone: string } | null;
  OutValueString: string | null;
  OutValueNumber: number | null;
  OutValueDate: { ms: number; zone: string } | null;
}

/** What a job needs of its definition, copied at submit: editing the definition later does not change it. */
export interface JobSpec {
  type: string;
  script: string | null;
  completionStrategy: 'Default' | 'External';
  returnCodeMap: string;
  /** Action per handled final status (Continue, Restart, …). */
  restart: Record<string, string>;
  maxStarts: number | null;
  keepJobs: number | null;
}

/** The JSON column of a job: everything not filtered on. */
export interface JobData {
  /** Zone dates of this job are written in (the requested start's zone, else the server's). */
  zone: string;
  parameters: JobParameter[];
  notes: string[];
  spec: JobSpec;
  /** Operator message waiting for a reply (RequestRestart), by id. */
  operatorMessage?: number;
  /** In ConsoleRestart: the final status the job reached, taken if the operator declines the restart. */
  pendingFinal?: JobStatus;
  /** `runnow` was asked: dispatch ignoring queue holds and limits. */
  runNow?: boolean;
  /** CompletionStrategy External: the script ended; the job waits for updateJob, not for its agent. */
  scriptEnded?: boolean;
}

export interface JobRecord {
  jobId: number;
  uniqueId: number;
  /** Business key of the definition without the type, e.g. `GLOBAL.System_Sleep`. */
  definition: string;
  /** Partition of the definition: its privileges govern the job. */
  partition: string;
  status: JobStatus;
  priority: number;
  queue: string;
  processServer: string | null;
  requestedStart: number;
  scheduledStart: number | null;
  runStart: number | null;
  runEnd: number | null;
  returnCode: number | null;
  parentJob: number | null;
  jobGroup: number | null;
  /** Requested start of the top-level parent (the job's own for a top-level job): the dispatch order's 2nd key. */
  topStart: number;
  /** Dispatch attempt; a report for another attempt is stale. */
  attempt: number;
  /** Automatic restarts so far in this job's restart line. */
  starts: number;
  submittedBy: string;
  description: string | null;
  data: JobData;
  creationTime: number;
  modificationTime: number;
}

export interface JobFileRecord {
  uniqueId: number;
  jobId: number;
  name: string;
  fileOrder: number;
  type: 'Output' | 'Log';
  format: string;
  size: number;
}

