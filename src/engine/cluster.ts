import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { AgentPresence, ClusterNode } from '../store/cluster-store.ts';
import type { Channel, Store } from '../store/store.ts';
import { type ClusterMessage, pack, unpack } from './cluster-messages.ts';

/** The lease whose holder runs the timers (docs/architecture.md §16). */
export const TIMER_LEASE = 'timers';
export const DEFAULT_LEASE_MS = 10_000;
/** How often a node beats, renews its lease and writes its agents' presence. */
const BEAT_MS = 1000;

/** What the engine gives the cluster and is told by it. */
export interface ClusterHandlers {
  /** The agents connected to this node now. */
  agents(): AgentPresence[];
  /** A message from another node. */
  message(m: ClusterMessage): void;
  /** This node just became the timer owner (or started as it). */
  takeover(): void;
  /** Another node may have committed what this one did not hear of (a node joined, the channel reconnected). */
  resync(): void;
  /** The owner found a node that stopped beating: what it ran in memory is to be settled. */
  deadNode(id: string): Promise<void>;
}

export interface ClusterOptions {
  store: Store;
  logger: Logger;
  /** This node's id: stable across its restarts (nodeIdentity). */
  id: string;
  version: string;
  address: string;
  /** How long a lease and a heartbeat count; a dead owner is replaced within about this. */
  leaseMs?: number;
  /** Wall clock for leases and heartbeats (tests); the engine's clock may be virtual. */
  wallClock?: () => number;
}

/**
 * This node among the server nodes that share one PostgreSQL database (docs/architecture.md §16). It beats in
 * `cluster_nodes`, holds or waits for the timer lease, writes where its agents are, and tells the other nodes
 * what its commits mean for them over LISTEN/NOTIFY — only while there are other nodes, so one node alone pays a
 * heartbeat a second and nothing else. On SQLite (`solo`) there is one node: it owns the timers and tells nobody.
 */
export class Cluster {
  readonly id: string;
  private readonly options: ClusterOptions | undefined;
  private readonly leaseMs: number;
  private readonly wall: () => number;
  private handlers: ClusterHandlers | undefined;
  private token: number | undefined;
  private ownedUntil = 0;
  private peerIds: string[] = [];
  private presence: AgentPresence[] = [];
  private channel: Channel | undefined;
  private outbox: ClusterMessage[] = [];
  private flushing = false;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;
  private readonly startedAt: number;

  private constructor(id: string, options: ClusterOptions | undefined) {
    this.id = id;
    this.options = options;
    this.leaseMs = options?.leaseMs ?? DEFAULT_LEASE_MS;
    this.wall = options?.wallClock ?? Date.now;
    this.startedAt = this.wall();
  }

  /** The only node of its database (SQLite). */
  static solo(): Cluster {
    return new Cluster('solo', undefined);
  }

  /** A node of a database other nodes may share (PostgreSQL). */
  static shared(options: ClusterOptions): Cluster {
    return new Cluster(options.id, options);
  }

  get shared(): boolean {
    return this.options !== undefined;
  }

  /** Whether other nodes are alive (their heartbeat within the lease time). */
  get hasPeers(): boolean {
    return this.peerIds.length > 0;
  }

  /** This node runs the timers: alone, or holding an unexpired lease. */
  get isOwner(): boolean {
    return this.options === undefined || (this.token !== undefined && this.wall() < this.ownedUntil);
  }

  /**
   * Agents other nodes wrote, as of the last beat (or `reloadPresence`): `alive` when that node still beats. A
   * dead node's agents keep when they were last heard of, which counts towards their AgentTimeout.
   */
  remoteAgents(): Array<AgentPresence & { alive: boolean }> {
    return this.presence.filter((a) => a.node !== this.id).map((a) => ({ ...a, alive: this.peerIds.includes(a.node) }));
  }

  /** Reads every node's agents again (told that one came or went). */
  async reloadPresence(): Promise<void> {
    if (this.options && this.channel) this.presence = await this.options.store.cluster.agents();
  }

