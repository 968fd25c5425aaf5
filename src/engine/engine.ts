import { outsideRequests } from '../log/request-context.ts';
import type { Logger } from 'pino';
import type { AgentMessage, WelcomeMessage } from '../agent/protocol.ts';
import { SYSTEM_SERVER } from '../domain/job.ts';
import { isFinal } from '../domain/job-status.ts';
import type { TypeName } from '../model/fields.ts';
import type { SecretOpener } from '../security/secret-box.ts';
import { conflict, notFound } from '../errors.ts';
import { businessKey } from '../model/keys.ts';
import { requireType } from '../model/registry.ts';
import type { Cause } from '../store/job-store.ts';
import { isDatabaseUnavailable, isDiskFull, type Store, type StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { AgentHub } from './agent-hub.ts';
import { busyReason, heartbeatMs } from './agent-instances.ts';
import { Cluster } from './cluster.ts';
import type { ClusterMessage } from './cluster-messages.ts';
import type { FeedItem } from '../feed/feed-events.ts';
import { type AlertSenders, AlertWorker } from './alert-worker.ts';
import { AlertSources, answerAlertReply, onJobStatusChanges, onServerStatus } from './alerts.ts';
import { applyAgentLost, applyFinished, applyHello, applyLost, applyOrphans, applyStarted } from './agent-reports.ts';
import { answerAsking, closeQuestion } from './ask.ts';
import { answerStep, cancelTree, createChainJobs, killTree, onCallFinal } from './chains.ts';
import { dispatchPass } from './dispatcher.ts';
import { type Effects, newEffects } from './effects.ts';
import {
  clearAllPending,
  clearEvent,
  clearRaised,
  type ClearBy,
  type RaiseBy,
  raiseEvent,
  raiseOnFinal,
} from './events.ts';
import { releaseLocks } from './gates.ts';
import { GroupCommit } from './group-commit.ts';
import type { JobFileStore } from './job-files.ts';
import { Kernel, move, NeedsSerialLoop } from './kernel.ts';
import { endRecurrence, submitNextOccurrence } from './recurrences.ts';
import { endJobsOfStoppedNode } from './stopped-node.ts';
import { type AgentView, agentViewOf, ServerStatusKeeper } from './server-status.ts';
import { WaitExplainer } from './waiting.ts';
import { type SystemRunner, SystemJobs } from './system-jobs.ts';

export type { SystemRunner } from './system-jobs.ts';
/** Services read windows as the engine does (a window's openings). */
export { loadWindow } from './windows.ts';
export { type ForecastEntry, type ForecastKey, type ForecastQuery, forecastPage } from './forecast.ts';

/** Work on jobs inside one transaction: the store, the effects to carry out after the commit, and the kernel. */
export type KernelWork<T> = (tx: Store, fx: Effects, k: Kernel) => Promise<T>;

export interface EngineOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  files: JobFileStore;
  /** Context root (`/millrace`): agents connect to `<root>/agent`. */
  rootPath: string;
  /** Checks an agent's secret against its process server. */
  verifyAgentSecret(processServer: string, secret: string): Promise<boolean>;
  killGraceMs: number;
  /** Finished jobs older than this are purged (the system keep clause). */
  historyRetentionMs: number;
  /** Opens the passwords of credentials jobs run with. */
  secrets?: SecretOpener;
  /** How alerts leave the server (webhooks, mail); deliveries that fail are tried again later. */
  alertSenders: AlertSenders;
  /** This node among those sharing the database (PostgreSQL); alone by default. */
  cluster?: Cluster;
}

type Work = {
  /** Agent and in-server reports: many share one transaction. User actions run alone (their errors are theirs). */
  batch: boolean;
  fn: KernelWork<unknown>;
  /** Recorded on the job status changes `fn` writes (job history); none: the engine's own reasons. */
  cause: Cause | undefined;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
};

const BATCH = 500;
/** Submits sharing one commit at most (group-commit.ts): a group of 64 holds the event loop ~20 ms on SQLite. */
const SUBMITS_PER_COMMIT = 64;
const PURGE_EVERY_MS = 15 * 60_000;

/**
 * The running scheduler. Every change to existing jobs goes through one serial loop: reports of a moment are
 * written in one transaction (as graphile-worker batches completions), actions each in their own, and a dispatch
 * pass follows whenever something may have freed or filled a slot. Effects (agent messages, in-server jobs, file
 * removal) happen only after the commit that decided them.
 */
