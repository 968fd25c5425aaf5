import type { JobRecord } from '../domain/job.ts';
import { OCCUPYING } from '../domain/job-status.ts';
import { isOpen, nextOpening, openingEnd, type WindowSpec } from '../domain/time-window.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import { raiseEvent } from './events.ts';
import { type Effects, type Kernel, move } from './kernel.ts';
import { loadWindow } from './windows.ts';

/** A job's own gate that keeps it back now: its time window is closed, or a lock it needs is held by a running job. */
export type GateBlocker =
  | { code: 'TimeWindowClosed'; window: string; opens: number | undefined }
  | { code: 'LockWait'; lock: string; holder: number };

/** Whether a window is open at `now`, else when it opens next (undefined: not within two years). */
export function windowVerdict(w: WindowSpec, now: number): { open: true } | { open: false; opens: number | undefined } {
  return isOpen(w, now) ? { open: true } : { open: false, opens: nextOpening(w, now) };
}

/** The job's locks that running jobs hold, with the job holding each. */
export function heldLocks(
  job: JobRecord,
  holders: ReadonlyMap<string, number>,
): Array<{ lock: string; holder: number }> {
  const held: Array<{ lock: string; holder: number }> = [];
  for (const lock of job.data.spec.locks ?? []) {
    const holder = holders.get(lock);
    if (holder !== undefined) held.push({ lock, holder });
  }
  return held;
}

/**
 * The gates as one moment sees them, read only: the time windows (loaded once each) and which running job holds
 * each lock. The dispatcher's Gates decide with these checks; the waiting service explains with the same.
 */
export class GateView {
  protected readonly tx: Store;
  protected readonly now: number;
  private readonly windows = new Map<string, WindowSpec | undefined>();
  protected holders: Map<string, number> | undefined;

  constructor(tx: Store, now: number) {
    this.tx = tx;
    this.now = now;
  }

  async window(key: string, zone: string): Promise<WindowSpec | undefined> {
    const id = `${key}|${zone}`;
    if (!this.windows.has(id)) this.windows.set(id, await loadWindow(this.tx, key, zone));
    return this.windows.get(id);
  }

  /** The job's own window, when it has one that exists. */
  protected async jobWindow(job: JobRecord): Promise<{ key: string; w: WindowSpec } | undefined> {
    const key = job.data.spec.timeWindow;
    const w = key ? await this.window(key, job.data.spec.windowZone ?? job.data.zone) : undefined;
    return key && w ? { key, w } : undefined;
  }

  /** Locks held by jobs that run (handed to a process server and not final), and by which job. */
  protected async lockHolders(): Promise<Map<string, number>> {
    if (this.holders) return this.holders;
    const held = new Map<string, number>();
    for (const j of await this.tx.jobs.listByStatus(OCCUPYING, { limit: 1_000_000 }))
      for (const l of j.data.spec.locks ?? []) if (!held.has(l)) held.set(l, j.jobId);
    this.holders = held;
    return held;
  }

  /** What of the job's own gates keeps it back now (nothing for a `runnow` job), changing nothing. */
  async blockers(job: JobRecord): Promise<GateBlocker[]> {
    if (job.data.runNow) return [];
    const found: GateBlocker[] = [];
    const own = await this.jobWindow(job);
    const verdict = own ? windowVerdict(own.w, this.now) : { open: true as const };
    if (own && !verdict.open) found.push({ code: 'TimeWindowClosed', window: own.key, opens: verdict.opens });
    if ((job.data.spec.locks ?? []).length > 0)
      for (const h of heldLocks(job, await this.lockHolders())) found.push({ code: 'LockWait', ...h });
    return found;
  }
}

/**
 * The checks of docs/architecture.md §8 that belong to a job rather than to queues and servers, made once per dispatch pass for
 * each queued candidate: its time window is open now, and its locks are free. A closed window keeps the job
 * Queued and wakes the dispatcher when it opens; a job that waited through a whole opening is overdue and its
 * definition's ActWhenOverdue (or its queue's Overdue) applies. A lock held by a running job sends it to LockWait.
 */
export class Gates extends GateView {
  private readonly kernel: Kernel;
  private readonly effects: Effects;
  /** Locks claimed by candidates earlier in this pass: one job per lock per pass. */
  private readonly claimed = new Set<string>();
  /** Candidates that lost a lock to an earlier candidate of this pass. */
  private readonly contenders: JobRecord[] = [];
  /** Jobs whose row changed (status, or the end of their window's opening noted). */
  readonly changed = new Map<number, JobRecord>();

  constructor(kernel: Kernel, tx: Store, now: number, effects: Effects) {
    super(tx, now);
    this.kernel = kernel;
    this.effects = effects;
  }

  /** Whether the candidate may be planned now. */
  async pass(job: JobRecord): Promise<boolean> {
    if (job.data.runNow) return true;
    return (await this.windowOpen(job)) && (await this.locksFree(job));
  }

  /** Locks a started job takes: later candidates of the same pass wait. */
  take(job: JobRecord): void {
    for (const l of job.data.spec.locks ?? []) this.holders?.set(l, job.jobId);
  }

