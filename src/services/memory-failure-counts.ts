import type { FailureWindow } from '../store/auth-failure-store.ts';
import { ended, type FailureCounts } from './failure-limiter.ts';

/**
 * Failure windows in this process's memory (one node: SQLite). The table is bounded: when full, the name seen least
 * recently goes (a Map keeps insertion order, and every read or failure moves a name to the end), so flooding it
 * with fresh addresses pushes out the quiet ones, never an address or user that is still trying.
 */
export class MemoryFailureCounts implements FailureCounts {
  static readonly DEFAULT_MAX_ENTRIES = 100_000;
  private readonly table = new Map<string, FailureWindow>();
  private readonly maxEntries: number;

  constructor(maxEntries = MemoryFailureCounts.DEFAULT_MAX_ENTRIES) {
    this.maxEntries = maxEntries;
  }

  async read(names: readonly string[], now: number): Promise<ReadonlyMap<string, FailureWindow>> {
    const found = new Map<string, FailureWindow>();
    for (const name of names) {
      const w = this.table.get(name);
      if (!w) continue;
      if (ended(w, now)) this.table.delete(name);
      else {
        this.touch(name, w);
        found.set(name, { ...w });
      }
    }
    return found;
  }

  async add(names: readonly string[], now: number): Promise<void> {
    for (const name of names) {
      const w = this.table.get(name);
      if (!w || ended(w, now)) this.touch(name, { count: 1, start: now });
      else {
        w.count += 1;
        this.touch(name, w);
      }
    }
    while (this.table.size > this.maxEntries) {
      const oldest = this.table.keys().next().value;
      if (oldest === undefined) break;
      this.table.delete(oldest);
    }
  }

  /** Names held (for tests and metrics). */
  get size(): number {
    return this.table.size;
  }

  private touch(name: string, w: FailureWindow): void {
    this.table.delete(name);
    this.table.set(name, w);
  }
}
