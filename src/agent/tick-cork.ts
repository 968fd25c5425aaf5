import type { Writable } from 'node:stream';

/**
 * The messages written in one tick of the event loop leave in one write to the kernel: a drain's `started` and
 * `finished` reports, output and acknowledgements come in bursts, and every separate write is a system call on this
 * side and a wake-up on the other. The order is the same, the delay at most the rest of the tick.
 */
export function corkForTick(socket: Pick<Writable, 'writableCorked' | 'cork' | 'uncork'>): void {
  if (socket.writableCorked > 0) return;
  socket.cork();
  process.nextTick(() => socket.uncork());
}
