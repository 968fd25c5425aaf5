import { can, type Principal } from '../security/privileges.ts';
import type { Committed } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { type FeedItem, feedFrame, feedItems, feedPartition, feedType } from './feed-events.ts';

/**
 * The live feed behind `GET …/stream` (Server-Sent Events). The store tells it each commit (never a rollback);
 * it numbers the events, keeps the last `retain` of them in a ring so a client that reconnects with Last-Event-ID
 * gets exactly what it missed, and writes to each client what that client may view. Writing never waits for a
 * client: events are written in batches every 50 ms at most, and a client whose unsent bytes
 * still pass `clientBufferBytes` when the next batch comes is dropped (it reconnects and resumes). Other nodes' events
 * come through `publishItems` (docs/architecture.md §16), numbered by this node.
 */

/** Where a client's bytes go (an HTTP response), kept apart so the feed knows nothing of HTTP. */
export interface FeedSink {
  write(text: string): void;
  /** Bytes written but not yet taken by the client's connection. */
  buffered(): number;
  /** Ends the stream (drop or shutdown). */
  close(): void;
}

export interface FeedOptions {
  clock: Clock;
  /** Zone of the times of object events. */
  zone: string;
  /** Events kept for resuming (the retention window). */
  retain?: number;
  /** Unsent bytes a client may have before it is dropped. */
  clientBufferBytes?: number;
  /** Interval of the `: ping` comments. */
  heartbeatMs?: number;
}

export const FEED_RETAIN = 10_000;
export const FEED_CLIENT_BUFFER = 1024 * 1024;
export const FEED_HEARTBEAT_MS = 15_000;
const FLUSH_MS = 50;

interface Stored {
  id: number;
  item: FeedItem;
  /** `type\0partition`: the key of a client's privilege cache; made when a client first looks. */
  scope?: string;
  /** The whole SSE frame, built once on first use and shared by every client. */
  frame?: string;
}

interface Client {
  principal: Principal;
  sink: FeedSink;
  /** Last event id written to (or skipped for) this client. */
  sent: number;
  /** View privilege per `type\0partition`, asked once. */
  views: Map<string, boolean>;
}

export class Feed {
  private readonly o: Required<FeedOptions>;
  private readonly ring: Array<Stored | undefined>;
  /** Id of the newest event; ids are consecutive. Seeded from the clock so ids of an earlier run read as old. */
  private lastId: number;
  private readonly firstId: number;
  private readonly clients = new Set<Client>();
  private flushing = false;
  private readonly heartbeat: NodeJS.Timeout;
  /** Clients dropped because they fell behind (for tests and logs). */
  dropped = 0;

  constructor(options: FeedOptions) {
    this.o = {
      retain: FEED_RETAIN,
      clientBufferBytes: FEED_CLIENT_BUFFER,
      heartbeatMs: FEED_HEARTBEAT_MS,
      ...options,
    };
    this.ring = new Array(this.o.retain);
    this.firstId = Math.max(0, Math.floor(options.clock.now())) * 1000 + 1;
    this.lastId = this.firstId - 1;
    this.heartbeat = setInterval(() => this.ping(), this.o.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Told by the store after each commit; returns the events it made of it (other nodes' feeds get them too). */
  publish(committed: Committed): FeedItem[] {
    const items = feedItems(committed, this.o.clock.now(), this.o.zone);
    this.publishItems(items);
    return items;
  }

  /** Publishes events made of a commit (this node's or, through the cluster, another node's). */
  publishItems(items: readonly FeedItem[]): void {
    for (const item of items) {
      const id = ++this.lastId;
      this.ring[id % this.o.retain] = { id, item };
    }
    if (this.clients.size > 0 && !this.flushing) {
      this.flushing = true;
      // One write per client per batch window, however many commits fall in it: with many clients, a write per
      // commit cost the engine much of its throughput (B10 in bench/README.md); 50 ms is below what a person notices.
      setTimeout(() => this.flush(), FLUSH_MS).unref();
    }
  }

  /** The oldest id a client may resume after (the id before the oldest event kept). */
  private oldestResumable(): number {
    return Math.max(this.firstId - 1, this.lastId - this.o.retain);
  }

  /**
   * Adds a client. With `lastEventId` it first gets the events after it, or a `reset` event when that id is outside
   * the retention window (then it should reload what it shows). Returns the function that removes it.
   */
  subscribe(principal: Principal, lastEventId: number | undefined, sink: FeedSink): () => void {
    const client: Client = { principal, sink, sent: this.lastId, views: new Map() };
    sink.write(`retry: 2000\n\n`);
    if (lastEventId !== undefined) {
      if (lastEventId < this.oldestResumable() || lastEventId > this.lastId)
        sink.write(
          `id: ${this.lastId}\nevent: reset\ndata: ${JSON.stringify({
            lastEventId: this.lastId,
            reason: `Event ${lastEventId} is outside the feed's retention window: reload and follow from here`,
          })}\n\n`,
        );
      else {
        client.sent = lastEventId;
        this.writeTo(client);
      }
    }
    sink.write(`id: ${this.lastId}\nevent: ready\ndata: ${JSON.stringify({ lastEventId: this.lastId })}\n\n`);
    this.clients.add(client);
    return () => this.clients.delete(client);
  }

  /** Ends every stream (server shutdown). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const c of this.clients) c.sink.close();
    this.clients.clear();
  }

  get clientCount(): number {
    return this.clients.size;
  }

  private flush(): void {
    this.flushing = false;
    for (const c of this.clients) this.writeTo(c);
  }

  private writeTo(c: Client): void {
    if (c.sent >= this.lastId) return;
    if (c.sent < this.oldestResumable()) {
      this.drop(c); // fell behind the ring between flushes: it resumes and gets a reset
      return;
    }
    let text = '';
    for (let id = c.sent + 1; id <= this.lastId; id++) {
      const s = this.ring[id % this.o.retain] as Stored;
      if (this.visible(c, s)) {
        s.frame ??= feedFrame(s.id, s.item);
        text += s.frame;
      }
    }
    c.sent = this.lastId;
    if (text !== '') this.send(c, text);
  }

  private visible(c: Client, s: Stored): boolean {
    s.scope ??= `${feedType(s.item)}\0${feedPartition(s.item)}`;
    let v = c.views.get(s.scope);
    if (v === undefined) {
      v = can(c.principal, feedType(s.item), feedPartition(s.item), 'View');
      c.views.set(s.scope, v);
    }
    return v;
  }

  /** A client still holding more than its buffer of earlier writes is dropped; one burst alone never drops it. */
  private send(c: Client, text: string): void {
    if (c.sink.buffered() > this.o.clientBufferBytes) this.drop(c);
    else c.sink.write(text);
  }

  private drop(c: Client): void {
    this.dropped += 1;
    this.clients.delete(c);
    c.sink.close();
  }

  private ping(): void {
    for (const c of this.clients) this.send(c, ': ping\n\n');
  }
}
