/**
 * Counts failed sign-ins per client address and per user name, each in a one-minute window from its first failure,
 * and says how long a limited one must wait. The table is bounded: when full, the entry seen least recently goes
 * (a Map keeps insertion order, and every failure or refused attempt moves its entry to the end), so flooding it
 * with fresh addresses pushes out the quiet ones, never an address or user that is still being refused. Pure: the
 * caller passes the time. Both interfaces' authentication and the console's sign-in form use it.
 */
export interface Attempt {
  address: string;
  /** The user name tried, when the credentials name one (basic auth, a sign-in form). */
  user?: string | undefined;
}

interface Window {
  count: number;
  start: number;
}

const WINDOW_MS = 60_000;

export class FailureLimiter {
  static readonly DEFAULT_MAX_ENTRIES = 100_000;
  private readonly table = new Map<string, Window>();
  private readonly perMinute: number;
  private readonly maxEntries: number;

  constructor(perMinute: number, maxEntries = FailureLimiter.DEFAULT_MAX_ENTRIES) {
    this.perMinute = perMinute;
    this.maxEntries = maxEntries;
  }

  /** Seconds to wait before trying again, or undefined when the attempt may go ahead. */
  retryAfter(attempt: Attempt, now: number): number | undefined {
    let wait: number | undefined;
    for (const key of keysOf(attempt)) {
      const w = this.table.get(key);
      if (!w) continue;
      if (now - w.start >= WINDOW_MS) {
        this.table.delete(key);
        continue;
      }
      if (w.count < this.perMinute) continue;
      this.touch(key, w);
      wait = Math.max(wait ?? 0, Math.ceil((w.start + WINDOW_MS - now) / 1000));
    }
    return wait;
  }

  /** Counts one failure against the address and the user name. */
  fail(attempt: Attempt, now: number): void {
    for (const key of keysOf(attempt)) {
      const w = this.table.get(key);
      if (!w || now - w.start >= WINDOW_MS) this.touch(key, { count: 1, start: now });
      else {
        w.count += 1;
        this.touch(key, w);
      }
    }
    while (this.table.size > this.maxEntries) {
      const oldest = this.table.keys().next().value;
      if (oldest === undefined) break;
      this.table.delete(oldest);
    }
  }

  /** Entries held (for tests and metrics). */
  get size(): number {
    return this.table.size;
  }

  private touch(key: string, w: Window): void {
    this.table.delete(key);
    this.table.set(key, w);
  }
}

// Prefixed so that a user named like an address is not counted as that address.
const keysOf = (a: Attempt): string[] =>
  a.user === undefined ? [`a:${a.address}`] : [`a:${a.address}`, `u:${a.user}`];
