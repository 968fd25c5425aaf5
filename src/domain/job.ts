import type { DeadlineAlertKind } from './deadline.ts';
import type { JobStatus } from './job-status.ts';

/**
 * A job and its files as the engine and the services see them (the rows of migration 0002). Pure types.
 */

/** A parameter value of a job, as shown in GET /Job (docs/architecture.md §12). Dates are epoch ms with the zone they came in. */
export interface JobParameter {
  Name: string;
  /** `JobDefinitionParameter:<partition>.<definition>.<name>`. */
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
  // Time and flow. Optional: jobs stored before these existed have none.
  /** TimeWindow key the job may start in, and the zone it is read in when the window has none. */
  timeWindow?: string | null;
  windowZone?: string;
  /** Events the job waits for (EventWait), and whether starting consumes them. */
  waitEvents?: Array<{ event: string; clears: boolean }>;
  /** Events raised when the job reaches a final status. */
  raiseEvents?: Array<{ event: string; status: string; comment: string | null }>;
  /** Locks held while the job runs; a job whose lock is taken waits in LockWait. */
  locks?: string[];
  /** What happens when the job misses its time window (ActWhenOverdue), and the event raised then. */
  overdue?: OverdueAction;
  overdueEvent?: string | null;
  /** What a recurrence does with occurrences missed while the server was down. */
  misfire?: MisfirePolicy;
  // People in the loop.
  /** The credential the job runs with: a key `<partition>.<name>` or a VirtualUser, resolved when it starts. */
  credential?: string | null;
  /** A UserMessage job's question, answers and participants, as the definition had them at submit. */
  userMessage?: UserMessageSpec | null;
  /** Seconds it may stay active before it is killed (MaxRunTime: the definition's, a chain's, or the submit's). */
  maxRunTime?: number | null;
  /** An HTTP definition's request or a SQL definition's script, as the definition had it at submit. */
  request?: Record<string, unknown> | null;
  /** Out parameters an HTTP job fills from a JSON path of its response, by name. */
  jsonPaths?: Record<string, string>;
}

/** As the definition stores it: a response's Status and ReturnCode may be null (their declared defaults apply). */
export interface UserMessageSpec {
  Text: string;
  Responses?: Array<{ Response: string; Status?: 'Completed' | 'Error' | null; ReturnCode?: number | null }> | null;
  Participants?: string[] | null;
}

export type OverdueAction = 'Scheduled' | 'Overdue' | 'Canceled' | 'Held';
export type MisfirePolicy = 'Skip' | 'RunOnce' | 'RunAll';

/**
 * A job's place in a chain (docs/architecture.md §3). A call of another chain is both a call and a chain. The chain job keeps the
 * chain's structure as it was at submit, so editing the JobChain later changes only later submits.
 */
export interface ChainInfo {
  /** A call job: its step's index and its own index in the step's Calls. */
  call?: { step: number; call: number };
  /**
   * A step job: its index in the chain's Steps, how often the step ran (restarts, GotoStep), and its name (runtime
   * statistics per step; step jobs made before them have none).
   */
  step?: { index: number; runs: number; name?: string };
  /**
   * A chain job: how deep it is nested in other chains. Its steps and handlers (`ChainStructure`) are kept apart
   * from its row (JobStore.chainStructure): they never change, and the row is read and written at every step.
   */
  structure?: { depth: number };
  /**
   * A chain job that ended because of a step's outcome: that step job. A person marking the step (or its failed
   * call) Completed lets the chain go on from there (docs/architecture.md §6).
   */
  endedBy?: number;
}

/** The steps and status handlers of a chain job, as its JobChain had them at submit. */
export interface ChainStructure {
  steps: ChainStepSpec[];
  handlers: ChainHandlerSpec[];
}

export interface ChainHandlerSpec {
  Status: string;
  Action: string;
  GotoStep?: string | null;
}

