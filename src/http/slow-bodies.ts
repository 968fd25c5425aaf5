import type { IncomingMessage } from 'node:http';
import { MillraceError } from '../errors.ts';

/** A body may start slowly for this long before its rate is judged. */
const BODY_GRACE_MS = 5000;

interface BodyRead {
  req: IncomingMessage;
  /** When its reader started (the request's first `resume`), and the connection's bytes read by then. */
  started: number;
  baseline: number;
}

/**
 * The bodies being read, judged together at each `sweep`: one that arrived slower than `minRate` bytes a second
 * after the grace period fails with 408, which its reader (Fastify's body parser) answers in the interface's shape.
 * The rate is the connection's bytes read since the reader started (`socket.bytesRead`), so nothing stands between
 * the request and its reader. A stream piped in between, with a timer of its own, was about 12 µs of every request
 * with a body in a CPU profile of B1's drain (bench/README.md), most of what the guards cost a small submit.
 */
export class SlowBodies {
  private readonly reading = new Set<BodyRead>();
  private readonly minRate: number;

  constructor(minRate: number) {
    this.minRate = minRate;
  }

  /** Judges `req`'s body from when its reader starts; the returned function stops that (the answer is out). */
  watch(req: IncomingMessage): () => void {
    const socket: IncomingMessage['socket'] | undefined = req.socket;
    // inject() (tests) has no real socket: nothing arrives slowly there
    if (typeof socket?.bytesRead !== 'number') return () => {};
    let read: BodyRead | undefined;
    let stopped = false;
    // The clock starts when the body is read (a request waiting for an import slot is not reading it yet). Node
    // resumes an unread body after the answer to discard it: by then the rate no longer matters.
    req.once('resume', () => {
      if (stopped) return;
      read = { req, started: Date.now(), baseline: socket.bytesRead };
      this.reading.add(read);
    });
    return () => {
      stopped = true;
      if (read) this.reading.delete(read);
    };
  }

  /** Fails the bodies that are too slow at `now`, and forgets those read to the end. */
  sweep(now: number): void {
    for (const read of this.reading) {
      const { req } = read;
      if (req.complete || req.destroyed) {
        this.reading.delete(read);
        continue;
      }
      const elapsed = now - read.started;
      if (elapsed <= BODY_GRACE_MS) continue;
      const received = req.socket.bytesRead - read.baseline;
      if (received >= (this.minRate * (elapsed - BODY_GRACE_MS)) / 1000) continue;
      this.reading.delete(read);
      // The reader listens for errors while it reads; one that stopped has nothing left to fail.
      if (req.listenerCount('error') > 0)
        req.emit(
          'error',
          new MillraceError(408, 'TOO_SLOW', `The body arrived slower than ${this.minRate} bytes per second`),
        );
    }
  }
}
