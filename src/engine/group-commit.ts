import { setImmediate as nextTurn } from 'node:timers/promises';
import { outsideRequests } from '../log/request-context.ts';
import type { Store } from '../store/store.ts';
import { itemAt } from '../domain/item-at.ts';
import { loopYielder } from '../loop-yield.ts';

/** Work for one transaction: re-run from the start when its transaction is retried, so it writes only to `tx`. */
export type TxWork<T> = (tx: Store) => Promise<T>;

interface Pending {
  work: TxWork<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * How long a transaction of submits or reports holds the event loop before it lets it go, in ms: less than the
 * 8 ms of other long work (loop-yield.ts), since a burst of submits is when the loop is busiest and its process
 * also waits for its share of the core, and one turn may hold a slice of each batch besides the requests read in
 * it (B2's loop delay, bench/README.md: 20.7–30.4 ms at 8 ms slices, 14.7–21.7 ms at 2 ms, and in a slower hour
 * 19.2–26.5 ms at 2 ms against 15.6–18.8 ms at 1 ms); a turn costs a few µs.
 */
export const BATCH_SLICE_MS = 1;

/** Thrown inside the transaction to roll it back after a work failed (what it wrote must not be committed). */
const ROLL_BACK = Symbol('roll back');

/**
 * Group commit: works added in the same turn of the event loop (the submits of every request that arrived
 * together), or while the previous group's transaction runs, share one transaction and one commit. A commit is
 * most of what a lone submit costs (each new job row touches the table and its indexes, a page each, written again
 * at every commit), so sharing it is what lets submits keep pace with the rest of the engine (bench/README.md,
 * B1). Each work still succeeds or fails on its own: when one throws, the group is rolled back, the works that
 * failed run again alone (and fail there with their own error, or succeed when their failure came from the group),
 * and the others are committed again as a group. Every caller learns its outcome after the commit.
 *
 * On SQLite a statement never leaves the microtask queue (better-sqlite3 answers synchronously), so a group of 64
 * submits held the event loop 10–25 ms while a burst of requests came in (B2's first seconds, bench/README.md).
 * Smaller groups would cost a commit each (B1: 16 submits a commit took 12–17 % more CPU a job than 64); instead
 * the group lets the loop go every few milliseconds inside its transaction (`loopYielder`), which holds the writer
 * meanwhile: other writes wait for its commit as for a longer group, and reads see the last commit.
 */
export class GroupCommit {
  private readonly store: Store;
  /** At most this many works a transaction. */
  private readonly max: number;
  private pending: Pending[] = [];
  private busy = false;

  constructor(store: Store, max: number) {
    this.store = store;
    this.max = max;
  }

  /** Runs `work` in a transaction shared with others; resolves with its result once that transaction committed. */
  run<T>(work: TxWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.busy) return;
      this.busy = true;
      // After the current turn: every request read in this turn of the loop joins the group.
      outsideRequests(() => setImmediate(() => void this.drain()));
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        await this.commit(this.pending.splice(0, this.max));
        // The event loop's turn between groups: on SQLite a transaction's awaits never leave the microtask queue, so
        // groups run back to back were one long task (timers and requests waiting); the requests read meanwhile join
        // the next group.
        if (this.pending.length > 0) await nextTurn();
      }
    } finally {
      this.busy = false;
    }
  }

  private async commit(group: Pending[]): Promise<void> {
    const outcomes: Outcome[] = [];
    try {
      await this.store.transaction(async (tx) => {
        await tx.jobs.expectNew(group.length);
        // The event loop's turns inside the transaction (see the class): requests read meanwhile join the next group.
        const pause = loopYielder(BATCH_SLICE_MS);
        for (const p of group) {
          await pause();
          outcomes.push(
            await p.work(tx).then(
              (value) => ({ ok: true, value }),
              (error: unknown) => ({ ok: false, error }),
            ),
          );
        }
        if (outcomes.some((o) => !o.ok)) throw ROLL_BACK;
      });
    } catch (error) {
      if (group.length === 1) {
        const o = outcomes[0];
        itemAt(group, 0).reject(error === ROLL_BACK && o && !o.ok ? o.error : error);
      } else if (error !== ROLL_BACK) {
        // The commit itself failed: nothing tells which work caused it; each alone then.
        for (const p of group) await this.commit([p]);
      } else {
        for (const [i, p] of group.entries()) if (!outcomes[i]?.ok) await this.commit([p]);
        const rest = group.filter((_, i) => outcomes[i]?.ok);
        if (rest.length > 0) await this.commit(rest);
      }
      return;
    }
    // Committed: every work succeeded (a failed one rolled the group back above).
    for (const [i, p] of group.entries()) {
      const o = outcomes[i];
      if (o?.ok) p.resolve(o.value);
      else p.reject(o ? o.error : new Error('a work of the group left no outcome'));
    }
  }
}