export class Engine {
  /** The lifecycle kernel; the reactions of chains, events, recurrences, locks, questions and alerts are on it. */
  readonly kernel = new Kernel();
  readonly hub: AgentHub;
  readonly files: JobFileStore;
  readonly store: Store;
  /** This node among the server nodes sharing the database (docs/architecture.md §16). */
  readonly cluster: Cluster;
  private readonly o: EngineOptions;
  private readonly system: SystemJobs;
  private readonly servers: ServerStatusKeeper;
  private readonly alertSources = new AlertSources();
  readonly alerts: AlertWorker;
  private readonly work: Work[] = [];
  /** Submits beside the serial loop, sharing commits (group-commit.ts). */
  private readonly submits: GroupCommit;
  private dispatchWanted = false;
  private looping = false;
  private idleWaiters: Array<() => void> = [];
  private readonly runNow = new Set<number>();
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAtMs = Number.POSITIVE_INFINITY;
  /** When the next dispatch pass looks for overdue jobs (0: on the first pass, e.g. after a restart). */
  private overdueCheckAt = 0;
  private watchdog: NodeJS.Timeout | undefined;
  private watchdogTicks = 0;
  private purgeTimer: NodeJS.Timeout | undefined;
  private readonly purgeQueue = new Map<string, number>();
  private purging = false;
  private stopped = false;
  private started = false;
  private feedListener: ((items: FeedItem[]) => void) | undefined;

  constructor(options: EngineOptions) {
    this.o = options;
    this.files = options.files;
    this.store = options.store;
    this.cluster = options.cluster ?? Cluster.solo();
    this.submits = new GroupCommit(options.store, SUBMITS_PER_COMMIT);
    const k = this.kernel;
    // What follows from a transition, in the order it happens (docs/architecture.md §6a).
    k.on('created', createChainJobs);
    k.on('due', submitNextOccurrence);
    k.on('final', closeQuestion);
    k.on('final', raiseOnFinal);
    k.on('final', releaseLocks);
    k.on('final', endRecurrence);
    k.on('settled', onCallFinal);
    k.on('cancelTree', cancelTree);
    k.on('killTree', killTree);
    k.on('answered', answerStep);
    k.on('answered', answerAsking);
    k.on('answered', answerAlertReply);
    this.system = new SystemJobs(
      (jobId, outcome) =>
        this.report(async (tx, fx, k) => {
          const job = await tx.jobs.get(jobId);
          if (!job || job.processServer !== SYSTEM_SERVER || isFinal(job.status) || job.status === 'ConsoleRestart')
            return;
          await k.finish(tx, job, outcome, this.o.clock.now(), fx);
        }),
      (jobId, err) => this.o.logger.warn({ err, jobId }, 'the end of an in-server job was not stored; trying again'),
    );
    this.servers = new ServerStatusKeeper(
      options.store,
      () => this.agentView(),
      options.clock,
      async (tx, server, from, to) => {
        await onServerStatus(tx, server, from, to, options.clock.now());
        this.alertsPlanned();
      },
    );
    this.alerts = new AlertWorker({
      store: options.store,
      clock: options.clock,
      logger: options.logger,
      senders: options.alertSenders,
      // Alert work is timer work: the timer owner does it, under its lease.
      mayRun: () => this.cluster.isOwner,
      mutate: (fn) =>
        this.mutate(async (tx) => {
          await this.cluster.fence(tx);
          await fn(tx);
        }),
    });
    this.hub = new AgentHub(
      options.rootPath,
      {
        authenticate: (ps, secret, instance) => this.authenticateAgent(ps, secret, instance),
        onMessage: (ps, m, instance) => this.onAgentMessage(ps, m, instance),
        onConnect: (ps) => {
          this.servers.connected(ps);
          this.requestDispatch();
          void this.agentsChanged();
        },
        onClose: (ps) => {
          this.servers.disconnected(ps);
          void this.agentsChanged(ps);
        },
      },
      options.logger,
      () => options.clock.now(),
    );
  }

  /** Lets a capability outside the engine run the jobs of a System definition (see SystemRunner). */
  registerSystemRunner(definition: string, runner: SystemRunner): void {
    this.system.register(definition, runner);
  }