  /** After the plan: a candidate whose lock went to a job that started waits in LockWait. */
  settleContenders(): void {
    for (const job of this.contenders)
      if ((job.data.spec.locks ?? []).some((l) => this.holders?.has(l))) {
        move(job, 'LockWait', this.now);
        this.changed.set(job.jobId, job);
      }
  }

  private async windowOpen(job: JobRecord): Promise<boolean> {
    const own = await this.jobWindow(job);
    if (!own) return true;
    const { key, w } = own;
    if (await this.checkOverdue(job, w)) return false;
    const verdict = windowVerdict(w, this.now);
    if (verdict.open) return true;
    const opens = verdict.opens;
    if (opens === undefined) {
      await this.kernel.finish(
        this.tx,
        job,
        { status: 'Never', notes: [`Its time window ${key} does not open within two years`] },
        this.now,
        this.effects,
      );
      this.changed.delete(job.jobId);
    } else this.effects.wakeAt.push(opens);
    return false;
  }

  /**
   * Applies ActWhenOverdue when the opening the job waited for is over; notes the end of the opening it waits for
   * now otherwise. Returns whether the job left Queued.
   */
  async checkOverdue(job: JobRecord, w: WindowSpec): Promise<boolean> {
    const deadline = job.data.windowClosesAt;
    if (deadline !== undefined && this.now >= deadline) {
      await this.overdue(job);
      if (job.status !== 'Queued') return true;
    }
    if (job.data.windowClosesAt === undefined) {
      const end = openingEnd(w, this.now);
      if (end !== undefined) {
        job.data.windowClosesAt = end;
        this.effects.overdueAt.push(end);
        this.changed.set(job.jobId, job);
      }
    }
    return false;
  }

  /** Queued jobs whose opening is over, wherever they are in their queue (even one no server serves now). */
  async sweepOverdue(): Promise<void> {
    let later = Number.POSITIVE_INFINITY;
    for (const job of await this.tx.jobs.listByStatus(['Queued'], { limit: 100_000 })) {
      const key = job.data.spec.timeWindow;
      if (!key || job.data.windowClosesAt === undefined) continue;
      if (job.data.windowClosesAt > this.now) {
        later = Math.min(later, job.data.windowClosesAt); // the next sweep
        continue;
      }
      const w = await this.window(key, job.data.spec.windowZone ?? job.data.zone);
      if (w) await this.checkOverdue(job, w);
      else this.changed.set(job.jobId, job);
    }
    if (later < Number.POSITIVE_INFINITY) this.effects.overdueAt.push(later);
  }

  /** The job waited through an opening of its window without starting. */
  private async overdue(job: JobRecord): Promise<void> {
    delete job.data.windowClosesAt; // Scheduled: the next opening gets its own deadline
    const queue = await this.tx.getObject('Queue', job.queue);
    const action = queue?.data.Overdue === true ? 'Overdue' : (job.data.spec.overdue ?? 'Scheduled');
    job.data.notes.push(`Missed its time window; ActWhenOverdue ${action}`);
    job.modificationTime = this.now;
    this.changed.set(job.jobId, job);
    const event = job.data.spec.overdueEvent;
    if (event)
      await raiseEvent(
        this.kernel,
        this.tx,
        event,
        { comment: `Job:${job.jobId} (${job.definition}) is overdue`, raiser: `Job:${job.jobId}` },
        this.now,
        this.effects,
      );
    if (action === 'Overdue') job.status = 'Overdue';
    else if (action === 'Held') job.status = 'Held';
    else if (action === 'Canceled') {
      await this.kernel.finish(this.tx, job, { status: 'Canceled' }, this.now, this.effects);
      this.changed.delete(job.jobId);
    }
  }

  private async locksFree(job: JobRecord): Promise<boolean> {
    const locks = job.data.spec.locks ?? [];
    if (locks.length === 0) return true;
    if (heldLocks(job, await this.lockHolders()).length > 0) {
      move(job, 'LockWait', this.now);
      this.changed.set(job.jobId, job);
      return false;
    }
    if (locks.some((l) => this.claimed.has(l))) {
      this.contenders.push(job);
      return false;
    }
    for (const l of locks) this.claimed.add(l);
    return true;
  }
}

/** Reaction to a final status: the jobs waiting for any lock the job held go back to Queued; dispatch decides again. */
export async function releaseLocks(
  _k: Kernel,
  tx: Store,
  { job }: { job: JobRecord; status: JobStatus },
  now: number,
  effects: Effects,
): Promise<void> {
  const locks = job.data.spec.locks ?? [];
  if (locks.length === 0) return;
  const waiting = await tx.jobs.listByStatus(['LockWait'], { limit: 100_000 });
  const moving = waiting.filter((j) => (j.data.spec.locks ?? []).some((l) => locks.includes(l)));
  for (const j of moving) move(j, 'Queued', now);
  if (moving.length > 0) {
    await tx.jobs.updateMany(moving);
    effects.dispatch = true;
  }
}
