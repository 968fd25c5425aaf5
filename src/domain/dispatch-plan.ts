import type { JobStatus } from './job-status.ts';

/**
 * Which queued jobs start now, and where (docs/architecture.md §8). Pure: the engine loads the state inside the dispatch
 * transaction, calls `planDispatch`, and writes the result in the same transaction, so a limit is never exceeded.
 */

export interface QueueState {
  key: string;
  /** Its Held field. */
  held: boolean;
  /** Its time window is closed now: it releases nothing until `opens` (undefined: not within two years). */
  closed?: { window: string; opens: number | undefined };
  executionSize: number | null;
  holdLevel: number | null;
  /** Jobs in Waiting count against ExecutionSize. */
  inclusive: boolean;
  /** Jobs in Console count against ExecutionSize. */
  inclusiveConsole: boolean;
}

export interface ProviderState {
  queue: string;
  processServer: string;
  held: boolean;
  executionSize: number | null;
  holdLevel: number | null;
  inclusive: boolean;
}

export interface ServerState {
  key: string;
  /**
   * Started, and (for an agent's process server) its agent is connected and not draining: to this node for the
   * dispatcher (it sends to its own agents only), to any live node for the waiting service.
   */
  available: boolean;
  /** Why it is not available: shut down (DesiredStatus Shutdown), or started without a ready agent. */
  down?: 'ProcessServerStopped' | 'AgentDisconnected';
  definitionTypes: readonly string[];
  executionSize: number | null;
}

export interface DispatchState {
  queues: ReadonlyMap<string, QueueState>;
  providers: readonly ProviderState[];
  servers: ReadonlyMap<string, ServerState>;
}

/** Jobs holding a slot, counted by queue, process server and status (from JobStore.countActive). */
export interface SlotCount {
  queue: string;
  processServer: string | null;
  status: JobStatus;
  count: number;
}

export interface Candidate {
  jobId: number;
  queue: string;
  priority: number;
  definitionType: string;
  /** `runnow`: ignores the queue's and the provider's hold and limits. */
  runNow: boolean;
}

export interface Assignment {
  jobId: number;
  processServer: string;
}

const counts = (queueInclusive: boolean, consoleInclusive: boolean, status: JobStatus): boolean =>
  (status !== 'Waiting' || queueInclusive) && (status !== 'Console' || consoleInclusive);

/** Live counters that planning increments as it assigns, so one plan never overfills a queue or server. */
export class Slots {
  readonly queue = new Map<string, number>();
  readonly server = new Map<string, number>();
  readonly provider = new Map<string, number>();

  constructor(state: DispatchState, active: readonly SlotCount[]) {
    for (const c of active) {
      const q = state.queues.get(c.queue);
      if (counts(q?.inclusive ?? false, q?.inclusiveConsole ?? false, c.status)) add(this.queue, c.queue, c.count);
      if (c.processServer === null) continue;
      add(this.server, c.processServer, c.count);
      const p = state.providers.find((x) => x.queue === c.queue && x.processServer === c.processServer);
      if (counts(p?.inclusive ?? false, true, c.status))
        add(this.provider, providerId(c.processServer, c.queue), c.count);
    }
  }

  take(queue: string, server: string): void {
    add(this.queue, queue, 1);
    add(this.server, server, 1);
    add(this.provider, providerId(server, queue), 1);
  }
}

const add = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n);
const providerId = (server: string, queue: string) => `${server}|${queue}`;
/** The size a count of running jobs has reached (so nothing more may start); undefined while below it or unlimited. */
const fullAt = (used: number | undefined, size: number | null): number | undefined =>
  size !== null && (used ?? 0) >= size ? size : undefined;

/**
 * Where the dispatcher looks for candidates: a queue and a definition type, and at most how many jobs of them can
 * start now (`room`, Infinity when nothing limits it). Reading each lane in dispatch order, up to its room, gives
 * the planner every job it could start without reading the ones it could not: jobs of a type whose servers are
 * full, of a held or full queue. (A `runnow` job is not found here: the engine names it to every pass until it
 * starts.)
 */
export interface Lane {
  queue: string;
  definitionType: string;
  room: number;
}

/** The lanes with room now: the bound is loose (HoldLevel is not applied, servers shared by lanes count for each). */
export function candidateLanes(state: DispatchState, active: readonly SlotCount[]): Lane[] {
  const slots = new Slots(state, active);
  const lanes: Lane[] = [];
  for (const q of state.queues.values()) {
    const queueRoom = q.held || q.closed ? 0 : room(slots.queue.get(q.key), q.executionSize);
    if (queueRoom <= 0) continue;
    const byType = new Map<string, number>();
    for (const p of state.providers) {
      const s = p.queue === q.key && !p.held ? state.servers.get(p.processServer) : undefined;
      if (!s?.available) continue;
      const r = Math.min(
        room(slots.server.get(s.key), s.executionSize),
        room(slots.provider.get(providerId(s.key, q.key)), p.executionSize),
      );
      if (r > 0) for (const t of s.definitionTypes) byType.set(t, (byType.get(t) ?? 0) + r);
    }
    for (const [definitionType, r] of byType)
      lanes.push({ queue: q.key, definitionType, room: Math.min(queueRoom, r) });
  }
  return lanes;
}

