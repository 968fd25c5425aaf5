import type { JobRecord } from '../domain/job.ts';
import type { FinalOutcome } from './kernel.ts';

/**
 * Runs one in-server job to its end. The runner finishes the job itself (usually in the transaction that commits
 * its work, so a crash leaves either both or neither); a runner that throws ends the job in Error.
 */
export type SystemRunner = (job: JobRecord) => Promise<void>;

/** How long after a failed attempt to store a System job's end it is tried again. */
const RETRY_MS = 2000;

/**
 * Jobs the server runs itself on GLOBAL.System (docs/architecture.md §7). They need no OS process: System_Sleep is a timer.
 * Chains are run by chains.ts (they only wait for their children), and jobs that ask people (System_OperatorMessage,
 * UserMessage) by question-jobs.ts. Capabilities outside the engine (imports) register a runner for their definition; a System
 * job nobody runs ends in Error saying so, rather than waiting forever.
 */
export class SystemJobs {
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly retries = new Map<number, NodeJS.Timeout>();
  private readonly done: (jobId: number, outcome: FinalOutcome) => Promise<void>;
  private readonly notStored: (jobId: number, err: unknown) => void;
  private readonly runners = new Map<string, SystemRunner>();
  private stopped = false;

  /** `done` stores a job's end; `notStored` is told when it could not, before it is tried again. */
  constructor(
    done: (jobId: number, outcome: FinalOutcome) => Promise<void>,
    notStored: (jobId: number, err: unknown) => void,
  ) {
    this.done = done;
    this.notStored = notStored;
  }

  /** Registers the runner of a System definition (by key, e.g. `GLOBAL.System_Import_Archive`). */
  register(definition: string, runner: SystemRunner): void {
    this.runners.set(definition, runner);
  }

  start(job: JobRecord): void {
    const runner = this.runners.get(job.definition);
    if (runner) {
      runner(job).catch((err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        this.end(job.jobId, { status: 'Error', returnCode: null, notes: [`The job failed: ${why}`] });
      });
      return;
    }
    if (job.definition === 'GLOBAL.System_Sleep') {
      const ms = Math.max(0, job.data.parameters.find((p) => p.Name === 'MilliSeconds')?.InValueNumber ?? 1000);
      const finish = () => {
        this.timers.delete(job.jobId);
        this.end(job.jobId, { status: 'Completed', returnCode: 0 });
      };
      if (ms <= 0) setImmediate(finish);
      else this.timers.set(job.jobId, setTimeout(finish, Math.min(ms, 2 ** 31 - 1)));
      return;
    }
    const what = job.data.spec.type === 'System' ? `System definition ${job.definition}` : `${job.data.spec.type} job`;
    setImmediate(() => {
      this.end(job.jobId, {
        status: 'Error',
        returnCode: null,
        notes: [`A ${what} cannot run in this version of Millrace`],
      });
    });
  }

  /**
   * Stores a job's end. One that could not be stored (a full disk, the database away) is tried again every
   * RETRY_MS until it is, so the job does not stay Running (docs/architecture.md §9); `done` ignores a job that
   * ended otherwise meanwhile.
   */
  private end(jobId: number, outcome: FinalOutcome): void {
    this.done(jobId, outcome).catch((err: unknown) => {
      if (this.stopped) return;
      this.notStored(jobId, err);
      const retry = setTimeout(() => {
        this.retries.delete(jobId);
        this.end(jobId, outcome);
      }, RETRY_MS);
      retry.unref();
      this.retries.set(jobId, retry);
    });
  }

  /** Stops a running in-server job (killed or set Unknown); its final status is set by the caller. */
  stop(jobId: number): void {
    clearTimeout(this.timers.get(jobId));
    this.timers.delete(jobId);
    clearTimeout(this.retries.get(jobId));
    this.retries.delete(jobId);
  }

  stopAll(): void {
    this.stopped = true;
    for (const t of [...this.timers.values(), ...this.retries.values()]) clearTimeout(t);
    this.timers.clear();
    this.retries.clear();
  }
}