  /** Recovers after a restart, then starts the timers. */
  async start(): Promise<void> {
    const now = this.o.clock.now();
    this.o.store.onStatusChanges(async (tx, changes) => {
      if (await onJobStatusChanges(tx, this.alertSources, changes, this.o.clock.now())) this.alertsPlanned();
    });
    this.alerts.start();
    this.servers.started(now);
    await this.mutate(async (tx, fx, k) => {
      // Beside other nodes, only those this node ran (its id is kept in its data folder) or of unknown node.
      await endJobsOfStoppedNode(
        k,
        tx,
        (job) => (job.data.runNode ?? this.cluster.id) === this.cluster.id,
        'The server stopped while the job ran',
        now,
        fx,
      );
      for (const job of await tx.jobs.listByStatus(['Queued'], { limit: 1_000_000 }))
        if (job.data.runNow) this.runNow.add(job.jobId);
      const next = await tx.jobs.nextScheduledStart();
      if (next !== undefined) fx.wakeAt.push(next);
      fx.dispatch = true;
    });
    await this.cluster.start({
      agents: () =>
        this.hub.connected().map((a) => ({
          processServer: a.processServer,
          instance: a.instance,
          node: this.cluster.id,
          seenAt: this.hub.lastSeen(a.processServer) ?? this.o.clock.now(),
          ready: a.ready,
        })),
      message: (m) => this.onClusterMessage(m),
      takeover: () => {
        void this.purgeHistory();
        if (!this.cluster.shared) return;
        // What the timers would have done while no node ran them: look now.
        this.requestDispatch();
        this.alerts.kick();
        void this.tick().catch(() => {});
        void this.refreshServers();
      },
      resync: () => {
        this.requestDispatch();
        void this.tick().catch(() => {});
      },
      deadNode: (id) => this.settleDeadNode(id),
    });
    await this.refreshServers();
    let ticks = 0;
    this.watchdog = setInterval(() => {
      void this.checkAgents();
      // Beside other nodes, a hint may be lost (sent just as the database went away): look every 5 s anyway.
      if (this.cluster.hasPeers && ++ticks % 5 === 0) this.requestDispatch();
    }, 1000);
    this.watchdog.unref();
    this.purgeTimer = setInterval(() => void this.purgeHistory(), PURGE_EVERY_MS);
    this.purgeTimer.unref();
    this.started = true;
  }

  /**
   * Asks why jobs wait, of the engine's own checks at this moment, changing nothing (docs/architecture.md §8). An
   * agent connected to any live node counts as connected (§16): that node dispatches to it.
   */
  waits(): WaitExplainer {
    return new WaitExplainer(this.o.store, this.o.clock.now(), { agentReady: (ps) => this.agentView().isReady(ps) });
  }

  /** Where the agents are: this node's connections, then those other nodes wrote (§16). */
  private agentView(): AgentView {
    return agentViewOf(this.hub, this.cluster.remoteAgents());
  }

  /** An agent connected to or left this node: other nodes hear of it, the timer owner writes statuses. */
  private async agentsChanged(gone?: string): Promise<void> {
    if (this.cluster.shared)
      await this.cluster.agentsChanged(gone).catch((err: unknown) => {
        this.o.logger.warn({ err }, 'could not record where the agents are');
      });
    if (this.cluster.hasPeers) this.cluster.tell({ k: 'servers' });
    await this.refreshServers();
  }

  /** Lets the live feed hear of other nodes' commits. */
  onClusterFeed(listener: ((items: FeedItem[]) => void) | undefined): void {
    this.feedListener = listener;
  }

  private onClusterMessage(m: ClusterMessage): void {
    switch (m.k) {
      case 'wake':
        this.wake(m);
        return;
      case 'agent':
        this.hub.send(m.processServer, m.message);
        return;
      case 'disconnect':
        if (this.hub.isConnected(m.processServer)) {
          this.servers.disconnected(m.processServer, this.hub.lastSeen(m.processServer));
          this.hub.disconnect(m.processServer);
        }
        return;
      case 'stop':
        for (const id of m.jobIds) this.system.stop(id);
        return;
      case 'object':
        this.objectReactions(m.type);
        return;
      case 'servers':
        if (this.cluster.isOwner)
          void this.cluster
            .reloadPresence()
            .catch(() => {})
            .then(() => this.refreshServers());
        return;
      case 'feed':
        this.feedListener?.(m.items);
        return;
    }
  }

