/**
 * The only source of "now". Code never calls Date.now() directly so tests can control time
 * (time windows, schedules, expiry) with a FakeClock.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export class FakeClock implements Clock {
  #ms: number;

  constructor(startMs = 0) {
    this.#ms = checked(startMs);
  }

  now(): number {
    return this.#ms;
  }

  set(ms: number): void {
    this.#ms = checked(ms);
  }

  /** Negative steps are allowed: tests may want a clock that jumps back (NTP correction). */
  advance(ms: number): void {
    this.#ms = checked(this.#ms + ms);
  }
}

// A NaN "now" would silently poison every comparison downstream; fail at the source instead.
function checked(ms: number): number {
  if (!Number.isFinite(ms)) throw new RangeError(`clock time must be a finite number of milliseconds, got ${ms}`);
  return ms;
}