export interface PreconditionSpec {
  TimeWindow?: string | null;
  TimeWindowStatus?: string | null;
  TimeZone?: string | null;
  Expression?: string | null;
}

export interface ChainCallSpec {
  JobDefinition: string;
  Description?: string | null;
  Precondition?: PreconditionSpec | null;
  ParameterMappings?: Array<{
    Parameter: string;
    Source: string;
    Value?: string | null;
    ChainParameter?: string | null;
    FromStep?: string | null;
    FromCall?: number | null;
    FromParameter?: string | null;
  }>;
  Priority?: number | null;
  Queue?: string | null;
  HoldOnSubmit?: boolean | null;
  SubmitDisabled?: boolean | null;
  TimeWindow?: string | null;
}

export interface ChainStepSpec {
  Name: string;
  Description?: string | null;
  Precondition?: PreconditionSpec | null;
  Calls: ChainCallSpec[];
  StatusHandlers?: ChainHandlerSpec[];
  MaxRestarts?: number | null;
}

/** A job of a recurrence: which SubmitFrame, the series' anchor and this job's occurrence. */
export interface RecurrenceInfo {
  frame: string;
  anchor: number;
  occurrence: number;
  /** Its successor was submitted (it is submitted once the job's occurrence comes). */
  next?: boolean;
}

/** The JSON column of a job: everything not filtered on. */
export interface JobData {
  /** Zone dates of this job are written in (the requested start's zone, else the server's). */
  zone: string;
  parameters: JobParameter[];
  notes: string[];
  spec: JobSpec;
  /** Operator message waiting for a reply (RequestRestart, System_OperatorMessage), by id. */
  operatorMessage?: number;
  /** User message waiting for a participant's reply (a UserMessage job in Console), by id. */
  userMessage?: number;
  /** In ConsoleRestart: the final status the job reached, taken if the operator declines the restart. */
  pendingFinal?: JobStatus;
  /** `runnow` was asked: dispatch ignoring queue holds and limits. */
  runNow?: boolean;
  /** CompletionStrategy External: the script ended; the job waits for updateJob, not for its agent. */
  scriptEnded?: boolean;
  /** Part of a chain: the chain job, a step job or a call job. */
  chain?: ChainInfo;
  recurrence?: RecurrenceInfo;
  /** Queued while its time window was open: when that opening ends. Still waiting then → overdue. */
  windowClosesAt?: number;
  /**
   * A System job running inside a server node that shares its database with others: that node's id. When the node
   * dies, the timer owner sets the job Unknown (docs/architecture.md §16).
   */
  runNode?: string;
  /**
   * The agent process (its instance id) the job's current attempt was dispatched to, or that took it over from its
   * spool after a restart: a job is that instance's, not only its process server's (docs/architecture.md §16).
   */
  agentInstance?: string;
  /** Killed for running past its MaxRunTime (these seconds): its end is recorded with that cause. */
  overrun?: number;
  /**
   * The deadline alerts this run got, by Deadline key (docs/architecture.md §8c): written in the transaction that
   * raises each, so each is raised once per run across restarts and nodes.
   */
  deadlineAlerts?: Record<string, DeadlineAlertKind[]>;
  /**
   * The RaiserComment of the event each of its WaitEvents found Raised when it started (the one it consumed with
   * ClearsEvent), in WaitEvents order: its environment's MILLRACE_EVENT_COMMENT (docs/architecture.md §7b).
   */
  eventComments?: Array<{ definition: string; comment: string | null }>;
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

/** The built-in process server that runs System, JobChain and UserMessage jobs inside the server. */
export const SYSTEM_SERVER = 'GLOBAL.System';
/** The built-in queue the System process server serves: System and chain definitions submit into it. */
export const SYSTEM_QUEUE = 'GLOBAL.System';

/** A job whose children a chain made (a chain job, a step job): cancel and kill reach them. */
export const hasChildren = (job: JobRecord): boolean => Boolean(job.data.chain?.structure || job.data.chain?.step);