  /**
   * A node stopped beating (the timer owner, under its lease): the System jobs it ran in memory end Unknown, as
   * after a restart; its agents reconnect to other nodes and report there.
   */
  private async settleDeadNode(id: string): Promise<void> {
    const n = await this.mutate(async (tx, fx, k) => {
      await this.cluster.fence(tx);
      const note = `The server node ${id} stopped while the job ran`;
      return endJobsOfStoppedNode(k, tx, (job) => job.data.runNode === id, note, this.o.clock.now(), fx);
    });
    this.o.logger.warn({ node: id, jobs: n }, 'a server node stopped beating; its System jobs are Unknown');
  }

  /** Started and not stopped: its loop takes work and its timers run (readiness). */
  get running(): boolean {
    return this.started && !this.stopped;
  }

  /** Stops timers and in-server jobs, lets the loop finish what it has, and closes agent sessions. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.alerts.stop();
    this.o.store.onStatusChanges(undefined);
    clearInterval(this.watchdog);
    clearInterval(this.purgeTimer);
    clearTimeout(this.wakeTimer);
    this.system.stopAll();
    await this.idle();
    this.hub.close();
    await this.cluster.stop();
  }

  /**
   * Entry point for a person's action (and any change to existing jobs): runs `fn` alone in one transaction of the
   * serial loop, in turn with every other change to jobs; resolves after the commit. `cause`: what the job history
   * records for the status changes it makes (a user's action).
   */
  mutate<T>(fn: KernelWork<T>, cause?: Cause): Promise<T> {
    return this.enqueue(false, fn, cause);
  }

  /** Entry point for reports (agents, System jobs): like `mutate`, but may share its transaction with others. */
  report(fn: KernelWork<void>): Promise<void> {
    return this.enqueue(true, fn);
  }

  /**
   * Entry point for creating jobs: `fn` runs in a transaction beside the serial loop, so plain submits do not wait
   * in turn, shared with the submits that arrived together (group commit: one commit for them all; each succeeds or
   * fails on its own). When it submits a job that must be created in the loop (a chain, a job waiting for events:
   * see Kernel.submit) its work is rolled back and `fn` runs again in the loop.
   */
  async submit<T>(fn: KernelWork<T>, cause?: Cause): Promise<T> {
    const k = this.kernel.outsideLoop();
    let fx = newEffects();
    try {
      const result = await this.submits.run((tx) => {
        fx = newEffects(); // the work runs again when its group is rolled back
        return tx.jobs.withCause(cause, () => fn(tx, fx, k));
      });
      this.apply(fx);
      return result;
    } catch (e) {
      if (e instanceof NeedsSerialLoop) return this.mutate(fn, cause);
      throw e;
    }
  }

  /** Raises an event (a person's); the jobs it releases move on in the same transaction. */
  raiseEvent(definition: string, by: RaiseBy, cause: Cause) {
    return this.mutate((tx, fx, k) => raiseEvent(k, tx, definition, by, this.o.clock.now(), fx), cause);
  }

  /** Clears the Raised event of a definition; 404 without the definition, 409 when none is Raised. */
  clearRaised(definition: string, by: ClearBy) {
    return this.mutate(async (tx, fx, k) => {
      if (!(await tx.getObject('EventDefinition', definition))) throw notFound('EventDefinition', definition);
      const cleared = await clearRaised(k, tx, definition, by, this.o.clock.now(), fx);
      if (!cleared) throw conflict(`${businessKey('EventDefinition', definition)} has no Raised event to clear`);
      return cleared;
    });
  }

  /** Clears the Pending events of a definition (possibly none); 404 without the definition. */
  clearAllPending(definition: string, by: ClearBy) {
    return this.mutate(async (tx, fx) => {
      if (!(await tx.getObject('EventDefinition', definition))) throw notFound('EventDefinition', definition);
      return clearAllPending(tx, definition, by, this.o.clock.now(), fx);
    });
  }

