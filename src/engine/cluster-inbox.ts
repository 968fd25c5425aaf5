import type { Logger } from 'pino';
import type { FeedItem } from '../feed/feed-events.ts';
import type { TypeName } from '../model/fields.ts';
import type { Clock } from '../time/clock.ts';
import type { AgentHub } from './agent-hub.ts';
import type { Cluster, ClusterHandlers } from './cluster.ts';
import { type ClusterMessage, wakeHere } from './cluster-messages.ts';
import type { SerialLoop } from './serial-loop.ts';
import type { ServerStatusKeeper } from './server-status.ts';
import { endJobsOfStoppedNode } from './stopped-node.ts';
import type { WakeHint } from './wake-ups.ts';

export interface ClusterInboxOptions {
  clock: Clock;
  logger: Logger;
  cluster: Cluster;
  hub: AgentHub;
  loop: Pick<SerialLoop, 'mutate' | 'requestDispatch'>;
  servers: Pick<ServerStatusKeeper, 'disconnected'>;
  /** What another node's commit means for this node's dispatcher and timers. */
  wake(hint: WakeHint): void;
  /** Looks at the time now (due Scheduled jobs, windows opened or closed). */
  tick(): Promise<void>;
  /** Stops an in-server job, should it run here. */
  stopSystemJob(jobId: number): void;
  /** The in-memory reactions to a change of an object of `type`. */
  objectChanged(type: TypeName): void;
  purgeHistory(): Promise<void>;
  /** Looks for alert work now. */
  kickAlerts(): void;
  /** The deadline watch looks now (docs/architecture.md §8c). */
  lookAtDeadlines(): void;
  /** Writes each process server's Status where it changed. */
  refreshServers(): Promise<void>;
}

/**
 * What this node is told by the others sharing the database, and when it becomes the timer owner
 * (docs/architecture.md §16): hints about their commits, messages for the agents connected here, and the
 * settling of a node that stopped beating.
 */
export class ClusterInbox {
  private readonly options: ClusterInboxOptions;
  private feedListener: ((items: FeedItem[]) => void) | undefined;

  constructor(options: ClusterInboxOptions) {
    this.options = options;
  }

  /** Lets the live feed hear of other nodes' commits. */
  onFeed(listener: ((items: FeedItem[]) => void) | undefined): void {
    this.feedListener = listener;
  }

  /** What the cluster is given at start: this node's agents, and what to do when it hears or takes over. */
  handlers(): ClusterHandlers {
    const { cluster, hub, clock, loop } = this.options;
    return {
      agents: () =>
        hub.connected().map((a) => ({
          processServer: a.processServer,
          instance: a.instance,
          node: cluster.id,
          seenAt: hub.lastSeen(a.processServer) ?? clock.now(),
          ready: a.ready,
        })),
      message: (m) => this.receive(m),
      takeover: () => {
        void this.options.purgeHistory();
        if (!cluster.shared) return;
        // What the timers would have done while no node ran them: look now.
        loop.requestDispatch();
        this.options.kickAlerts();
        this.options.lookAtDeadlines();
        void this.options.tick().catch(() => {});
        void this.options.refreshServers();
      },
      resync: () => {
        loop.requestDispatch();
        this.options.lookAtDeadlines();
        void this.options.tick().catch(() => {});
      },
      deadNode: (id) => this.settleDeadNode(id),
    };
  }

  private receive(m: ClusterMessage): void {
    const { hub, cluster } = this.options;
    switch (m.k) {
      case 'wake':
        this.options.wake(wakeHere(m, hub.connected().length > 0));
        return;
      case 'agent':
        hub.send(m.processServer, m.message);
        return;
      case 'disconnect':
        if (hub.isConnected(m.processServer)) {
          this.options.servers.disconnected(m.processServer, hub.lastSeen(m.processServer));
          hub.disconnect(m.processServer);
        }
        return;
      case 'stop':
        for (const id of m.jobIds) this.options.stopSystemJob(id);
        return;
      case 'object':
        this.options.objectChanged(m.type);
        return;
      case 'deadlines':
        if (cluster.isOwner) this.options.lookAtDeadlines();
        return;
      case 'servers':
        if (cluster.isOwner)
          void cluster
            .reloadPresence()
            .catch(() => {})
            .then(() => this.options.refreshServers());
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
    const { cluster, clock } = this.options;
    const n = await this.options.loop.mutate(async (tx, effects, kernel) => {
      await cluster.fence(tx);
      const note = `The server node ${id} stopped while the job ran`;
      return endJobsOfStoppedNode(kernel, tx, (job) => job.data.runNode === id, note, clock.now(), effects);
    });
    this.options.logger.warn({ node: id, jobs: n }, 'a server node stopped beating; its System jobs are Unknown');
  }
}
