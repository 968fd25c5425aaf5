import type { Logger } from 'pino';
import { SYSTEM_SERVER } from '../domain/job.ts';
import { isFinal } from '../domain/job-status.ts';
import type { FeedItem } from '../feed/feed-events.ts';
import type { TypeName } from '../model/fields.ts';
import type { SecretOpener } from '../security/secret-box.ts';
import type { Cause } from '../store/job-store.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import type { AgentHub } from './agent-hub.ts';
import { AgentRouting } from './agent-routing.ts';
import { AgentWatchdog } from './agent-watchdog.ts';
import { type AlertSenders, AlertWorker } from './alert-worker.ts';
import { AlertSources, onJobStatusChanges, onServerStatus } from './alerts.ts';
import { Cluster } from './cluster.ts';
import { ClusterInbox } from './cluster-inbox.ts';
import { DeadlineWatch } from './deadlines.ts';
import type { Effects } from './effects.ts';
import { EventActions } from './event-actions.ts';
import type { JobFileStore } from './job-files.ts';
import { JobPurge } from './job-purge.ts';
import { Kernel } from './kernel.ts';
import { ObjectReactions } from './object-reactions.ts';
import { registerReactions } from './reactions.ts';
import { type KernelWork, SerialLoop } from './serial-loop.ts';
import { ServerStatusKeeper } from './server-status.ts';
import { endJobsOfStoppedNode } from './stopped-node.ts';
import { type SystemRunner, SystemJobs } from './system-jobs.ts';
import { WaitExplainer } from './waiting.ts';
import { WakeUps } from './wake-ups.ts';

export type { KernelWork } from './serial-loop.ts';
export type { SystemRunner } from './system-jobs.ts';
/** Services read windows as the engine does (a window's openings). */
export { loadWindow } from './windows.ts';
/** The Deadlines page judges runs by the rules the deadline watch raises alerts by. */
export { deadlineRule, isRun, RUNS_LOOKED_AT } from './deadlines.ts';
export { type ForecastEntry, type ForecastKey, type ForecastQuery, forecastPage } from './forecast.ts';

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
  /** False: job actions, submits and replies write no audit entries (to measure their cost; docs/architecture.md §18). */
  auditJobActions?: boolean;
  /** Audit entries older than this are purged (docs/architecture.md §18); kept when absent. */
  auditRetentionMs?: number;
}

/** In-server jobs end through a report of the serial loop, unless something else ended them meanwhile. */
function systemJobsReportingTo(loop: SerialLoop, clock: Clock, logger: Logger): SystemJobs {
  return new SystemJobs(
    (jobId, outcome) =>
      loop.report(async (tx, effects, kernel) => {
        const job = await tx.jobs.get(jobId);
        if (!job || job.processServer !== SYSTEM_SERVER || isFinal(job.status) || job.status === 'ConsoleRestart')
          return;
        await kernel.finish(tx, job, outcome, clock.now(), effects);
      }, jobId),
    (jobId, err) => logger.warn({ err, jobId }, 'the end of an in-server job was not stored; trying again'),
  );
}

/** Alert work is timer work: the timer owner does it, under its lease (docs/architecture.md §16). */
function alertWorkerOf(options: EngineOptions, cluster: Cluster, loop: SerialLoop): AlertWorker {
  const { store, clock, logger } = options;
  return new AlertWorker({
    store,
    clock,
    logger,
    senders: options.alertSenders,
    mayRun: () => cluster.isOwner,
    mutate: (work) =>
      loop.mutate(async (tx) => {
        await cluster.fence(tx);
        await work(tx);
      }),
  });
}

/**
 * The running scheduler: wires its parts and is the entry point services use (docs/architecture.md §6a). The
 * serial loop runs every change to jobs (serial-loop.ts); the wake-ups time the dispatch passes (wake-ups.ts);
 * agent routing connects agents and applies their reports (agent-routing.ts), the watchdog drops silent ones
 * (agent-watchdog.ts); finished jobs are purged (job-purge.ts); object changes and other nodes' messages have their
 * reactions (object-reactions.ts, cluster-inbox.ts). Effects happen only after the commit that decided them.
 */
export class Engine {
  /** The lifecycle kernel; the reactions of chains, events, recurrences, locks, questions and alerts are on it. */
  readonly kernel = new Kernel();
  readonly hub: AgentHub;
  readonly files: JobFileStore;
  readonly store: Store;
  /** This node among the server nodes sharing the database (docs/architecture.md §16). */
  readonly cluster: Cluster;
  readonly alerts: AlertWorker;
  /** A person's actions on events (raise, clear). */
  readonly events: EventActions;
  /** Watches the runs that have a Deadline and raises its alerts (docs/architecture.md §8c). */
  readonly deadlines: DeadlineWatch;
  private readonly options: EngineOptions;
  private readonly loop: SerialLoop;
  private readonly wakeUps: WakeUps;
  private readonly routing: AgentRouting;
  private readonly watchdog: AgentWatchdog;
  private readonly purge: JobPurge;
  private readonly objects: ObjectReactions;
  private readonly inbox: ClusterInbox;
  private readonly system: SystemJobs;
  private readonly servers: ServerStatusKeeper;
  private readonly alertSources = new AlertSources();
  private stopped = false;
  private started = false;