  /** Clears one event; 404 when it is gone, 409 when it is Cleared already. */
  clearEvent(eventId: string, by: ClearBy) {
    return this.mutate(async (tx, fx, k) => {
      const current = await tx.events.get(eventId);
      if (!current) throw notFound('Event', eventId);
      return clearEvent(k, tx, current, by, this.o.clock.now(), fx);
    });
  }

  requestDispatch(): void {
    this.dispatchWanted = true;
    this.kick();
  }

  /**
   * Told after an object changed; what follows is the type's `onChange` trait (model/object-type.ts). A change to
   * a queue, queue provider, process server, window or lock may let jobs start; holding a queue turns its Queued
   * jobs QueueHeld (and back on release).
   */
  objectChanged(type: TypeName, before: StoredObject | undefined, after: StoredObject | undefined): Promise<void> {
    const reactions = this.objectReactions(type);
    if (reactions.some((r) => r === 'alert-sources' || r === 'dispatch')) this.cluster.tell({ k: 'object', type });
    if (type === 'ProcessServer' && before && after && before.data.AgentTimeout !== after.data.AgentTimeout)
      this.tellHeartbeat(after.key, heartbeatMs(after.data.AgentTimeout));
    const held = after?.data.Held === true;
    if (!reactions.includes('queue-hold') || !after || (before?.data.Held === true) === held) return Promise.resolve();
    // Answered only once the queue's waiting jobs show the hold (or its release).
    return this.mutate(async (tx, fx) => {
      const now = this.o.clock.now();
      const jobs = await tx.jobs.listByStatus([held ? 'Queued' : 'QueueHeld'], { queue: after.key, limit: 1_000_000 });
      const moving = jobs.filter((j) => !(held && j.data.runNow));
      for (const j of moving) move(j, held ? 'QueueHeld' : 'Queued', now);
      await tx.jobs.updateMany(moving);
      fx.dispatch = true;
    });
  }

  /**
   * A connected agent beats at the pace it was given when it connected: told the new one at once, wherever it is
   * connected (another node's agent through the cluster), so that a shorter AgentTimeout never drops it.
   */
  private tellHeartbeat(processServer: string, every: number): void {
    const message = { type: 'heartbeat', heartbeatMs: every } as const;
    if (!this.hub.send(processServer, message)) this.cluster.tell({ k: 'agent', processServer, message });
  }

  /** The reactions to a change of `type` that live in this node's memory (also for other nodes' changes). */
  private objectReactions(type: TypeName) {
    const reactions = requireType(type).traits.onChange ?? [];
    if (reactions.includes('alert-sources')) this.alertSources.invalidate();
    if (reactions.includes('dispatch')) this.requestDispatch();
    return reactions;
  }

  /** A transaction planned alert work: the worker looks once it has committed. */
  alertsPlanned(): void {
    setTimeout(() => this.alerts.kick(), 20).unref();
  }

