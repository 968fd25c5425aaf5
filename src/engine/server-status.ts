import { SYSTEM_SERVER } from '../domain/job.ts';
import { OCCUPYING } from '../domain/job-status.ts';
import { fieldDefault } from '../model/data.ts';
import type { AgentPresence } from '../store/cluster-store.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';

/**
 * Where the agents are, as this node knows: its own connections and, when it shares its database with other nodes,
 * theirs (docs/architecture.md §16).
 */
export interface AgentView {
  /** Connected to some node, introduced itself, not draining. */
  isReady(processServer: string): boolean;
  /** When its node last heard from it; undefined when no node holds its connection. */
  lastSeen(processServer: string): number | undefined;
}

/**
 * This node's connections (`local`) first; an agent connected to another node (`remote`, as the nodes wrote it) is
 * ready while that node beats, and when it was last heard of counts even after that node died.
 */
export function agentViewOf(
  local: AgentView & { isConnected(processServer: string): boolean },
  remote: ReadonlyArray<AgentPresence & { alive: boolean }>,
): AgentView {
  const byServer = new Map(remote.map((a) => [a.processServer, a]));
  return {
    isReady: (processServer) => {
      if (local.isConnected(processServer)) return local.isReady(processServer);
      const r = byServer.get(processServer);
      return r?.alive === true && r.ready;
    },
    lastSeen: (processServer) => local.lastSeen(processServer) ?? byServer.get(processServer)?.seenAt,
  };
}

/** Told of a process server's Status change inside the transaction that writes it (alert sources). */
export type StatusChangeListener = (tx: Store, server: StoredObject, from: string | null, to: string) => Promise<void>;

/**
 * Keeps each process server's Status (Running, Connecting, Unknown, ShuttingDown, Shutdown) in step with its
 * agent's connection and its DesiredStatus, and says which agents have been away longer than their AgentTimeout.
 */
export class ServerStatusKeeper {
  private readonly store: Store;
  private readonly hub: () => AgentView;
  private readonly clock: Clock;
  /** When the agent went away; a server start counts as "away since" for agents not yet reconnected. */
  private readonly awaySince = new Map<string, number>();
  private readonly declaredLost = new Set<string>();
  /** Each process server's AgentTimeout as last read, and since when (its agent is told the new heartbeat then). */
  private readonly timeouts = new Map<string, { ms: number; since: number }>();
  private startedAt = 0;
  private readonly onChange: StatusChangeListener;

  constructor(store: Store, hub: () => AgentView, clock: Clock, onChange: StatusChangeListener) {
    this.store = store;
    this.hub = hub;
    this.clock = clock;
    this.onChange = onChange;
  }

  started(now: number): void {
    this.startedAt = now;
  }

  connected(processServer: string): void {
    this.awaySince.delete(processServer);
    this.declaredLost.delete(processServer);
  }

  /** The agent went away at `at` (a silent agent: when it was last heard of); the earliest such time counts. */
  disconnected(processServer: string, at = this.clock.now()): void {
    const since = this.awaySince.get(processServer);
    if (since === undefined || since > at) this.awaySince.set(processServer, at);
  }

  lost(processServer: string): void {
    this.declaredLost.add(processServer);
  }

  /** Agents silent (connected) or away (with jobs, or after having been connected) beyond their timeout. */
  async overdue(now: number): Promise<string[]> {
    const hub = this.hub();
    const busy = this.busyServers();
    const result: string[] = [];
    for (const ps of await this.store.listObjects('ProcessServer', { limit: 10_000 })) {
      if (ps.key === SYSTEM_SERVER) continue;
      const timeout = (ps.data.AgentTimeout ?? fieldDefault('ProcessServer', 'AgentTimeout')) * 1000;
      const changedAt = this.timeoutSince(ps.key, timeout, now);
      // A changed timeout counts from when it was seen: the agent beat at its old pace until it was told the new one.
      const last = hub.lastSeen(ps.key);
      const seen = last === undefined ? undefined : Math.max(last, changedAt);
      if (seen !== undefined) {
        if (now - seen > timeout) result.push(ps.key);
        continue;
      }
      if (this.declaredLost.has(ps.key) && !(await busy()).has(ps.key)) continue;
      const since = Math.max(this.awaySince.get(ps.key) ?? this.startedAt, changedAt);
      if (now - since > timeout && (this.awaySince.has(ps.key) || (await busy()).has(ps.key))) result.push(ps.key);
    }
    return result;
  }

  /** When the AgentTimeout in force was first read (-Infinity for the first reading of a server). */
  private timeoutSince(processServer: string, ms: number, now: number): number {
    const known = this.timeouts.get(processServer);
    if (known?.ms === ms) return known.since;
    const since = known === undefined ? Number.NEGATIVE_INFINITY : now;
    this.timeouts.set(processServer, { ms, since });
    return since;
  }

  /** Writes the Status of every process server whose status changed. */
  async refresh(): Promise<void> {
    const hub = this.hub();
    const busy = this.busyServers();
    for (const ps of await this.store.listObjects('ProcessServer', { limit: 10_000 })) {
      const stopping = ps.data.DesiredStatus === 'Shutdown';
      const status = stopping
        ? (await busy()).has(ps.key)
          ? 'ShuttingDown'
          : 'Shutdown'
        : ps.key === SYSTEM_SERVER || hub.isReady(ps.key)
          ? 'Running'
          : this.declaredLost.has(ps.key)
            ? 'Unknown'
            : 'Connecting';
      if (ps.data.Status === status) continue;
      await this.store.transaction(async (tx) => {
        const current = await tx.getObject('ProcessServer', ps.key);
        if (!current || current.data.Status === status) return;
        await tx.patchObjectData(current.uniqueId, { ...current.data, Status: status });
        await this.onChange(tx, current, current.data.Status ?? null, status);
      });
    }
  }

  /**
   * The process servers with jobs holding a slot, counted once when first asked. Counting reads every such job
   * (costly with many running jobs, twice a second from the watchdog: bench B11), and most calls never need
   * it: only a disconnected agent or a server shutting down does.
   */
  private busyServers(): () => Promise<Set<string>> {
    let busy: Promise<Set<string>> | undefined;
    return () =>
      (busy ??= this.store.jobs.countActive(OCCUPYING).then((counts) => {
        const servers = new Set<string>();
        for (const c of counts) if (c.processServer !== null && c.count > 0) servers.add(c.processServer);
        return servers;
      }));
  }
}
