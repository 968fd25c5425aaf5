import { fieldDefault } from '../model/data.ts';
import type { Logger } from 'pino';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import type { AgentHub } from './agent-hub.ts';
import { applyAgentLost, applyOrphans } from './agent-reports.ts';
import type { Cluster } from './cluster.ts';
import type { SerialLoop } from './serial-loop.ts';
import type { ServerStatusKeeper } from './server-status.ts';

export interface AgentWatchdogOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  hub: AgentHub;
  cluster: Cluster;
  loop: Pick<SerialLoop, 'mutate' | 'requestDispatch'>;
  servers: Pick<ServerStatusKeeper, 'overdue' | 'disconnected' | 'lost'>;
  /** Writes each process server's Status where it changed. */
  refreshServers(): Promise<void>;
}

/**
 * The once-a-second look at the agents (docs/architecture.md §7, §16): an agent silent or away beyond its
 * AgentTimeout is dropped and its jobs end Unknown, as do attempts left with an agent instance that no longer
 * serves their process server. Timer work: beside other nodes, the timer owner alone does it.
 */
export class AgentWatchdog {
  private readonly options: AgentWatchdogOptions;
  private timer: NodeJS.Timeout | undefined;
  private ticks = 0;
  private stopped = false;

  constructor(options: AgentWatchdogOptions) {
    this.options = options;
  }

  start(): void {
    let ticks = 0;
    this.timer = setInterval(() => {
      void this.checkAgents();
      // Beside other nodes, a hint may be lost (sent just as the database went away): look every 5 s anyway.
      if (this.options.cluster.hasPeers && ++ticks % 5 === 0) this.options.loop.requestDispatch();
    }, 1000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Agents silent or away beyond their timeout: drop the session, and set their jobs Unknown. */
  private async checkAgents(): Promise<void> {
    const { cluster, clock, servers, hub, logger } = this.options;
    // Timer work: the owner alone declares agents lost, from where every node says they are.
    if (this.stopped || !cluster.isOwner) return;
    try {
      for (const processServer of await servers.overdue(clock.now())) {
        // A silent agent is dropped and declared lost in the same tick: its jobs become Unknown at most one
        // watchdog tick (1 s) after AgentTimeout has passed since it was last heard of (docs/architecture.md §7).
        if (hub.isConnected(processServer)) {
          servers.disconnected(processServer, hub.lastSeen(processServer));
          hub.disconnect(processServer);
        } else {
          cluster.tell({ k: 'disconnect', processServer });
          await cluster.forgetAgent(processServer);
        }
        // The process server shows Unknown before its jobs do, so a client that sees the jobs sees why.
        servers.lost(processServer);
        await this.options.refreshServers();
        const n = await this.options.loop.mutate(async (tx, effects, kernel) => {
          await cluster.fence(tx);
          return applyAgentLost(kernel, tx, processServer, clock.now(), effects);
        });
        if (n > 0) logger.warn({ processServer, jobs: n }, 'agent lost: its jobs are Unknown');
      }
      // Every 5 s: such attempts are rare, and waiting jobs are read to find them.
      if (++this.ticks % 5 === 0) await this.settleOrphans();
      await this.options.refreshServers();
    } catch (err) {
      logger.warn({ err }, 'agent check failed');
    }
  }

  /**
   * Attempts still Dispatched to an agent instance other than the one serving their process server now, for longer
   * than its AgentTimeout, end Unknown (docs/architecture.md §7): that instance will not report them.
   */
  private async settleOrphans(): Promise<void> {
    const { store, clock, cluster, hub } = this.options;
    const now = clock.now();
    const remote = cluster.remoteAgents();
    const holder = (processServer: string) =>
      hub.instanceOf(processServer) ?? remote.find((a) => a.processServer === processServer && a.alive)?.instance;
    const timeouts = new Map<string, number>();
    const orphans: Array<{ jobId: number; attempt: number; instance: string }> = [];
    for (const job of await store.jobs.listByStatus(['Dispatched', 'Assigned'], { limit: 1000 })) {
      const { processServer: ps } = job;
      const instance = job.data.agentInstance;
      if (ps === null || instance === undefined || [undefined, instance].includes(holder(ps))) continue;
      let timeout = timeouts.get(ps);
      if (timeout === undefined) {
        const server = await store.getObject('ProcessServer', ps);
        timeout = server?.data.AgentTimeout ?? fieldDefault('ProcessServer', 'AgentTimeout');
        timeouts.set(ps, timeout);
      }
      if (now - job.modificationTime > timeout * 1000)
        orphans.push({ jobId: job.jobId, attempt: job.attempt, instance });
    }
    if (orphans.length === 0) return;
    const n = await this.options.loop.mutate(async (tx, effects, kernel) => {
      await cluster.fence(tx);
      return applyOrphans(kernel, tx, orphans, clock.now(), effects);
    });
    if (n > 0)
      this.options.logger.warn({ jobs: n }, 'attempts dispatched to an agent that no longer serves them: Unknown');
  }
}