  /** Resolves once nothing is queued or running in the loop (tests and shutdown). */
  idle(): Promise<void> {
    if (!this.looping && this.work.length === 0 && !this.dispatchWanted) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Carries out what committed transactions decided. */
  apply(fx: Effects): void {
    // An agent connected to another node gets it through that node; a `run` is only ever dispatched to this
    // node's own agents (it holds secrets, which never travel between nodes).
    for (const { processServer, message, instance } of fx.messages)
      if (!this.hub.send(processServer, message, instance) && message.type !== 'run')
        this.cluster.tell({ k: 'agent', processServer, message });
    for (const job of fx.startSystem) this.system.start(job);
    for (const id of fx.stopSystem) this.system.stop(id);
    if (fx.stopSystem.length > 0) this.cluster.tell({ k: 'stop', jobIds: fx.stopSystem });
    if (fx.dispatch || fx.wakeAt.length > 0 || fx.overdueAt.length > 0 || fx.runNow.length > 0)
      this.cluster.tell({
        k: 'wake',
        dispatch: fx.dispatch,
        wakeAt: fx.wakeAt,
        overdueAt: fx.overdueAt,
        runNow: fx.runNow,
      });
    if (fx.removeFiles.length > 0)
      this.o.files
        .remove(fx.removeFiles)
        .catch((err: unknown) => this.o.logger.warn({ err }, 'could not remove job files'));
    for (const [definition, keep] of fx.purge) this.purgeQueue.set(definition, keep);
    if (fx.purge.size > 0) setTimeout(() => void this.purgeKept(), 1000).unref();
    this.wake(fx);
  }

  /** What a commit (this node's, or another's told over the cluster) means for the dispatcher and its timers. */
  private wake(h: Pick<Effects, 'dispatch' | 'wakeAt' | 'overdueAt' | 'runNow'>): void {
    for (const t of h.wakeAt) this.wakeAt(t);
    for (const t of h.overdueAt) {
      this.overdueCheckAt = Math.min(this.overdueCheckAt, t);
      this.wakeAt(t);
    }
    for (const id of h.runNow) this.runNow.add(id);
    if (h.dispatch) this.requestDispatch();
  }

  private enqueue<T>(batch: boolean, fn: KernelWork<T>, cause?: Cause): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.work.push({ batch, fn, cause, resolve: resolve as (v: unknown) => void, reject });
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
          const first = this.work[0] as Work;
          const n = first.batch ? this.work.findIndex((w) => !w.batch) : 1;
          await this.run(this.work.splice(0, n === -1 ? BATCH : Math.min(n, BATCH)));
        }
        if (this.dispatchWanted && !this.stopped && this.work.every((w) => w.batch)) {
          this.dispatchWanted = false;
          await this.dispatch();
        }
      }
    } finally {
      this.looping = false;
      if (this.work.length > 0 || (this.dispatchWanted && !this.stopped)) this.kick();
      else for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async run(items: Work[]): Promise<void> {
    const fx = newEffects();
    const results: unknown[] = [];
    try {
      await this.o.store.transaction(async (tx) => {
        await tx.jobs.lockDispatch();
        for (const w of items) results.push(await tx.jobs.withCause(w.cause, () => w.fn(tx, fx, this.kernel)));
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
    this.apply(fx);
    for (const [i, w] of items.entries()) w.resolve(results[i]);
  }

  private async dispatch(): Promise<void> {
    const fx = newEffects();
    try {
      const sweep = this.o.clock.now() >= this.overdueCheckAt;
      if (sweep) this.overdueCheckAt = Number.POSITIVE_INFINITY;
      const { more, started } = await this.o.store.transaction((tx) =>
        dispatchPass(
          this.kernel,
          tx,
          {
            agentReady: (ps) => this.hub.isReady(ps),
            agentInstance: (ps) => this.hub.instanceOf(ps),
            secrets: this.o.secrets,
            ...(this.cluster.shared ? { node: this.cluster.id } : {}),
          },
          () => this.o.clock.now(),
          this.runNow,
          fx,
          sweep,
        ),
      );
      for (const id of started) this.runNow.delete(id);
      if (more) fx.dispatch = true;
      this.apply(fx);
    } catch (err) {
      this.o.logger.error({ err }, 'dispatch pass failed; retrying in 1 s');
      this.overdueCheckAt = 0;
      setTimeout(() => this.requestDispatch(), 1000).unref();
    }
  }

  /**
   * Looks at the time now: due Scheduled jobs move on and time windows that opened or closed are seen. Timers call
   * it; tests in virtual time call it after moving the clock.
   */
  tick(): Promise<void> {
    // The moment the timer was set for has come (a virtual clock moves without firing it): later ones count again.
    if (this.wakeAtMs <= this.o.clock.now()) {
      clearTimeout(this.wakeTimer);
      this.wakeAtMs = Number.POSITIVE_INFINITY;
    }
    return this.mutate(async (tx, fx) => {
      // The first start after now, not the first of all: the ones due now are promoted by this pass, and a later one
      // whose wake-up an earlier one replaced would otherwise wait for some other wake-up.
      const next = await tx.jobs.nextScheduledStart(this.o.clock.now());
      if (next !== undefined) fx.wakeAt.push(next);
      fx.dispatch = true;
    }).then(() => this.idle());
  }

  /** When the dispatcher will look at the time next on its own (tests in virtual time step the clock to it). */
  get nextWakeAt(): number | undefined {
    return Number.isFinite(this.wakeAtMs) ? this.wakeAtMs : undefined;
  }

  /** Wakes the dispatcher at `t` (a Scheduled job is due, a time window opens or closes). */
  private wakeAt(t: number): void {
    if (t >= this.wakeAtMs || this.stopped) return;
    this.wakeAtMs = t;
    clearTimeout(this.wakeTimer);
    const delay = Math.max(0, Math.min(t - this.o.clock.now(), 2 ** 31 - 1));
    this.wakeTimer = setTimeout(() => {
      this.wakeAtMs = Number.POSITIVE_INFINITY;
      this.tick().catch(() => {});
    }, delay);
    this.wakeTimer.unref();
  }

  /**
   * The secret first; then one agent instance per process server (docs/architecture.md §16): another instance
   * connected here, or holding it on another live node, makes this one refused (the hub accepts one upgrade of a
   * process server at a time, so the check and the claim do not race).
   */
  private async authenticateAgent(
    ps: string,
    secret: string,
    instance: string,
  ): Promise<{ welcome: WelcomeMessage } | { status: number; reason: string }> {
    if (ps === SYSTEM_SERVER) return { status: 409, reason: 'GLOBAL.System runs inside the server and takes no agent' };
    const object = await this.o.store.getObject('ProcessServer', ps);
    if (!object || !(await this.o.verifyAgentSecret(ps, secret)))
      return { status: 401, reason: 'unknown process server or wrong secret' };
    const heartbeat = heartbeatMs(object.data.AgentTimeout);
    // Another instance connected here keeps it while it would not be declared lost (heard from within AgentTimeout);
    // a session that never said hello, or silent longer (a cut cable), gives way to the newcomer, which replaces it.
    const here = this.hub.holder(ps, 4 * heartbeat);
    if (here?.live && here.instance !== instance)
      return { status: 409, reason: busyReason(ps, { instance: here.instance, node: this.cluster.id }) };
    const holder = await this.cluster.claimAgent(ps, instance, this.o.clock.now());
    if (holder) return { status: 409, reason: busyReason(ps, holder) };
    return {
      welcome: { type: 'welcome', killGraceMs: this.o.killGraceMs, heartbeatMs: heartbeat },
    };
  }

  private async onAgentMessage(ps: string, m: AgentMessage, instance: string): Promise<void> {
    const now = () => this.o.clock.now();
    // Reports are not awaited (many share a transaction), so a failure is handled here: with the database away or
    // the disk full the agent is reconnected and sends again what is not acknowledged (its files from the start,
    // then its reports). After any other failure the agent sends the report again unasked (RESEND_HEARTBEATS in
    // agent.ts).
    const failed = (err: unknown) => {
      if (isDatabaseUnavailable(err) || isDiskFull(err)) this.hub.replay(ps, err);
    };
    switch (m.type) {
      case 'hello':
        await this.mutate((tx, fx, k) => applyHello(k, tx, { ps, instance }, m.known, now(), fx));
        return;
      case 'started':
        void this.report((tx) => applyStarted(tx, ps, m, now())).catch(failed);
        return;
      case 'output':
        await this.o.files.write(m.jobId, m.file, m.offset, Buffer.from(m.data, 'base64')).catch((err: unknown) => {
          this.o.logger.warn({ err, jobId: m.jobId, file: m.file }, 'job output not stored');
          failed(err);
        });
        return;
      case 'finished':
        void this.report((tx, fx, k) => applyFinished(k, tx, ps, m, now(), fx)).catch(failed);
        return;
      case 'lost':
        void this.report((tx, fx, k) => applyLost(k, tx, ps, m, now(), fx)).catch(failed);
        return;
      case 'draining':
        void this.refreshServers();
        return;
      case 'ping':
        return;
    }
  }

  /** Agents silent or away beyond their timeout: drop the session, and set their jobs Unknown. */
  private async checkAgents(): Promise<void> {
    // Timer work: the owner alone declares agents lost, from where every node says they are.
    if (this.stopped || !this.cluster.isOwner) return;
    try {
      for (const ps of await this.servers.overdue(this.o.clock.now())) {
        // A silent agent is dropped and declared lost in the same tick: its jobs become Unknown at most one
        // watchdog tick (1 s) after AgentTimeout has passed since it was last heard of (README).
        if (this.hub.isConnected(ps)) {
          this.servers.disconnected(ps, this.hub.lastSeen(ps));
          this.hub.disconnect(ps);
        } else {
          this.cluster.tell({ k: 'disconnect', processServer: ps });
          await this.cluster.forgetAgent(ps);
        }
        // The process server shows Unknown before its jobs do, so a client that sees the jobs sees why.
        this.servers.lost(ps);
        await this.refreshServers();
        const n = await this.mutate(async (tx, fx, k) => {
          await this.cluster.fence(tx);
          return applyAgentLost(k, tx, ps, this.o.clock.now(), fx);
        });
        if (n > 0) this.o.logger.warn({ processServer: ps, jobs: n }, 'agent lost: its jobs are Unknown');
      }
      // Every 5 s: such attempts are rare, and waiting jobs are read to find them.
      if (++this.watchdogTicks % 5 === 0) await this.settleOrphans();
      await this.refreshServers();
    } catch (err) {
      this.o.logger.warn({ err }, 'agent check failed');
    }
  }

  /**
   * Attempts still Dispatched to an agent instance other than the one serving their process server now, for longer
   * than its AgentTimeout, end Unknown (docs/architecture.md §7): that instance will not report them.
   */
  private async settleOrphans(): Promise<void> {
    const now = this.o.clock.now();
    const remote = this.cluster.remoteAgents();
    const holder = (ps: string) =>
      this.hub.instanceOf(ps) ?? remote.find((a) => a.processServer === ps && a.alive)?.instance;
    const timeouts = new Map<string, number>();
    const orphans: Array<{ jobId: number; attempt: number; instance: string }> = [];
    for (const job of await this.o.store.jobs.listByStatus(['Dispatched', 'Assigned'], { limit: 1000 })) {
      const { processServer: ps } = job;
      const instance = job.data.agentInstance;
      if (ps === null || instance === undefined || [undefined, instance].includes(holder(ps))) continue;
      if (!timeouts.has(ps))
        timeouts.set(ps, ((await this.o.store.getObject('ProcessServer', ps))?.data.AgentTimeout as number) ?? 60);
      if (now - job.modificationTime > (timeouts.get(ps) as number) * 1000)
        orphans.push({ jobId: job.jobId, attempt: job.attempt, instance });
    }
    if (orphans.length === 0) return;
    const n = await this.mutate(async (tx, fx, k) => {
      await this.cluster.fence(tx);
      return applyOrphans(k, tx, orphans, this.o.clock.now(), fx);
    });
    if (n > 0) this.o.logger.warn({ jobs: n }, 'attempts dispatched to an agent that no longer serves them: Unknown');
  }

  /** Writes each process server's Status where it changed. */
  async refreshServers(): Promise<void> {
    // Beside other nodes, the timer owner writes them (from every node's agents), so nodes never disagree in turn.
    if (this.cluster.hasPeers && !this.cluster.isOwner) return;
    try {
      await this.servers.refresh();
    } catch (err) {
      this.o.logger.warn({ err }, 'could not update process server status');
    }
  }

  /** KeepJobs: the finished jobs of a definition beyond the newest N are deleted, with their files. */
  private async purgeKept(): Promise<void> {
    if (this.purging || this.stopped) return;
    this.purging = true;
    try {
      for (const [definition, keep] of [...this.purgeQueue]) {
        this.purgeQueue.delete(definition);
        for (;;) {
          const ids = await this.o.store.jobs.finishedBeyond(definition, keep, 500);
          if (ids.length === 0) break;
          await this.deleteJobs(ids, false);
        }
      }
    } catch (err) {
      this.o.logger.warn({ err }, 'job purge failed');
    } finally {
      this.purging = false;
    }
  }

  /**
   * The system keep clause: finished jobs older than the retention period go, a batch at a time. Run at start (as
   * the timer owner) and every 15 minutes; public so that tests on the virtual clock do what the timer would.
   */
  async purgeHistory(): Promise<void> {
    if (!this.cluster.isOwner) return;
    try {
      for (;;) {
        const ids = await this.o.store.jobs.finishedBefore(this.o.clock.now() - this.o.historyRetentionMs, 500);
        if (ids.length === 0 || this.stopped) return;
        await this.deleteJobs(ids);
      }
    } catch (err) {
      this.o.logger.warn({ err }, 'history purge failed');
    }
  }

  /** `fenced`: timer work (the retention purge), done under the timer lease; KeepJobs follows any node's commit. */
  private async deleteJobs(ids: number[], fenced = true): Promise<void> {
    await this.mutate(async (tx, fx, k) => {
      if (fenced) await this.cluster.fence(tx);
      await k.remove(tx, ids, fx);
    });
  }
}
