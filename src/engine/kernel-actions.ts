/**
 * A person's actions on a job (docs/architecture.md §6 and §6a): cancel, kill, set Unknown, hold, release, run now,
 * restart, update, disable and enable. Apart from the kernel because they only pick which of its transitions runs;
 * the kernel hands them those transitions when it is built.
 */
import type { JobRecord } from '../domain/job.ts';
import { hasChildren, SYSTEM_SERVER } from '../domain/job.ts';
import { actionApplies, type KernelAction } from '../domain/job-actions.ts';
import { isFinal, PENDING } from '../domain/job-status.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import type { Effects } from './effects.ts';
import type { RerunOptions } from './job-rows.ts';
import type { ActOptions, FinalOutcome, Marked } from './kernel-types.ts';
import { move, onAgent } from './status-move.ts';

/** The kernel's transitions an action runs (see Kernel). */
export interface KernelTransitions {
  finish(tx: Store, job: JobRecord, outcome: FinalOutcome, now: number, effects: Effects): Promise<void>;
  settle(tx: Store, job: JobRecord, now: number, effects: Effects): Promise<void>;
  rerun(tx: Store, job: JobRecord, now: number, effects: Effects, options: RerunOptions): Promise<JobRecord>;
  /** Runs the reactions that cancel or kill a job's children. */
  emitTree(kind: 'cancelTree' | 'killTree', tx: Store, job: JobRecord, now: number, effects: Effects): Promise<unknown>;
  /** Runs the reactions to a final status set by hand (a chain the job stopped goes on). */
  emitMarked(tx: Store, marked: Marked, now: number, effects: Effects): Promise<unknown>;
}

export class KernelActions {
  private readonly kernel: KernelTransitions;

  constructor(kernel: KernelTransitions) {
    this.kernel = kernel;
  }

  /** See Kernel.act. */
  async act(
    tx: Store,
    job: JobRecord,
    action: KernelAction,
    options: ActOptions,
    now: number,
    effects: Effects,
  ): Promise<JobRecord> {
    switch (action) {
      case 'cancel':
        await this.cancel(tx, job, options.cancelRecurrence === true, now, effects);
        return job;
      case 'kill':
        await this.kill(tx, job, now, effects);
        return job;
      case 'unknown':
        if (job.processServer === SYSTEM_SERVER) effects.stopSystem.push(job.jobId);
        else if (onAgent(job) && !isFinal(job.status)) this.abandon(job, effects);
        await this.kernel.finish(
          tx,
          job,
          { status: 'Unknown', notes: [`Set Unknown by ${options.user}`] },
          now,
          effects,
        );
        return job;
      case 'hold':
        return this.save(tx, job, 'Held', now);
      case 'release':
        await this.kernel.settle(tx, job, now, effects);
        await tx.jobs.updateMany([job]);
        return job;
      case 'runnow':
        job.data.runNow = true;
        effects.runNow.push(job.jobId);
        effects.dispatch = true;
        return this.save(tx, job, 'Queued', now, effects);
      case 'restart':
        return this.kernel.rerun(tx, job, now, effects, {
          keepPlace: false,
          submittedBy: options.user,
          starts: 0,
          ...(options.at !== undefined ? { at: options.at } : {}),
        });
      case 'updateJob':
        if (options.status === undefined) {
          job.modificationTime = now;
          await tx.jobs.updateMany([job]);
          return job;
        }
        if (onAgent(job) && !job.data.scriptEnded) this.abandon(job, effects);
        await this.kernel.finish(tx, job, { status: options.status }, now, effects);
        return job;
      case 'markcompleted':
        return this.mark(tx, job, 'Completed', options, now, effects);
      case 'markerror':
        return this.mark(tx, job, 'Error', options, now, effects);
      case 'disable':
        return this.save(tx, job, 'Disabled', now);
      case 'enable':
        return this.save(tx, job, 'Chained', now);
    }
  }

  /**
   * markcompleted, markerror (docs/architecture.md §6): a final job takes another final status by hand. Not through
   * `finish`: its restart behaviour, its events and its chain's handlers ran when it ended and do not run again.
   * The history entry names the user, the status it had and the comment; what else moves with it (a chain that
   * goes on) is recorded with the same cause.
   */
  private async mark(
    tx: Store,
    job: JobRecord,
    to: JobStatus,
    options: ActOptions,
    now: number,
    effects: Effects,
  ): Promise<JobRecord> {
    const from = job.status;
    const comment = options.comment ?? '';
    const cause = {
      user: options.user,
      cause: to === 'Completed' ? 'markcompleted' : 'markerror',
      detail: `from ${from}: ${comment}`,
    };
    await tx.jobs.withCause(cause, async () => {
      move(job, to, now);
      job.data.notes.push(`Marked ${to} by ${options.user} (was ${from}): ${comment}`);
      await tx.jobs.updateMany([job]);
      await this.kernel.emitMarked(tx, { job, from }, now, effects);
    });
    return job;
  }

  private abandon(job: JobRecord, effects: Effects): void {
    effects.messages.push({
      processServer: job.processServer as string,
      message: { type: 'abandon', jobId: job.jobId, attempt: job.attempt },
    });
  }

  private async save(tx: Store, job: JobRecord, status: JobStatus, now: number, effects?: Effects): Promise<JobRecord> {
    move(job, status, now);
    await tx.jobs.updateMany([job]);
    if (effects && status === 'Queued') effects.dispatch = true;
    if (effects && status === 'Scheduled') effects.wakeAt.push(job.requestedStart);
    return job;
  }

  private async cancel(tx: Store, job: JobRecord, recurrence: boolean, now: number, effects: Effects): Promise<void> {
    // Cancel reaches a chain's (or step's) children, none of which has started.
    if (hasChildren(job)) await this.kernel.emitTree('cancelTree', tx, job, now, effects);
    await this.kernel.finish(tx, job, { status: 'Canceled' }, now, effects);
    if (!recurrence || job.jobGroup === null) return;
    const cancelable = PENDING.filter((s) => actionApplies('cancel', s));
    for (const other of await tx.jobs.listByStatus(cancelable, { jobGroup: job.jobGroup, limit: 10_000 }))
      await this.kernel.finish(
        tx,
        other,
        { status: 'Canceled', notes: [`Recurrence canceled with Job:${job.jobId}`] },
        now,
        effects,
      );
  }

  private async kill(tx: Store, job: JobRecord, now: number, effects: Effects): Promise<void> {
    if (hasChildren(job)) {
      await this.kernel.emitTree('killTree', tx, job, now, effects);
      return;
    }
    if (job.processServer === SYSTEM_SERVER || job.data.scriptEnded) {
      effects.stopSystem.push(job.jobId);
      await this.kernel.finish(tx, job, { status: 'Killed' }, now, effects);
      return;
    }
    effects.messages.push({
      processServer: job.processServer as string,
      message: { type: 'kill', jobId: job.jobId, attempt: job.attempt },
    });
    await this.save(tx, job, 'Killing', now);
  }
}
