import type { Logger } from 'pino';
import type { AgentMessage, WelcomeMessage } from '../agent/protocol.ts';
import { SYSTEM_SERVER } from '../domain/job.ts';
import { isDatabaseUnavailable, isDiskFull, type Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { AgentHub } from './agent-hub.ts';
import { busyReason, heartbeatMs } from './agent-instances.ts';
import { applyFinished, applyHello, applyLost, applyStarted } from './agent-reports.ts';
import type { Cluster } from './cluster.ts';
import type { Effects } from './effects.ts';
import { applyRaise, saveWatchStatus, watchMessage } from './file-events.ts';
import type { JobFileStore } from './job-files.ts';
import type { SerialLoop } from './serial-loop.ts';
import { type AgentView, agentViewOf, type ServerStatusKeeper } from './server-status.ts';

export interface AgentRoutingOptions {
  /** Context root (`/millrace`): agents connect to `<root>/agent`. */
  rootPath: string;
  store: Store;
  clock: Clock;
  logger: Logger;
  files: JobFileStore;
  /** Checks an agent's secret against its process server. */
  verifyAgentSecret(processServer: string, secret: string): Promise<boolean>;
  killGraceMs: number;
  cluster: Cluster;
  loop: Pick<SerialLoop, 'mutate' | 'report' | 'requestDispatch'>;
  servers: Pick<ServerStatusKeeper, 'connected' | 'disconnected'>;
  /** Writes each process server's Status where it changed. */
  refreshServers(): Promise<void>;
}

/**
 * The engine's side of the agent sessions (docs/architecture.md §7, §16): which agent may connect, what its
 * reports change (through the serial loop), and how the engine's messages reach an agent, whichever node it is
 * connected to. The sessions themselves (sockets, framing, order) are the hub's.
 */
export class AgentRouting {
  readonly hub: AgentHub;
  private readonly options: AgentRoutingOptions;

  constructor(options: AgentRoutingOptions) {
    this.options = options;
    const { servers, loop } = options;
    this.hub = new AgentHub(
      options.rootPath,
      {
        authenticate: (processServer, secret, instance) => this.authenticate(processServer, secret, instance),
        onMessage: (processServer, message, instance) => this.onMessage(processServer, message, instance),
        onConnect: (processServer) => {
          servers.connected(processServer);
          loop.requestDispatch();
          void this.agentsChanged();
        },
        onClose: (processServer) => {
          servers.disconnected(processServer);
          void this.agentsChanged(processServer);
        },
      },
      options.logger,
      () => options.clock.now(),
    );
  }

  /** Where the agents are: this node's connections, then those other nodes wrote (docs/architecture.md §16). */
  view(): AgentView {
    return agentViewOf(this.hub, this.options.cluster.remoteAgents());
  }

  /**
   * Sends what committed transactions decided to tell agents. An agent connected to another node gets it through
   * that node; a `run` is only ever dispatched to this node's own agents (it holds secrets, which never travel
   * between nodes).
   */
  deliver(messages: Effects['messages']): void {
    for (const { processServer, message, instance } of messages)
      if (!this.hub.send(processServer, message, instance) && message.type !== 'run')
        this.options.cluster.tell({ k: 'agent', processServer, message });
  }

  /**
   * A connected agent beats at the pace it was given when it connected: told the new one at once, wherever it is
   * connected (another node's agent through the cluster), so that a shorter AgentTimeout never drops it.
   */
  tellHeartbeat(processServer: string, every: number): void {
    const message = { type: 'heartbeat', heartbeatMs: every } as const;
    if (!this.hub.send(processServer, message)) this.options.cluster.tell({ k: 'agent', processServer, message });
  }

  /**
   * Tells the agents connected to this node what to watch (docs/architecture.md §7b): after their `hello`, and on
   * every node when an event definition changed (its type's `file-watches` reaction).
   */
  async sendWatches(only?: string): Promise<void> {
    const servers = only !== undefined ? [only] : this.hub.connected().map((c) => c.processServer);
    for (const processServer of servers) {
      const message = await watchMessage(this.options.store, processServer).catch((err: unknown) => {
        this.options.logger.warn({ err, processServer }, 'could not read the file watches');
        return undefined;
      });
      if (message) this.hub.send(processServer, message);
    }
  }

  /**
   * The secret first; then one agent instance per process server (docs/architecture.md §16): another instance
   * connected here, or holding it on another live node, makes this one refused (the hub accepts one upgrade of a
   * process server at a time, so the check and the claim do not race).
   */
  private async authenticate(
    processServer: string,
    secret: string,
    instance: string,
  ): Promise<{ welcome: WelcomeMessage } | { status: number; reason: string }> {
    const { store, cluster, clock } = this.options;
    if (processServer === SYSTEM_SERVER)
      return { status: 409, reason: 'GLOBAL.System runs inside the server and takes no agent' };
    const object = await store.getObject('ProcessServer', processServer);
    if (!object || !(await this.options.verifyAgentSecret(processServer, secret)))
      return { status: 401, reason: 'unknown process server or wrong secret' };
    const heartbeat = heartbeatMs(object.data.AgentTimeout);
    // Another instance connected here keeps it while it would not be declared lost (heard from within AgentTimeout);
    // a session that never said hello, or silent longer (a cut cable), gives way to the newcomer, which replaces it.
    const here = this.hub.holder(processServer, 4 * heartbeat);
    if (here?.live && here.instance !== instance)
      return { status: 409, reason: busyReason(processServer, { instance: here.instance, node: cluster.id }) };
    const holder = await cluster.claimAgent(processServer, instance, clock.now());
    if (holder) return { status: 409, reason: busyReason(processServer, holder) };
    return {
      welcome: { type: 'welcome', killGraceMs: this.options.killGraceMs, heartbeatMs: heartbeat },
    };
  }

  private async onMessage(processServer: string, message: AgentMessage, instance: string): Promise<void> {
    const { loop, clock } = this.options;
    const now = () => clock.now();
    // Reports are not awaited (many share a transaction), so a failure is handled here: with the database away or
    // the disk full the agent is reconnected and sends again what is not acknowledged (its files from the start,
    // then its reports). After any other failure the agent sends the report again unasked (RESEND_HEARTBEATS in
    // agent.ts).
    const failed = (err: unknown) => {
      if (isDatabaseUnavailable(err) || isDiskFull(err)) this.hub.replay(processServer, err);
    };
    switch (message.type) {
      case 'hello':
        await loop.mutate((tx, effects, kernel) =>
          applyHello(kernel, tx, { processServer, instance }, message.known, now(), effects),
        );
        await this.sendWatches(processServer);
        return;
      case 'raise':
        void loop
          .report(async (tx, effects, kernel) => {
            await applyRaise(kernel, tx, processServer, message, now(), effects);
          })
          .catch(failed);
        return;
      case 'watchStatus':
        await saveWatchStatus(this.options.store, processServer, message, now()).catch((err: unknown) => {
          this.options.logger.warn({ err, processServer }, 'file watch status not stored');
        });
        return;
      case 'started':
        void loop
          .report((tx, effects) => applyStarted(tx, processServer, message, now(), effects), message.jobId)
          .catch(failed);
        return;
      case 'output':
        await this.options.files
          .write(message.jobId, message.file, message.offset, Buffer.from(message.data, 'base64'))
          .catch((err: unknown) => {
            this.options.logger.warn({ err, jobId: message.jobId, file: message.file }, 'job output not stored');
            failed(err);
          });
        return;
      case 'finished':
        void loop
          .report(
            (tx, effects, kernel) => applyFinished(kernel, tx, processServer, message, now(), effects),
            message.jobId,
          )
          .catch(failed);
        return;
      case 'lost':
        void loop
          .report((tx, effects, kernel) => applyLost(kernel, tx, processServer, message, now(), effects), message.jobId)
          .catch(failed);
        return;
      case 'draining':
        void this.options.refreshServers();
        return;
      case 'ping':
        return;
    }
  }

  /** An agent connected to or left this node: other nodes hear of it, the timer owner writes statuses. */
  private async agentsChanged(gone?: string): Promise<void> {
    const { cluster } = this.options;
    if (cluster.shared)
      await cluster.agentsChanged(gone).catch((err: unknown) => {
        this.options.logger.warn({ err }, 'could not record where the agents are');
      });
    if (cluster.hasPeers) cluster.tell({ k: 'servers' });
    await this.options.refreshServers();
  }
}
