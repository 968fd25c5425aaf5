import type { ServerMessage } from '../agent/protocol.ts';
import type { TypeName } from '../model/fields.ts';
import type { FeedItem } from '../feed/feed-events.ts';

/**
 * What one server node tells the others after its commits (docs/architecture.md §16). Hints only: the database
 * holds the truth, and a node that missed a message (channel reconnected, node just started) looks at the
 * database afresh. Pure.
 */
export type ClusterMessage =
  /** Jobs may start, wake at these instants, run these now (the effects of a commit: Effects). */
  | { k: 'wake'; dispatch: boolean; wakeAt: number[]; overdueAt: number[]; runNow: number[] }
  /** For the node holding this agent's connection: send it (kill, abandon: never a `run`, which holds secrets). */
  | { k: 'agent'; processServer: string; message: ServerMessage }
  /** The timer owner declared this agent lost: the node holding its connection drops it. */
  | { k: 'disconnect'; processServer: string }
  /** System jobs to stop, wherever they run. */
  | { k: 'stop'; jobIds: number[] }
  /** An object of this type changed (its type's onChange reactions, those not written to the database). */
  | { k: 'object'; type: TypeName }
  /** A run a deadline watches changed on a node: the timer owner looks (docs/architecture.md §8c). */
  | { k: 'deadlines' }
  /** An agent connected to or left a node: the timer owner writes process server statuses again. */
  | { k: 'servers' }
  /** The live feed's events of a commit, for every node's feed. */
  | { k: 'feed'; items: FeedItem[] };

type Wake = Extract<ClusterMessage, { k: 'wake' }>;

/**
 * What another node's `wake` asks of this node. The sender runs a dispatch pass of its own after its commit, and it
 * starts System jobs as any node does: a pass here can add only starts on this node's agents. So a node holding no
 * agent takes the instants to wake at and the jobs to run now, but runs no pass for it (among peers it still looks
 * every 5 s, agent-watchdog.ts, should the sender stop before its pass). A pass on every node for every hint was
 * most of what the nodes cost each other (bench/README.md, B1, "What the other nodes cost").
 */
export const wakeHere = (m: Wake, holdsAgents: boolean): Wake =>
  m.dispatch && !holdsAgents ? { ...m, dispatch: false } : m;

/** One notification: the sender and its messages. */
export interface Envelope {
  from: string;
  messages: ClusterMessage[];
}

/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more; stay clear of it. */
export const MAX_PAYLOAD_BYTES = 7_900;

/**
 * Packs messages into as few payloads as fit, in order. The live feed's events of a large commit (a dispatch pass
 * starting hundreds of jobs) are split into as many `feed` messages as they need: they are not in the database, so an
 * event left out would be missing from the other nodes' feeds. Any other message too large on its own is left out and
 * returned apart (the caller logs it; the database still holds the truth it hinted at).
 */
export function pack(
  from: string,
  messages: readonly ClusterMessage[],
): { payloads: string[]; tooLarge: ClusterMessage[] } {
  const tooLarge: ClusterMessage[] = [];
  const payloads = new Joined(`{"from":${JSON.stringify(from)},"messages":[`, ']}', MAX_PAYLOAD_BYTES);
  for (const m of messages) {
    if (m.k === 'feed') {
      // Item by item (each event's JSON made once): one part when they fit, else as many as they need.
      const parts = new Joined('{"k":"feed","items":[', ']}', payloads.room);
      for (const item of m.items) if (!parts.add(JSON.stringify(item))) tooLarge.push({ k: 'feed', items: [item] });
      for (const part of parts.done()) payloads.add(part);
    } else if (!payloads.add(JSON.stringify(m))) tooLarge.push(m);
  }
  return { payloads: payloads.done(), tooLarge };
}

/** Texts joined by commas between `open` and `close`, in as many strings as keep each within `limit` bytes. */
class Joined {
  private readonly out: string[] = [];
  private texts: string[] = [];
  private bytes = 0;
  private readonly open: string;
  private readonly close: string;
  /** The most one text may take: what the limit leaves beside the opening and the closing. */
  readonly room: number;

  constructor(open: string, close: string, limit: number) {
    this.open = open;
    this.close = close;
    this.room = limit - Buffer.byteLength(open) - Buffer.byteLength(close);
  }

  /** Adds a text, starting a new string when it would not fit; false (and nothing added) when it never fits. */
  add(text: string): boolean {
    const bytes = Buffer.byteLength(text);
    if (bytes > this.room) return false;
    if (this.texts.length > 0 && this.bytes + 1 + bytes > this.room) this.end();
    this.bytes += (this.texts.length > 0 ? 1 : 0) + bytes;
    this.texts.push(text);
    return true;
  }

  done(): string[] {
    this.end();
    return this.out;
  }

  private end(): void {
    if (this.texts.length > 0) this.out.push(`${this.open}${this.texts.join(',')}${this.close}`);
    this.texts = [];
    this.bytes = 0;
  }
}

/** Reads a payload; undefined when it is not one of ours. */
export function unpack(payload: string): Envelope | undefined {
  try {
    const e: Partial<Envelope> = JSON.parse(payload);
    if (typeof e.from !== 'string' || !Array.isArray(e.messages)) return undefined;
    return e as Envelope;
  } catch {
    return undefined;
  }
}
