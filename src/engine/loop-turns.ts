import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Store } from '../store/store.ts';

/**
 * The event loop's turns inside a long transaction on SQLite. Its statements are synchronous, so a transaction's
 * awaits never leave the microtask queue: a group of 64 submits held the loop 10–25 ms while a burst of requests
 * came in (B2's first seconds, bench/README.md). Smaller transactions would cost a commit each, and a commit is most
 * of what a submit costs (B1: 16 submits a commit took 12 % more CPU a job than 64). So the transaction stays whole
 * and the loop gets a turn every few works: requests are read (and join the next transaction), timers run. The open
 * transaction holds the writer meanwhile: other writes wait for its commit as they would for a longer one, and reads
 * see the last commit. On PostgreSQL every statement leaves the loop anyway.
 */
export const SQLITE_WORKS_PER_TURN = 16;

/** Before the `index`-th work of a transaction (from 0): on SQLite, a turn of the event loop every few works. */
export async function turnBefore(store: Store, index: number): Promise<void> {
  if (store.dialect === 'sqlite' && index > 0 && index % SQLITE_WORKS_PER_TURN === 0) await nextTurn();
}