  /** The timer owner declared this agent lost: its presence goes, so it is not declared lost again. */
  async forgetAgent(processServer: string): Promise<void> {
    const options = this.options;
    if (!options) return;
    const row = this.presence.find((a) => a.processServer === processServer && a.node !== this.id);
    if (row) await options.store.cluster.dropAgent(processServer, row.node);
    this.presence = this.presence.filter((a) => a !== row);
  }

  /** Beats once (taking the lease when free) and then every second. */
  async start(handlers: ClusterHandlers): Promise<void> {
    this.handlers = handlers;
    if (!this.options) {
      handlers.takeover();
      return;
    }
    // Rows of this node's agents from before a restart: it holds no connection yet (docs/architecture.md §16, claimAgent).
    for (const a of await this.options.store.cluster.agents())
      if (a.node === this.id) await this.options.store.cluster.dropAgent(a.processServer, this.id);
    await this.beat();
    this.timer = setInterval(() => {
      this.beating ??= this.beat().finally(() => {
        this.beating = undefined;
      });
    }, BEAT_MS);
    this.timer.unref();
  }

  /** Stops beating and gives the lease up so another node takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.beating;
    await this.flush();
    const options = this.options;
    if (!options) return;
    await this.channel?.close();
    try {
      if (this.token !== undefined) await options.store.cluster.releaseLease(TIMER_LEASE, this.id);
      await options.store.cluster.removeNode(this.id);
    } catch (err) {
      options.logger.warn({ err }, 'could not leave the cluster cleanly; other nodes will see this node stop beating');
    }
  }

  /**
   * An agent connected to this node or left it (`gone`): written at once rather than at the next beat, so the
   * timer owner sees it when told.
   */
  async agentsChanged(gone?: string): Promise<void> {
    const options = this.options;
    if (!options || !this.handlers) return;
    // Dropped even while alone: the row of a claim (claimAgent) must not outlive the connection.
    if (gone !== undefined) await options.store.cluster.dropAgent(gone, this.id);
    if (this.channel) await options.store.cluster.putAgents(this.id, this.handlers.agents());
  }

  /**
   * An agent instance connects to this node: it takes its process server unless another instance holds it on a
   * live node (docs/architecture.md §16). Returns undefined when taken (always, for a node alone on SQLite), else
   * the holder, and the agent is refused.
   */
  async claimAgent(processServer: string, instance: string, seenAt: number): Promise<AgentPresence | undefined> {
    const options = this.options;
    if (!options) return undefined;
    const holder = await options.store.cluster.claimAgent(
      { processServer, node: this.id, instance, seenAt, ready: false },
      this.wall() - this.leaseMs,
    );
    if (holder === undefined) this.presence = this.presence.filter((a) => a.processServer !== processServer);
    return holder;
  }

  /**
   * The node (other than this one, and alive) whose agent holds `processServer`, as the database says now; used
   * before this node starts a local agent of its own.
   */
  async heldElsewhere(processServer: string): Promise<string | undefined> {
    const options = this.options;
    if (!options) return undefined;
    const aliveAfter = this.wall() - this.leaseMs;
    const alive = new Set((await options.store.cluster.nodes()).filter((n) => n.seenAt > aliveAfter).map((n) => n.id));
    const row = (await options.store.cluster.agents()).find((a) => a.processServer === processServer);
    return row && row.node !== this.id && alive.has(row.node) ? row.node : undefined;
  }

  /**
   * Inside a transaction of timer work: throws LeaseLost unless this node still holds the timer lease, and (on
   * PostgreSQL) keeps a takeover waiting until the transaction ends. Nothing to check for a node alone.
   */
  async fence(tx: Store): Promise<void> {
    if (!this.options) return;
    if (this.token === undefined) throw new Error('this node does not hold the timer lease');
    await tx.cluster.fence(TIMER_LEASE, this.id, this.token, this.wall());
  }

