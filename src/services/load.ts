import { OCCUPYING } from '../domain/job-status.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';

export interface QueueLoad {
  key: string;
  Description: string | null;
  Held: boolean;
  /** The queue's limit of jobs at once (ExecutionSize); null for none. */
  limit: number | null;
  running: number;
}

export interface ProcessServerLoad {
  key: string;
  Description: string | null;
  Status: string | null;
  DesiredStatus: string | null;
  limit: number | null;
  running: number;
  /** Whether an agent for it is connected to this server now. */
  agentConnected: boolean;
}

/**
 * The dashboard's "queues and process servers" page: each visible queue's and process server's jobs holding a
 * slot against its limit, and whether its agent is connected. One grouped count over the active jobs (an index
 * on status), so its cost does not grow with the history.
 */
export class LoadReport {
  private readonly store: Store;
  private readonly isConnected: (processServer: string) => boolean;

  constructor(store: Store, isConnected: (processServer: string) => boolean) {
    this.store = store;
    this.isConnected = isConnected;
  }

  async of(principal: Principal): Promise<{ queues: QueueLoad[]; processServers: ProcessServerLoad[] }> {
    const byQueue = new Map<string, number>();
    const byServer = new Map<string, number>();
    for (const c of await this.store.jobs.countActive(OCCUPYING)) {
      byQueue.set(c.queue, (byQueue.get(c.queue) ?? 0) + c.count);
      if (c.processServer !== null) byServer.set(c.processServer, (byServer.get(c.processServer) ?? 0) + c.count);
    }
    const text = (v: unknown) => (typeof v === 'string' ? v : null);
    const num = (v: unknown) => (typeof v === 'number' ? v : null);
    const queues = (await this.store.listObjects('Queue', { limit: 10_000 }))
      .filter((q) => can(principal, 'Queue', q.partition, 'View'))
      .map((q) => ({
        key: q.key,
        Description: text(q.data.Description),
        Held: q.data.Held === true,
        limit: num(q.data.ExecutionSize),
        running: byQueue.get(q.key) ?? 0,
      }));
    const processServers = (await this.store.listObjects('ProcessServer', { limit: 10_000 }))
      .filter((s) => can(principal, 'ProcessServer', s.partition, 'View'))
      .map((s) => ({
        key: s.key,
        Description: text(s.data.Description),
        Status: text(s.data.Status),
        DesiredStatus: text(s.data.DesiredStatus),
        limit: num(s.data.ExecutionSize),
        running: byServer.get(s.key) ?? 0,
        agentConnected: this.isConnected(s.key),
      }));
    return { queues, processServers };
  }
}
