import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long a long job may keep the event loop before it lets other requests in, in ms. */
export const SLICE_MS = 8;

/**
 * A pause for long loops: `await pause()` between items lets the event loop run other work once `sliceMs` have
 * passed since the last turn, and costs nothing otherwise. Awaiting a store call is not enough: better-sqlite3
 * answers synchronously, so its promises resolve without ever leaving the microtask queue, and a loop of them holds
 * the loop (and every other request, JSON ones included) until it ends.
 */
export function loopYielder(sliceMs = SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return nextTurn().then(() => {
      since = performance.now();
    });
  };
}
