import type { Logger } from 'pino';
import { fieldDefault } from '../model/data.ts';
import {
  type DeadlineAlertKind,
  type DeadlineRule,
  type Estimator,
  judgeRun,
  runDeadline,
} from '../domain/deadline.ts';
import type { JobRecord } from '../domain/job.ts';
import { isFinal } from '../domain/job-status.ts';
import { listAllObjects } from '../store/all-objects.ts';
import type { StatusChange } from '../store/job-store.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import type { Cluster } from './cluster.ts';
import { raiseDeadlineAlert } from './deadline-alerts.ts';
import type { SerialLoop } from './serial-loop.ts';
import { loadWindow } from './windows.ts';

/**
 * The newest jobs of a deadline's definition looked at in a check (a deadline is about a day's few runs); a chain's
 * step jobs carry its definition too, and are among them.
 */
export const RUNS_LOOKED_AT = 500;

/** A run of a definition: any of its jobs but a chain's step jobs, which carry the chain's definition. */
export const isRun = (job: JobRecord): boolean => job.data.chain?.step === undefined;
/** A final run whose deadline passed longer ago than this is settled: no late DeadlineMissed for it. */
const SETTLED_AFTER_MS = 86_400_000;
/** On a database other nodes may share, whose hints may be lost, a node looks this often (real time). */
const PEER_POLL_MS = 30_000;
/** A check that failed (the database away) is tried again after this. */
const RETRY_MS = 5_000;

export interface DeadlineWatchOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  cluster: Cluster;
  loop: Pick<SerialLoop, 'mutate'>;
  /** A deadline alert committed: its deliveries are alert work to carry out. */
  alertsPlanned(): void;
}

/** A Deadline object's rule, from its data and window. */
export async function deadlineRule(store: Store, deadline: StoredObject<'Deadline'>): Promise<DeadlineRule> {
  const d = deadline.data;
  const zone = d.TimeZone || 'UTC';
  const windowKey = d.TimeWindow;
  const window = windowKey ? await loadWindow(store, windowKey, zone) : undefined;
  return {
    endBy: String(d.EndBy),
    zone,
    leadMs: (d.LeadMinutes ?? fieldDefault('Deadline', 'LeadMinutes')) * 60_000,
    ...(window ? { window } : {}),
  };
}

/**
 * Watches the runs of every Deadline's definition (docs/architecture.md §8c) and raises their alerts. It looks
 * when something may have changed: a run of a watched definition (or a part of a chain while runs are open)
 * changed status, a Deadline changed, and at the moments the runs' judgements ask for (a deadline passing, an
 * estimate that could cross its line). Those moments are its own wake-up, which the engine's `nextWakeAt` and
 * `tick` include, so it runs on the virtual clock as the dispatcher does. Timer work: the timer owner does it.
 */
export class DeadlineWatch {
  private readonly o: DeadlineWatchOptions;
  private estimator: Estimator | undefined;
  private deadlines: StoredObject<'Deadline'>[] | undefined;
  /** The definitions the deadlines watch, as of the last check. */
  private definitions = new Set<string>();
  /** Whether the last check found a run not final yet (then a chain's calls, of other definitions, count too). */
  private openRuns = false;
  private nextAt = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly listeners: Array<(kind: DeadlineAlertKind) => void> = [];
  /** A watched run changed in a transaction that has not told `committed` yet. */
  private changed = false;
  private poll: NodeJS.Timeout | undefined;

  constructor(options: DeadlineWatchOptions) {
    this.o = options;
  }

  /** The estimates runs are judged by (services/job-estimates.ts); without them only DeadlineMissed is raised. */
  useEstimates(estimator: Estimator): void {
    this.estimator = estimator;
  }

  /** Told of each deadline alert this node committed (metrics). */
  onRaised(listener: (kind: DeadlineAlertKind) => void): void {
    this.listeners.push(listener);
  }

  /**
   * When the watch looks next on its own (now, when a change asked for a look that has not run yet); undefined when
   * nothing waits for a moment.
   */
  get nextCheckAt(): number | undefined {
    return Number.isFinite(this.nextAt) ? this.nextAt : undefined;
  }

