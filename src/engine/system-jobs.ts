import type { JobRecord } from '../domain/job.ts';
import type { FinalOutcome } from './kernel.ts';

/**
 * Runs one in-server job to its end. The runner finishes the job itself (usually in the transaction that commits
 * its work, so a crash leaves either both or neither); a runner that throws ends the job in Error.
 */
export type SystemRunner = (job: JobRecord) => Promise<void>;

/**
 * Jobs the server runs itself on GLOBAL.System (docs/architecture.md §7). They need no OS process: System_Sleep is a timer.
 * Chains are run by chains.ts (they only wait for their children), and jobs that ask people (System_OperatorMessage,
 * UserMessage) by ask.ts. Capabilities outside the engine (imports) register a runner for their definition; a System
 * job nobody runs ends in Error saying so, rather than waiting forever.
 */
export class SystemJobs {
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly done: (jobId: number, outcome: FinalOutcome) => Promise<void>;
  private readonly runners = new Map<string, SystemRunner>();

  constructor(done: (jobId: number, outcome: FinalOutcome) => Promise<void>) {
    this.done = done;
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
        void this.done(job.jobId, { status: 'Error', returnCode: null, notes: [`The job failed: ${why}`] }).catch(
          () => {},
        );
      });
      return;
    }
    if (job.definition === 'GLOBAL.System_Sleep') {
      const ms = Math.max(0, job.data.parameters.find((p) => p.Name === 'MilliSeconds')?.InValueNumber ?? 1000);
      const finish = () => {
        this.timers.delete(job.jobId);
        void this.done(job.jobId, { status: 'Completed', returnCode: 0 }).catch(() => {});
      };
      if (ms <= 0) setImmediate(finish);
      else this.timers.set(job.jobId, setTimeout(finish, Math.min(ms, 2 ** 31 - 1)));
      return;
    }
    const what = job.data.spec.type === 'System' ? `System definition ${job.definition}` : `${job.data.spec.type} job`;
    setImmediate(() => {
      void this.done(job.jobId, {
        status: 'Error',
        returnCode: null,
        notes: [`A ${what} cannot run in this version of Millrace`],
      }).catch(() => {});
    });
  }

  /** Stops a running in-server job (killed or set Unknown); its final status is set by the caller. */
  stop(jobId: number): void {
    clearTimeout(this.timers.get(jobId));
    this.timers.delete(jobId);
  }

  stopAll(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
