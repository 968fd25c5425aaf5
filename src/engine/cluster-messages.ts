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
  const payloads: string[] = [];
  const tooLarge: ClusterMessage[] = [];
  const head = `{"from":${JSON.stringify(from)},"messages":[`;
  const room = MAX_PAYLOAD_BYTES - head.length - 2;
  let body: string[] = [];
  let size = 0;
  const flush = () => {
    if (body.length > 0) payloads.push(`${head}${body.join(',')}]}`);
    body = [];
    size = 0;
  };
  const add = (text: string) => {
    const bytes = Buffer.byteLength(text) + 1;
    if (size + bytes > room) flush();
    body.push(text);
    size += bytes;
  };
  for (const m of messages) {
    // A feed message goes item by item (each event's JSON made once), as one part when it fits.
    if (m.k === 'feed') {
      for (const part of feedParts(m.items, room, tooLarge)) add(part);
      continue;
    }
    const text = JSON.stringify(m);
    if (Buffer.byteLength(text) + 1 <= room) add(text);
    else tooLarge.push(m);
  }
  flush();
  return { payloads, tooLarge };
}

/**
 * `feed` messages of these items, in order, each as JSON within `room` bytes; an item too large on its own (it never
 * is: an event holds ids, names and statuses) is left out as a message of its own.
 */
function feedParts(items: readonly FeedItem[], room: number, tooLarge: ClusterMessage[]): string[] {
  const open = '{"k":"feed","items":[';
  // A part's bytes as `pack` counts them: its opening, its closing `]}`, the comma after it, and each item's with one.
  const empty = Buffer.byteLength(open) + 3;
  const parts: string[] = [];
  let texts: string[] = [];
  let size = empty;
  for (const item of items) {
    const text = JSON.stringify(item);
    const bytes = Buffer.byteLength(text) + 1;
    if (empty + bytes > room) {
      tooLarge.push({ k: 'feed', items: [item] });
      continue;
    }
    if (size + bytes > room) {
      parts.push(`${open}${texts.join(',')}]}`);
      texts = [];
      size = empty;
    }
    texts.push(text);
    size += bytes;
  }
  if (texts.length > 0) parts.push(`${open}${texts.join(',')}]}`);
  return parts;
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