  /**
   * The first look, at the engine's start: what was due while the server was down is raised now. On a database
   * other nodes may share, also a look on a period of real time, for what their lost hints did not say.
   */
  start(): Promise<void> {
    if (this.o.cluster.shared) {
      this.poll = setInterval(() => void this.check().catch(() => {}), PEER_POLL_MS);
      this.poll.unref();
    }
    return this.check();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.poll);
  }

  /** Another node changed a watched run, or this node may have missed what others said: look. */
  lookSoon(): void {
    this.soon();
  }

  /** A Deadline was created, changed or deleted (here or on another node): read them again and look. */
  invalidate(): void {
    this.deadlines = undefined;
    this.soon();
  }

  /**
   * Status changes about to commit: one that concerns a watched run asks for a look once it committed (`committed`);
   * cheap when none does.
   */
  noteChanges(changes: readonly StatusChange[]): void {
    if (this.definitions.size === 0) return;
    for (const { job } of changes)
      if (this.definitions.has(job.definition) || (this.openRuns && job.data.chain !== undefined)) {
        this.changed = true;
        return;
      }
  }

  /** A transaction of the engine committed: the look its changes asked for, here and by the timer owner. */
  committed(): void {
    if (!this.changed) return;
    this.changed = false;
    this.soon();
    const { cluster } = this.o;
    if (cluster.hasPeers && !cluster.isOwner) cluster.tell({ k: 'deadlines' });
  }

  /** Looks now when a look is due (the engine's tick: the virtual clock moved, or a timer fired). */
  async checkIfDue(): Promise<void> {
    if (this.running !== undefined) await this.running;
    if (this.nextAt <= this.o.clock.now()) await this.check();
  }

  /** One look at every deadline's runs; a look asked for while one runs follows it. */
  check(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = this.checkAll().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.soon();
      }
    });
    return this.running;
  }

  /** A look as soon as the current transaction has committed. */
  private soon(): void {
    this.wakeAt(this.o.clock.now(), 20);
  }

  private wakeAt(t: number, minDelay = 0): void {
    if (this.stopped || t >= this.nextAt) return;
    this.nextAt = t;
    clearTimeout(this.timer);
    const delay = Math.max(minDelay, Math.min(t - this.o.clock.now(), 2 ** 31 - 1));
    this.timer = setTimeout(() => void this.check().catch(() => {}), delay);
    this.timer.unref();
  }

  private async checkAll(): Promise<void> {
    const { clock, cluster, logger } = this.o;
    const now = clock.now();
    clearTimeout(this.timer);
    this.nextAt = Number.POSITIVE_INFINITY;
    if (this.stopped) return;
    let next = Number.POSITIVE_INFINITY;
    let open = false;
    try {
      const deadlines = await this.load();
      // Every node knows the watched definitions: a change to their runs on any node asks the owner to look.
      this.definitions = new Set(deadlines.map((d) => String(d.data.JobDefinition)));
      if (!cluster.isOwner) return;
      for (const deadline of deadlines) {
        const found = await this.checkDeadline(deadline, now);
        next = Math.min(next, found.next);
        open ||= found.open;
      }
    } catch (err) {
      logger.warn({ err }, 'deadline check failed; trying again');
      next = now + RETRY_MS;
    }
    this.openRuns = open;
    if (Number.isFinite(next)) this.wakeAt(Math.max(next, now));
  }

  /** The Deadline objects: kept until one changes here; beside other nodes, read at every look (hints may be lost). */
  private async load(): Promise<StoredObject<'Deadline'>[]> {
    if (this.o.cluster.shared) return listAllObjects(this.o.store, 'Deadline');
    this.deadlines ??= await listAllObjects(this.o.store, 'Deadline');
    return this.deadlines;
  }

  /** Judges the newest runs of one deadline's definition, raising what is due; answers its next moment. */
  private async checkDeadline(
    deadline: StoredObject<'Deadline'>,
    now: number,
  ): Promise<{ next: number; open: boolean }> {
    const { store } = this.o;
    const rule = await deadlineRule(store, deadline);
    const runs = await store.jobs.listJobs({ definition: String(deadline.data.JobDefinition), limit: RUNS_LOOKED_AT });
    let next = Number.POSITIVE_INFINITY;
    let open = false;
    for (const job of runs) {
      if (!isRun(job)) continue;
      const due = runDeadline(rule, job.requestedStart);
      if (due === undefined || (isFinal(job.status) && due < now - SETTLED_AFTER_MS)) continue;
      const marks = job.data.deadlineAlerts?.[deadline.key] ?? [];
      const estimatedEnd = await this.estimatedEnd(job, due, marks, now);
      const judged = judgeRun({ status: job.status, runEnd: job.runEnd, marks }, due, rule.leadMs, estimatedEnd, now);
      if (judged.raise) await this.raise({ deadline, rule, jobId: job.jobId, kind: judged.raise, due, estimatedEnd });
      if (judged.nextCheckAt !== undefined) next = Math.min(next, judged.nextCheckAt);
      open ||= !isFinal(job.status);
    }
    return { next, open };
  }

  /** The run's estimated end on the P95 basis, asked only while it can still turn DeadlineAtRisk. */
  private async estimatedEnd(
    job: JobRecord,
    due: number,
    marks: readonly DeadlineAlertKind[],
    now: number,
  ): Promise<number | null> {
    if (!this.estimator || isFinal(job.status) || now >= due || marks.length > 0) return null;
    return (await this.estimator.estimate(job.jobId, 'P95'))?.EstimatedEnd ?? null;
  }

  private async raise(facts: Parameters<typeof raiseDeadlineAlert>[1]): Promise<void> {
    const { loop, cluster, clock } = this.o;
    const raised = await loop.mutate(async (tx) => {
      await cluster.fence(tx);
      return raiseDeadlineAlert(tx, facts, clock.now());
    });
    if (!raised) return;
    this.o.alertsPlanned();
    for (const listener of this.listeners) listener(facts.kind);
  }
}