  constructor(options: EngineOptions) {
    this.options = options;
    const { store, clock, logger } = options;
    this.files = options.files;
    this.store = store;
    const cluster = options.cluster ?? Cluster.solo();
    this.cluster = cluster;
    registerReactions(this.kernel);
    const kernel = this.kernel;
    const loop = new SerialLoop({
      store,
      kernel,
      apply: (effects) => this.apply(effects),
      dispatch: () => this.wakeUps.dispatch(),
      auditing: { enabled: options.auditJobActions !== false, now: () => clock.now() },
    });
    this.loop = loop;
    this.events = new EventActions(loop, clock);
    this.system = systemJobsReportingTo(loop, clock, logger);
    this.servers = new ServerStatusKeeper(
      store,
      () => this.routing.view(),
      clock,
      async (tx, server, from, to) => {
        await onServerStatus(tx, server, from, to, clock.now());
        this.alertsPlanned();
      },
    );
    this.alerts = alertWorkerOf(options, cluster, loop);
    this.deadlines = new DeadlineWatch({
      store,
      clock,
      logger,
      cluster,
      loop,
      alertsPlanned: () => this.alertsPlanned(),
    });
    const refreshServers = () => this.refreshServers();
    const servers = this.servers;
    this.routing = new AgentRouting({
      rootPath: options.rootPath,
      store,
      clock,
      logger,
      files: options.files,
      verifyAgentSecret: (processServer, secret) => options.verifyAgentSecret(processServer, secret),
      killGraceMs: options.killGraceMs,
      cluster,
      loop,
      servers,
      refreshServers,
    });
    const hub = this.routing.hub;
    this.hub = hub;
    this.wakeUps = new WakeUps({
      store,
      kernel,
      clock,
      logger,
      loop,
      agents: hub,
      secrets: options.secrets,
      node: () => (cluster.shared ? cluster.id : undefined),
      apply: (effects) => this.apply(effects),
    });
    this.watchdog = new AgentWatchdog({ store, clock, logger, hub, cluster, loop, servers, refreshServers });
    this.purge = new JobPurge({
      store,
      clock,
      logger,
      cluster,
      loop,
      historyRetentionMs: options.historyRetentionMs,
      ...(options.auditRetentionMs === undefined ? {} : { auditRetentionMs: options.auditRetentionMs }),
    });
    this.objects = new ObjectReactions({
      clock,
      cluster,
      loop,
      alertSources: this.alertSources,
      deadlines: this.deadlines,
      tellHeartbeat: (processServer, every) => this.routing.tellHeartbeat(processServer, every),
      sendWatches: () => this.routing.sendWatches(),
    });
    this.inbox = new ClusterInbox({
      clock,
      logger,
      cluster,
      hub,
      loop,
      servers,
      wake: (hint) => this.wakeUps.wake(hint),
      tick: () => this.tick(),
      stopSystemJob: (jobId) => this.system.stop(jobId),
      objectChanged: (type) => void this.objects.inMemory(type),
      purgeHistory: () => this.purgeHistory(),
      kickAlerts: () => this.alerts.kick(),
      lookAtDeadlines: () => this.deadlines.lookSoon(),
      refreshServers,
    });
  }

  /** Lets a capability outside the engine run the jobs of a System definition (see SystemRunner). */
  registerSystemRunner(definition: string, runner: SystemRunner): void {
    this.system.register(definition, runner);
  }

  /** Recovers after a restart, then starts the timers. */
  async start(): Promise<void> {
    const { store, clock } = this.options;
    const now = clock.now();
    store.onStatusChanges(async (tx, changes) => {
      this.deadlines.noteChanges(changes);
      if (await onJobStatusChanges(tx, this.alertSources, changes, clock.now())) this.alertsPlanned();
    });
    this.alerts.start();
    this.servers.started(now);
    await this.mutate(async (tx, effects, kernel) => {
      // Beside other nodes, only those this node ran (its id is kept in its data folder) or of unknown node.
      await endJobsOfStoppedNode(
        kernel,
        tx,
        (job) => (job.data.runNode ?? this.cluster.id) === this.cluster.id,
        'The server stopped while the job ran',
        now,
        effects,
      );
      for (const job of await tx.jobs.listByStatus(['Queued'], { limit: 1_000_000 }))
        if (job.data.runNow) this.wakeUps.runNowAgain(job.jobId);
      const next = await tx.jobs.nextScheduledStart();
      if (next !== undefined) effects.wakeAt.push(next);
      // Limits that fell due while no node was up come now; the others when they fall due (docs/architecture.md §6b).
      const limit = await tx.jobs.nextMaxRunDue();
      if (limit !== undefined) effects.wakeAt.push(limit);
      effects.dispatch = true;
    });
    await this.cluster.start(this.inbox.handlers());
    await this.refreshServers();
    this.watchdog.start();
    this.purge.start();
    await this.deadlines.start();
    this.started = true;
  }