  /** Tells the other nodes, if any; sent together once the current turn of the event loop ends. */
  tell(message: ClusterMessage): void {
    if (!this.options || !this.hasPeers || this.stopped) return;
    this.outbox.push(message);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.flushing = false;
    const messages = this.outbox.splice(0);
    const channel = this.channel;
    if (messages.length === 0 || !channel) return;
    const { payloads, tooLarge } = pack(this.id, messages);
    for (const m of tooLarge) this.options?.logger.warn({ kind: m.k }, 'cluster message too large to send; left out');
    if (payloads.length > 0)
      await channel
        .notify(payloads)
        .catch((err: unknown) => this.options?.logger.warn({ err }, 'could not tell the other nodes'));
  }

  private async beat(): Promise<void> {
    const options = this.options;
    const h = this.handlers;
    if (!options || !h || this.stopped) return;
    const sent = this.wall();
    try {
      const c = options.store.cluster;
      const me: ClusterNode = {
        id: this.id,
        version: options.version,
        startedAt: this.startedAt,
        seenAt: sent,
        address: options.address,
      };
      await c.beat(me);
      const nodes = await c.nodes();
      const alive = nodes.filter((n) => n.id !== this.id && n.seenAt > sent - this.leaseMs).map((n) => n.id);
      const joined = alive.some((id) => !this.peerIds.includes(id));
      this.peerIds = alive;
      if (alive.length > 0 && !this.channel) await this.openChannel();
      if (this.channel) {
        await c.putAgents(this.id, h.agents());
        this.presence = await c.agents();
      }
      // The row expires a beat before the lease time, so a node that takes over at its next beat does so within the
      // lease time of the owner's death; the owner renews every beat, long before.
      const until = sent + Math.max(this.leaseMs - BEAT_MS, this.leaseMs / 2);
      const token = await c.takeLease(TIMER_LEASE, this.id, sent, until);
      const was = this.isOwner;
      this.token = token;
      // Counted from before the statement was sent: the database's expiry is later than ours, never earlier.
      this.ownedUntil = token === undefined ? 0 : until;
      if (token !== undefined && !was) {
        options.logger.info({ node: this.id, token }, 'this node runs the timers');
        h.takeover();
      } else if (token === undefined && was)
        options.logger.warn({ node: this.id }, 'this node no longer runs the timers');
      if (joined) h.resync();
      if (this.isOwner)
        for (const n of nodes)
          if (n.id !== this.id && n.seenAt <= sent - this.leaseMs) {
            await h.deadNode(n.id);
            await c.removeNode(n.id);
          }
    } catch (err) {
      options.logger.warn({ err }, 'cluster heartbeat failed');
    }
  }

  private async openChannel(): Promise<void> {
    const options = this.options;
    const channel = options?.store.openChannel();
    if (!options || !channel) return;
    await channel.listen(
      (payload) => this.receive(payload),
      () => this.handlers?.resync(),
    );
    this.channel = channel;
    this.handlers?.resync();
  }

  private receive(payload: string): void {
    const envelope = unpack(payload);
    if (!envelope || envelope.from === this.id) return;
    for (const m of envelope.messages) {
      try {
        this.handlers?.message(m);
      } catch (err) {
        this.options?.logger.warn({ err, kind: m.k }, 'cluster message not handled');
      }
    }
  }
}

/**
 * This node's id: `MILLRACE_NODE_ID` when given, else the one kept in the data folder (made once from the host
 * name and a random suffix), so a restarted node takes its own lease back at once and settles what it ran before.
 * Two nodes must not share a data folder.
 */
export function nodeIdentity(dataDir: string, given?: string): string {
  if (given) return given;
  const file = join(dataDir, 'node-id');
  if (existsSync(file)) {
    const id = readFileSync(file, 'utf8').trim();
    if (id) return id;
  }
  const id = `${hostname()}-${randomBytes(3).toString('hex')}`;
  writeFileSync(file, `${id}\n`, { mode: 0o644 });
  return id;
}
