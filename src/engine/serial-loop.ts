import { setImmediate as nextTurn } from 'node:timers/promises';
import { outsideRequests } from '../log/request-context.ts';
import type { Cause } from '../store/job-store.ts';
import type { Store } from '../store/store.ts';
import { type Effects, newEffects } from './effects.ts';
import { BATCH_SLICE_MS, GroupCommit } from './group-commit.ts';
import { loopYielder } from '../loop-yield.ts';
import { type Kernel, NeedsSerialLoop } from './kernel.ts';
import { itemAt } from '../domain/item-at.ts';
import { type JobAuditing, runAudited } from './audited-work.ts';

/** Work on jobs inside one transaction: the store, the effects to carry out after the commit, and the kernel. */
export type KernelWork<T> = (tx: Store, effects: Effects, kernel: Kernel) => Promise<T>;

export interface SerialLoopOptions {
  store: Store;
  kernel: Kernel;
  /** Carries out what a committed transaction decided (agent messages, in-server jobs, wake-ups). */
  apply(effects: Effects): void;
  /** One dispatch pass in its own transaction; run whenever one was asked for and no user action waits. */
  dispatch(): Promise<void>;
  /** Audit entries for the work of people (docs/architecture.md §18); none when absent. */
  auditing?: JobAuditing;
}

type Work = {
  /** Agent and in-server reports: many share one transaction. User actions run alone (their errors are theirs). */
  batch: boolean;
  run: KernelWork<unknown>;
  /** Recorded on the job status changes `run` writes (job history); none: the engine's own reasons. */
  cause: Cause | undefined;
  /** The job a report is about: a batch's jobs are read in one statement before its works run. */
  jobId?: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
};

/** Reports sharing one transaction at most. */
const REPORTS_PER_TRANSACTION = 500;
/** Submits sharing one commit at most. */
const SUBMITS_PER_COMMIT = 64;

/**
 * The one serial loop every change to existing jobs goes through (docs/architecture.md §6a): reports of a moment
 * are written in one transaction (as graphile-worker batches completions), actions each in their own, and a
 * dispatch pass follows whenever something may have freed or filled a slot. Submits of new jobs run beside it,
 * sharing commits (group-commit.ts). Effects happen only after the commit that decided them.
 */
export class SerialLoop {
  private readonly options: SerialLoopOptions;
  private readonly work: Work[] = [];
  /** Submits beside the serial loop, sharing commits. */
  private readonly submits: GroupCommit;
  private dispatchWanted = false;
  private looping = false;
  private idleWaiters: Array<() => void> = [];
  private stopped = false;

  constructor(options: SerialLoopOptions) {
    this.options = options;
    this.submits = new GroupCommit(options.store, SUBMITS_PER_COMMIT);
  }

  /**
   * Entry point for a person's action (and any change to existing jobs): runs `work` alone in one transaction of
   * the loop, in turn with every other change to jobs; resolves after the commit. `cause`: what the job history
   * records for the status changes it makes (a user's action).
   */
  mutate<T>(work: KernelWork<T>, cause?: Cause): Promise<T> {
    return this.enqueue(false, work, cause);
  }

  /**
   * Entry point for reports (agents, System jobs): like `mutate`, but may share its transaction with others.
   * `jobId`: the job it reads first; the jobs of a batch are read in one statement (JobStore.prefetch).
   */
  report(work: KernelWork<void>, jobId?: number): Promise<void> {
    return this.enqueue(true, work, undefined, jobId);
  }

