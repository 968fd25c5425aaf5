import type { AuthFailureStore, FailureWindow } from '../store/auth-failure-store.ts';
import { type FailureCounts, WINDOW_MS } from './failure-limiter.ts';

interface Cached {
  window: FailureWindow | undefined;
  at: number;
  /** Orders this node's writes to the cache, so an older answer never replaces a newer one. */
  seq: number;
}

/**
 * Failure windows in the database, so every server node on it counts the same failures (docs/architecture.md §16).
 * A failure is one upsert that answers the count after it; what a check reads is kept for FRESH_MS, so a stream of
 * good requests from one address costs one small read a second and no write, however many are in flight. Another
 * node's failures are seen within FRESH_MS; this node's at once. Windows that have ended are removed at most once a
 * minute, by a node that is counting a failure.
 */
export class SharedFailureCounts implements FailureCounts {
  static readonly FRESH_MS = 1000;
  static readonly MAX_CACHED = 10_000;
  private readonly store: AuthFailureStore;
  private readonly cache = new Map<string, Cached>();
  /** The reads of the database under way, by name. */
  private readonly reading = new Map<string, Promise<void>>();
  private seq = 0;
  private prunedAt: number | undefined;

  constructor(store: AuthFailureStore) {
    this.store = store;
  }

  async read(names: readonly string[], now: number): Promise<ReadonlyMap<string, FailureWindow>> {
    const stale = names.filter((n) => {
      const c = this.cache.get(n);
      return c === undefined || now - c.at >= SharedFailureCounts.FRESH_MS || now < c.at;
    });
    // A name already being read is waited for, not read again: the requests that find it stale together (a
    // client's requests in flight when its second ends) make one read, not one each.
    const reads = new Set<Promise<void>>();
    const unread: string[] = [];
    for (const n of stale) {
      const reading = this.reading.get(n);
      if (reading !== undefined) reads.add(reading);
      else unread.push(n);
    }
    if (unread.length > 0) reads.add(this.readStored(unread, now));
    await Promise.all(reads);
    const found = new Map<string, FailureWindow>();
    for (const n of names) {
      const w = this.cache.get(n)?.window;
      if (w) found.set(n, w);
    }
    return found;
  }

  private readStored(names: readonly string[], now: number): Promise<void> {
    const asked = this.seq;
    const read = this.store.read(names).then((stored) => {
      for (const n of names) if ((this.cache.get(n)?.seq ?? -1) <= asked) this.remember(n, stored.get(n), now);
    });
    for (const n of names) this.reading.set(n, read);
    const done = () => {
      for (const n of names) if (this.reading.get(n) === read) this.reading.delete(n);
    };
    read.then(done, done);
    return read;
  }

  async add(names: readonly string[], now: number): Promise<void> {
    const counted = await this.store.add(names, now, WINDOW_MS);
    for (const n of names) this.remember(n, counted.get(n), now);
    if (this.prunedAt === undefined || now - this.prunedAt >= WINDOW_MS || now < this.prunedAt) {
      this.prunedAt = now;
      await this.store.prune(now - WINDOW_MS);
    }
  }

  private remember(name: string, window: FailureWindow | undefined, now: number): void {
    this.seq += 1;
    this.cache.delete(name);
    this.cache.set(name, { window, at: now, seq: this.seq });
    for (const oldest of this.cache.keys()) {
      if (this.cache.size <= SharedFailureCounts.MAX_CACHED) break;
      this.cache.delete(oldest);
    }
  }
}
