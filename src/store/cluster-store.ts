/**
 * What server nodes sharing one database know of each other (migration 0010, docs/architecture.md §16): who is
 * alive, who holds a lease, and which node holds each agent's connection.
 */

export interface ClusterNode {
  id: string;
  version: string;
  startedAt: number;
  /** Wall-clock ms of its last heartbeat. */
  seenAt: number;
  /** Where its interfaces are served (for people reading the list). */
  address: string;
}

/** An agent connected to some node: `seenAt` is when that node last heard from it (the engine's clock). */
export interface AgentPresence {
  processServer: string;
  node: string;
  seenAt: number;
  ready: boolean;
  /** The agent process (its X-Millrace-Agent-Instance); '' when not known. */
  instance?: string;
}

/** Thrown inside a transaction whose node no longer holds the lease it is about to act under. */
export class LeaseLost extends Error {
  constructor(name: string) {
    super(`this node no longer holds the lease "${name}"`);
    this.name = 'LeaseLost';
  }
}

export interface ClusterStore {
  /** Records the node alive (inserted or updated). */
  beat(node: ClusterNode): Promise<void>;
  nodes(): Promise<ClusterNode[]>;
  /**
   * Removes a node's row. Its agents' presence stays: when each was last heard of still counts towards its
   * AgentTimeout (and a reconnection elsewhere overwrites it).
   */
  removeNode(id: string): Promise<void>;
  /**
   * Takes the lease for `holder` until `until` when it is free, expired at `now`, or held by `holder` already
   * (a renewal). Returns its fencing token, which grows whenever the holder changes; undefined when another node
   * holds it.
   */
  takeLease(name: string, holder: string, now: number, until: number): Promise<number | undefined>;
  /**
   * Inside a transaction: throws LeaseLost unless `holder` still holds `name` with `token`, unexpired at `now`.
   * On PostgreSQL the lease row stays share-locked until the transaction ends, so a takeover waits for it.
   */
  fence(name: string, holder: string, token: number, now: number): Promise<void>;
  /** Gives the lease up (a clean stop), so another node takes it at once. */
  releaseLease(name: string, holder: string): Promise<void>;
  /** Writes the presence of the agents connected to `node` (inserted or taken over from another node). */
  putAgents(node: string, agents: readonly AgentPresence[]): Promise<void>;
  /**
   * Takes the process server for the agent instance `agent.instance` on `agent.node`, unless another instance holds
   * it on a live node (one whose heartbeat is after `aliveAfter`): one statement, so two nodes accepting two agents
   * of one process server at once cannot both win. Returns undefined when taken, else the holder.
   */
  claimAgent(agent: AgentPresence, aliveAfter: number): Promise<AgentPresence | undefined>;
  /** Removes an agent's presence if `node` still holds it. */
  dropAgent(processServer: string, node: string): Promise<void>;
  agents(): Promise<AgentPresence[]>;
}

/** A piece of a job file at its offset (migration 0010): what an agent shipped, kept where every node reads it. */
export interface JobFileChunk {
  offset: number;
  data: Buffer;
}

/**
 * Job files in the database (`--job-files database`), a chunk per row as the agent ships them. A chunk shipped again
 * (after a reconnection) replaces the one at its offset; chunks may overlap (an agent ships again from 0 with other
 * boundaries), and overlapping bytes are the same, so a reader skips what it has already given.
 */
export interface JobFileChunkStore {
  put(jobId: number, name: string, chunk: JobFileChunk): Promise<void>;
  /** Replaces the whole file with one chunk. */
  replace(jobId: number, name: string, data: Buffer): Promise<void>;
  /** Bytes up to the end of the chunk that ends last; 0 when there is none. */
  size(jobId: number, name: string): Promise<number>;
  /** Up to `limit` chunks that end after `from`, by offset. */
  chunks(jobId: number, name: string, from: number, limit: number): Promise<JobFileChunk[]>;
  remove(jobIds: readonly number[]): Promise<void>;
}