  /**
   * Entry point for creating jobs: `work` runs in a transaction beside the serial loop, so plain submits do not
   * wait in turn, shared with the submits that arrived together (group commit: one commit for them all; each
   * succeeds or fails on its own). When it submits a job that must be created in the loop (a chain, a job waiting
   * for events: see Kernel.submit) its work is rolled back and `work` runs again in the loop.
   */
  async submit<T>(work: KernelWork<T>, cause?: Cause): Promise<T> {
    const kernel = this.options.kernel.outsideLoop();
    let effects = newEffects();
    try {
      const result = await this.submits.run((tx) => {
        effects = newEffects(); // the work runs again when its group is rolled back
        return runAudited(tx, cause, this.options.auditing, () => work(tx, effects, kernel));
      });
      this.options.apply(effects);
      return result;
    } catch (e) {
      if (e instanceof NeedsSerialLoop) return this.mutate(work, cause);
      throw e;
    }
  }

  /** Asks for a dispatch pass once the work queued before it is done. */
  requestDispatch(): void {
    this.dispatchWanted = true;
    this.kick();
  }

  /**
   * Resolves once nothing is queued or running in the loop (tests and shutdown). Once stopped, a dispatch pass asked
   * for meanwhile never runs, so it does not count: a second stop (a server closed twice) waited for it for ever.
   */
  idle(): Promise<void> {
    if (!this.looping && this.work.length === 0 && (!this.dispatchWanted || this.stopped)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** No more dispatch passes; the work already queued still runs (`idle` resolves after it). */
  stop(): void {
    this.stopped = true;
  }

  private enqueue<T>(batch: boolean, run: KernelWork<T>, cause?: Cause, jobId?: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const work: Work = { batch, run, cause, resolve: resolve as (value: unknown) => void, reject };
      if (jobId !== undefined) work.jobId = jobId;
      this.work.push(work);
      this.kick();
    });
  }

  private kick(): void {
    if (this.looping) return;
    this.looping = true;
    // The loop serves every caller's work, not the request that happened to start it: no request id on its lines.
    outsideRequests(() => setImmediate(() => void this.loop()));
  }

  private async loop(): Promise<void> {
    try {
      while (this.work.length > 0 || (this.dispatchWanted && !this.stopped)) {
        if (this.work.length > 0) {
          const first = itemAt(this.work, 0);
          const n = first.batch ? this.work.findIndex((w) => !w.batch) : 1;
          const count = n === -1 ? REPORTS_PER_TRANSACTION : Math.min(n, REPORTS_PER_TRANSACTION);
          await this.run(this.work.splice(0, count));
        }
        if (this.dispatchWanted && !this.stopped && this.work.every((w) => w.batch)) {
          this.dispatchWanted = false;
          await this.options.dispatch();
        }
        // The event loop's turn before the next transaction (as between groups of submits, group-commit.ts): on
        // SQLite one never leaves the microtask queue, and several back to back held timers and requests waiting.
        if (this.work.length > 0 || (this.dispatchWanted && !this.stopped)) await nextTurn();
      }
    } finally {
      this.looping = false;
      if (this.work.length > 0 || (this.dispatchWanted && !this.stopped)) this.kick();
      else for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async run(items: Work[]): Promise<void> {
    const effects = newEffects();
    const results: unknown[] = [];
    const { store, kernel } = this.options;
    try {
      await store.transaction(async (tx) => {
        await tx.jobs.lockDispatch();
        // A batch's jobs are read in one statement and written in one (round trips: docs/architecture.md §2, store).
        const ids = items.flatMap((w) => (w.jobId === undefined ? [] : [w.jobId]));
        if (ids.length > 1) await tx.jobs.prefetch(ids);
        if (items.length > 1) tx.jobs.deferUpdates();
        // As a group of submits does (group-commit.ts), a large batch lets the event loop go every few milliseconds.
        const pause = loopYielder(BATCH_SLICE_MS);
        for (const w of items) {
          await pause();
          results.push(await runAudited(tx, w.cause, this.options.auditing, () => w.run(tx, effects, kernel)));
        }
      });
    } catch (e) {
      if (items.length > 1) {
        // One bad report must not hold back the others: retry each alone.
        for (const w of items) await this.run([w]);
        return;
      }
      items[0]?.reject(e);
      return;
    }
    this.options.apply(effects);
    for (const [i, w] of items.entries()) w.resolve(results[i]);
  }
}
