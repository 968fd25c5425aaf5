import type { Logger } from 'pino';
import type { SecretOpener } from '../security/secret-box.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { DispatchObjectsCache } from './dispatch-objects.ts';
import { dispatchPass } from './dispatcher.ts';
import { type Effects, newEffects } from './effects.ts';
import type { Kernel } from './kernel.ts';
import { killOverrunJobs } from './max-run-time.ts';
import type { SerialLoop } from './serial-loop.ts';

export interface WakeUpsOptions {
  store: Store;
  kernel: Kernel;
  clock: Clock;
  logger: Logger;
  loop: Pick<SerialLoop, 'mutate' | 'idle' | 'requestDispatch'>;
  /** This node's agents: a job is dispatched only to an agent connected here. */
  agents: { isReady(processServer: string): boolean; instanceOf(processServer: string): string | undefined };
  /** Opens the passwords of credentials jobs run with. */
  secrets: SecretOpener | undefined;
  /** This node's id beside other nodes (recorded on the jobs it runs); none when alone. */
  node(): string | undefined;
  /** Carries out what the dispatch pass decided. */
  apply(effects: Effects): void;
}

/** What a commit (this node's, or another's told over the cluster) means for the dispatcher and its timers. */
export type WakeHint = Pick<Effects, 'dispatch' | 'wakeAt' | 'overdueAt' | 'runNow'>;

/**
 * When the dispatcher looks next, and the dispatch pass itself (docs/architecture.md §8): one timer for the
 * earliest moment something becomes due (a Scheduled job, a time window opening or closing), the moment queued
 * jobs may become overdue, and the jobs told to run now. A pass consumes the last two, so it lives here.
 */
export class WakeUps {
  private readonly options: WakeUpsOptions;
  private readonly runNow = new Set<number>();
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAtMs = Number.POSITIVE_INFINITY;
  /** When the next dispatch pass looks for overdue jobs (0: on the first pass, e.g. after a restart). */
  private overdueCheckAt = 0;
  private stopped = false;

  /** The queues, providers and process servers of the last pass, while no object was written since. */
  private readonly objects: DispatchObjectsCache;

  constructor(options: WakeUpsOptions) {
    this.options = options;
    // SQLite's version is the store's, known without a statement; PostgreSQL's is read in the pass's transaction.
    this.objects = new DispatchObjectsCache(async (tx) => options.store.dataVersion() ?? (await tx.objectsVersion()));
  }

  /** When the dispatcher will look at the time next on its own (tests in virtual time step the clock to it). */
  get nextWakeAt(): number | undefined {
    return Number.isFinite(this.wakeAtMs) ? this.wakeAtMs : undefined;
  }

  /** A job found told to run now at a restart: the next pass starts it ignoring queue holds and limits. */
  runNowAgain(jobId: number): void {
    this.runNow.add(jobId);
  }

  /** Takes in what a commit decided about time: the timer, the overdue check, the jobs to run now, a pass. */
  wake(hint: WakeHint): void {
    for (const t of hint.wakeAt) this.wakeAt(t);
    for (const t of hint.overdueAt) {
      this.overdueCheckAt = Math.min(this.overdueCheckAt, t);
      this.wakeAt(t);
    }
    for (const id of hint.runNow) this.runNow.add(id);
    if (hint.dispatch) this.options.loop.requestDispatch();
  }

  /**
   * Looks at the time now: due Scheduled jobs move on, jobs past their MaxRunTime are killed and time windows that
   * opened or closed are seen. The timer
   * calls it; tests in virtual time call it after moving the clock.
   */
  tick(): Promise<void> {
    const { clock, loop } = this.options;
    // The moment the timer was set for has come (a virtual clock moves without firing it): later ones count again.
    if (this.wakeAtMs <= clock.now()) {
      clearTimeout(this.wakeTimer);
      this.wakeAtMs = Number.POSITIVE_INFINITY;
    }
    return loop
      .mutate(async (tx, effects, kernel) => {
        // The first start after now, not the first of all: the ones due now are promoted by this pass, and a later
        // one whose wake-up an earlier one replaced would otherwise wait for some other wake-up.
        const next = await tx.jobs.nextScheduledStart(clock.now());
        if (next !== undefined) effects.wakeAt.push(next);
        // Jobs past their MaxRunTime are killed; the next limit to fall due wakes it again (docs/architecture.md §6b).
        await killOverrunJobs(kernel, tx, clock.now(), effects);
        effects.dispatch = true;
      })
      .then(() => loop.idle());
  }

  /** One dispatch pass in its own transaction; a failed one is tried again in 1 s, looking for overdue jobs. */
  async dispatch(): Promise<void> {
    const { store, kernel, clock, agents, secrets } = this.options;
    const effects = newEffects();
    try {
      const sweep = clock.now() >= this.overdueCheckAt;
      if (sweep) this.overdueCheckAt = Number.POSITIVE_INFINITY;
      const node = this.options.node();
      const { more, started } = await store.transaction((tx) =>
        dispatchPass(
          kernel,
          tx,
          {
            agentReady: (processServer) => agents.isReady(processServer),
            agentInstance: (processServer) => agents.instanceOf(processServer),
            secrets,
            objects: this.objects,
            ...(node === undefined ? {} : { node }),
          },
          () => clock.now(),
          this.runNow,
          effects,
          sweep,
        ),
      );
      for (const id of started) this.runNow.delete(id);
      if (more) effects.dispatch = true;
      this.options.apply(effects);
    } catch (err) {
      this.options.logger.error({ err }, 'dispatch pass failed; retrying in 1 s');
      this.overdueCheckAt = 0;
      setTimeout(() => this.options.loop.requestDispatch(), 1000).unref();
    }
  }

  /** No more wake-ups. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.wakeTimer);
  }

  /** Wakes the dispatcher at `t` (a Scheduled job is due, a time window opens or closes). */
  private wakeAt(t: number): void {
    if (t >= this.wakeAtMs || this.stopped) return;
    this.wakeAtMs = t;
    clearTimeout(this.wakeTimer);
    const delay = Math.max(0, Math.min(t - this.options.clock.now(), 2 ** 31 - 1));
    this.wakeTimer = setTimeout(() => {
      this.wakeAtMs = Number.POSITIVE_INFINITY;
      this.tick().catch(() => {});
    }, delay);
    this.wakeTimer.unref();
  }
}
