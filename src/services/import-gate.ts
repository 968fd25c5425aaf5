import type { IncomingMessage } from 'node:http';
import { MillraceError } from '../errors.ts';

/**
 * The global bound on import memory: archives are handled a few at a time whatever the number
 * of clients. A request takes a slot of the requests' gate before its body is read and gives it back once its
 * import job is submitted (its check keeps at most one inflated entry); a job takes a slot of the jobs' gate to
 * read, parse and write its archive. Requests beyond the waiting line, or waiting too long, are answered 503;
 * jobs always wait.
 */
export class ImportGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly concurrency: number;
  private readonly queueLimit: number;

  constructor(concurrency: number, queueLimit: number) {
    this.concurrency = Math.max(1, Math.floor(concurrency));
    this.queueLimit = Math.max(0, Math.floor(queueLimit));
  }

  /**
   * Resolves with the slot's release (safe to call twice) once a slot is free. A bounded caller (a request, whose
   * body waits unread meanwhile) is refused with 503 when the line is full or after waiting `maxWaitMs`.
   */
  async acquire(options: { bounded: boolean } = { bounded: true }, maxWaitMs = MAX_WAIT_MS): Promise<() => void> {
    if (this.active >= this.concurrency) {
      if (options.bounded && this.waiting.length >= this.queueLimit) throw busy();
      await new Promise<void>((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        this.waiting.push(wake);
        if (!options.bounded) return;
        timer = setTimeout(() => {
          const i = this.waiting.indexOf(wake);
          if (i < 0) return;
          this.waiting.splice(i, 1);
          reject(busy());
        }, maxWaitMs);
        timer.unref();
      });
    } else this.active += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    };
  }

  /** Slots taken now (the `millrace_import_requests` gauge of /metrics). */
  get inUse(): number {
    return this.active;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire({ bounded: false });
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/** A request waits at most this long for a slot (well within the request deadline), then gets 503. */
const MAX_WAIT_MS = 60_000;

const busy = () =>
  new MillraceError(503, 'IMPORTS_BUSY', 'Too many imports are under way; try again later', { 'Retry-After': '10' });

/** Archive requests received and checked at once: each holds its body (≤ 64 MiB) and one inflated entry. */
export const IMPORT_REQUESTS_AT_ONCE = 4;

const held = new WeakMap<IncomingMessage, () => void>();

/** Takes a slot for an import request (a route's preParsing hook); it is given back when the answer is sent. */
export async function holdForRequest(gate: ImportGate, req: IncomingMessage, onClose: (f: () => void) => void) {
  const release = await gate.acquire();
  held.set(req, release);
  onClose(release);
}

/** Gives a request's slot back early: its job is submitted, and the job takes its own slot. */
export function releaseForRequest(req: IncomingMessage): void {
  held.get(req)?.();
}