  /**
   * Asks why jobs wait, of the engine's own checks at this moment, changing nothing (docs/architecture.md §8). An
   * agent connected to any live node counts as connected (docs/architecture.md §16): that node dispatches to it.
   */
  waits(): WaitExplainer {
    const agentReady = (processServer: string) => this.routing.view().isReady(processServer);
    return new WaitExplainer(this.options.store, this.options.clock.now(), { agentReady });
  }

  /** Lets the live feed hear of other nodes' commits. */
  onClusterFeed(listener: ((items: FeedItem[]) => void) | undefined): void {
    this.inbox.onFeed(listener);
  }

  /** Started and not stopped: its loop takes work and its timers run (readiness). */
  get running(): boolean {
    return this.started && !this.stopped;
  }

  /** Stops timers and in-server jobs, lets the loop finish what it has, and closes agent sessions. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.loop.stop();
    this.wakeUps.stop();
    this.watchdog.stop();
    this.purge.stop();
    this.alerts.stop();
    this.deadlines.stop();
    this.options.store.onStatusChanges(undefined);
    this.system.stopAll();
    await this.idle();
    this.hub.close();
    await this.cluster.stop();
  }

  /** A person's action (and any change to existing jobs), alone in the serial loop (SerialLoop.mutate). */
  mutate<T>(work: KernelWork<T>, cause?: Cause): Promise<T> {
    return this.loop.mutate(work, cause);
  }

  /** Reports (agents, System jobs): like `mutate`, but may share a transaction (SerialLoop.report). */
  report(work: KernelWork<void>): Promise<void> {
    return this.loop.report(work);
  }

  /** Creating jobs beside the serial loop, sharing commits (SerialLoop.submit). */
  submit<T>(work: KernelWork<T>, cause?: Cause): Promise<T> {
    return this.loop.submit(work, cause);
  }

  requestDispatch(): void {
    this.loop.requestDispatch();
  }

  /** Told after an object changed; what follows is the type's `onChange` trait (ObjectReactions.changed). */
  objectChanged(type: TypeName, before: StoredObject | undefined, after: StoredObject | undefined): Promise<void> {
    return this.objects.changed(type, before, after);
  }

  /** Resolves once nothing is queued or running in the loop (tests and shutdown). */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  /**
   * Looks at the time now: due Scheduled jobs move on and time windows that opened or closed are seen. Timers call
   * it; tests in virtual time call it after moving the clock.
   */
  async tick(): Promise<void> {
    await this.wakeUps.tick();
    await this.deadlines.checkIfDue();
  }

  /**
   * When the engine will look at the time next on its own: the dispatcher or the deadline watch (tests in virtual
   * time step the clock to it).
   */
  get nextWakeAt(): number | undefined {
    const times = [this.wakeUps.nextWakeAt, this.deadlines.nextCheckAt].filter((t) => t !== undefined);
    return times.length === 0 ? undefined : Math.min(...times);
  }

  /** Writes each process server's Status where it changed. */
  async refreshServers(): Promise<void> {
    // Beside other nodes, the timer owner writes them (from every node's agents), so nodes never disagree in turn.
    if (this.cluster.hasPeers && !this.cluster.isOwner) return;
    try {
      await this.servers.refresh();
    } catch (err) {
      this.options.logger.warn({ err }, 'could not update process server status');
    }
  }

  /** The retention purge now (JobPurge.purgeHistory): tests on the virtual clock do what the timer would. */
  purgeHistory(): Promise<void> {
    return this.purge.purgeHistory();
  }

  /** A transaction planned alert work: the worker looks once it has committed. */
  private alertsPlanned(): void {
    setTimeout(() => this.alerts.kick(), 20).unref();
  }

  /** Carries out what committed transactions decided. */
  private apply(effects: Effects): void {
    this.routing.deliver(effects.messages);
    for (const job of effects.startSystem) this.system.start(job);
    for (const id of effects.stopSystem) this.system.stop(id);
    const { cluster } = this;
    if (effects.stopSystem.length > 0) cluster.tell({ k: 'stop', jobIds: effects.stopSystem });
    const { dispatch, wakeAt, overdueAt, runNow } = effects;
    if (dispatch || wakeAt.length > 0 || overdueAt.length > 0 || runNow.length > 0)
      cluster.tell({ k: 'wake', dispatch, wakeAt, overdueAt, runNow });
    if (effects.removeFiles.length > 0)
      this.files
        .remove(effects.removeFiles)
        .catch((err: unknown) => this.options.logger.warn({ err }, 'could not remove job files'));
    this.purge.keep(effects.purge);
    this.wakeUps.wake(effects);
    this.deadlines.committed();
  }
}