const room = (used: number | undefined, size: number | null): number =>
  size === null ? Number.POSITIVE_INFINITY : size - (used ?? 0);

/**
 * What keeps a candidate from starting now, in the planner's own terms (docs/architecture.md §8): the checks of
 * `placeCandidate` that failed, with the figures they compared. `processServer` on a queue's code means the check
 * was that of the queue provider linking the two.
 */
export type Blocker =
  | { code: 'QueueHeld'; queue: string; processServer?: string }
  | { code: 'TimeWindowClosed'; queue: string; window: string; opens: number | undefined }
  | { code: 'QueueFull'; queue: string; processServer?: string; running: number; size: number }
  | { code: 'HoldLevel'; queue: string; processServer?: string; priority: number; holdLevel: number }
  | { code: 'NoProcessServer'; queue: string; definitionType: string; providers: number }
  | { code: 'ProcessServerStopped'; processServer: string }
  | { code: 'AgentDisconnected'; processServer: string }
  | { code: 'ProcessServerFull'; processServer: string; running: number; size: number };

/** Where a candidate starts (the least busy server that may take it), or everything that keeps it back. */
export type Placement = { server: string; used: number; blockers?: undefined } | { blockers: Blocker[] };

/**
 * The checks of one candidate against the queues, providers and servers as `slots` count them now. A job starts
 * when its queue is not held (nor its window closed) and below its ExecutionSize, its priority is not below the
 * queue's HoldLevel, and a process server serving the queue through an unheld provider is available, offers the
 * definition's type, and is below its own and the provider's limits (the most restrictive wins). Among those the
 * least busy server is chosen. `runnow` skips the queue's and the provider's hold and limits. Pure; the
 * dispatcher plans with it and the waiting service explains with it, so both say the same.
 */
export function placeCandidate(state: DispatchState, slots: Slots, c: Candidate): Placement {
  const q = state.queues.get(c.queue);
  if (!q)
    return { blockers: [{ code: 'NoProcessServer', queue: c.queue, definitionType: c.definitionType, providers: 0 }] };
  const blockers: Blocker[] = [];
  if (!c.runNow) {
    if (q.held) blockers.push({ code: 'QueueHeld', queue: q.key });
    if (q.closed)
      blockers.push({ code: 'TimeWindowClosed', queue: q.key, window: q.closed.window, opens: q.closed.opens });
    const running = slots.queue.get(q.key) ?? 0;
    const queueFull = fullAt(running, q.executionSize);
    if (queueFull !== undefined) blockers.push({ code: 'QueueFull', queue: q.key, running, size: queueFull });
    if (q.holdLevel !== null && c.priority < q.holdLevel)
      blockers.push({ code: 'HoldLevel', queue: q.key, priority: c.priority, holdLevel: q.holdLevel });
  }
  let best: { server: string; used: number } | undefined;
  let providers = 0;
  const servers: Blocker[] = [];
  for (const p of state.providers) {
    if (p.queue !== c.queue) continue;
    providers++;
    const s = state.servers.get(p.processServer);
    if (!s?.definitionTypes.includes(c.definitionType)) continue;
    const used = slots.server.get(s.key) ?? 0;
    const blocker = serverBlocker(s, p, used, slots, c);
    if (blocker) servers.push(blocker);
    else if (!best || used < best.used) best = { server: s.key, used };
  }
  if (blockers.length === 0 && best) return best;
  if (!best && servers.length === 0)
    blockers.push({ code: 'NoProcessServer', queue: c.queue, definitionType: c.definitionType, providers });
  return { blockers: best ? blockers : [...blockers, ...servers] };
}

/** The first check a process server (of the definition's type) behind a queue's provider fails, if any. */
function serverBlocker(
  s: ServerState,
  p: ProviderState,
  used: number,
  slots: Slots,
  c: Candidate,
): Blocker | undefined {
  if (!s.available) return { code: s.down ?? 'AgentDisconnected', processServer: s.key };
  const serverFull = fullAt(used, s.executionSize);
  if (serverFull !== undefined)
    return { code: 'ProcessServerFull', processServer: s.key, running: used, size: serverFull };
  if (c.runNow) return undefined;
  if (p.held) return { code: 'QueueHeld', queue: c.queue, processServer: s.key };
  const running = slots.provider.get(providerId(s.key, c.queue)) ?? 0;
  const providerFull = fullAt(running, p.executionSize);
  if (providerFull !== undefined)
    return { code: 'QueueFull', queue: c.queue, processServer: s.key, running, size: providerFull };
  if (p.holdLevel !== null && c.priority < p.holdLevel)
    return { code: 'HoldLevel', queue: c.queue, processServer: s.key, priority: c.priority, holdLevel: p.holdLevel };
  return undefined;
}

/** Assigns candidates (already in dispatch order) to process servers, each where `placeCandidate` says. */
export function planDispatch(
  state: DispatchState,
  active: readonly SlotCount[],
  candidates: readonly Candidate[],
): Assignment[] {
  const slots = new Slots(state, active);
  const result: Assignment[] = [];
  for (const c of candidates) {
    const placed = placeCandidate(state, slots, c);
    if (placed.blockers) continue;
    slots.take(c.queue, placed.server);
    result.push({ jobId: c.jobId, processServer: placed.server });
  }
  return result;
}
