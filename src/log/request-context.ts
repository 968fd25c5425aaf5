import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

/**
 * The request a piece of work is done for, carried through its async continuations: the logger's mixin adds its
 * id to every line logged while serving it (src/log/logger.ts), whichever module writes the line.
 */
export const requestContext = new AsyncLocalStorage<{ id: string }>();

// New ids: this process's random prefix and a counter, unique across restarts and cheaper than random bytes for
// every request.
const prefix = randomBytes(4).toString('hex');
let counter = 0;

/** A client's `X-Request-Id` is kept when it is short and plain (it ends up in logs); otherwise a new one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  if (typeof header === 'string' && /^[A-Za-z0-9._:-]{1,64}$/.test(header)) return header;
  counter = (counter + 1) % 0x1000000;
  return `${prefix}${counter.toString(16).padStart(6, '0')}`;
}

/** Runs `fn` outside any request, for work that outlives the request that started it (the engine's loop). */
export const outsideRequests = <T>(fn: () => T): T => requestContext.exit(fn);
