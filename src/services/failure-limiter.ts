/**
 * Failed sign-ins, limited per client address and per user name (docs/architecture.md §10): each counted name has
 * a one-minute window from its first failure.
 *
 * - An address with `perMinute` failures in its window is refused (429) whatever it presents.
 * - A user name with `perMinute` failures in its window is refused only to addresses that have failed themselves
 *   in theirs. Any other address is delayed (DELAY_MS before its password is checked), never refused: someone
 *   guessing the administrator's password from many addresses cannot lock the administrator out, and each of
 *   those addresses gets one guess a minute at that name, slowed.
 *
 * The policy is pure (the caller passes the time); where the windows are kept is a FailureCounts: this node's
 * memory on SQLite, the database on PostgreSQL so that every node counts the same failures.
 */
import type { FailureWindow } from '../store/auth-failure-store.ts';

export type { FailureWindow };

export interface Attempt {
  address: string;
  /** The user name tried, when the credentials name one (basic auth, a sign-in form). */
  user?: string | undefined;
}

/** What to do with an attempt before its credentials are checked. */
export type Verdict = { kind: 'allow' } | { kind: 'delay'; ms: number } | { kind: 'refuse'; retryAfterSeconds: number };

export const WINDOW_MS = 60_000;
/** How long an attempt waits when its user name is limited but its address has not failed. */
export const DELAY_MS = 1000;

/** Where the windows are kept. */
export interface FailureCounts {
  /** The windows of these names that are known (ended ones may be among them). */
  read(names: readonly string[], now: number): Promise<ReadonlyMap<string, FailureWindow>>;
  /** Counts one failure for each name. */
  add(names: readonly string[], now: number): Promise<void>;
}

// Prefixed so that a user named like an address is not counted as that address.
export const addressName = (address: string): string => `a:${address}`;
export const userName = (user: string): string => `u:${user}`;
export const namesOf = (a: Attempt): string[] =>
  a.user === undefined ? [addressName(a.address)] : [addressName(a.address), userName(a.user)];

/**
 * Whether a window is over at `now`: begun a minute ago or longer, or (a clock set back, another node's clock
 * ahead) more than a minute in the future, so that no clock step keeps a name limited for longer than that.
 */
export const ended = (w: FailureWindow, now: number): boolean =>
  now - w.start >= WINDOW_MS || w.start - now > WINDOW_MS;

const live = (w: FailureWindow | undefined, now: number): FailureWindow | undefined =>
  w !== undefined && !ended(w, now) ? w : undefined;

const secondsUntil = (end: number, now: number): number => Math.max(1, Math.ceil((end - now) / 1000));

/** The verdict on an attempt, given the windows of its names. */
export function judge(
  attempt: Attempt,
  windows: ReadonlyMap<string, FailureWindow>,
  perMinute: number,
  now: number,
): Verdict {
  const address = live(windows.get(addressName(attempt.address)), now);
  if (address && address.count >= perMinute)
    return { kind: 'refuse', retryAfterSeconds: secondsUntil(address.start + WINDOW_MS, now) };
  if (attempt.user === undefined) return { kind: 'allow' };
  const user = live(windows.get(userName(attempt.user)), now);
  if (!user || user.count < perMinute) return { kind: 'allow' };
  // The user name is limited: refused to an address that failed, until either window ends; delayed otherwise.
  if (address)
    return { kind: 'refuse', retryAfterSeconds: secondsUntil(Math.min(address.start, user.start) + WINDOW_MS, now) };
  return { kind: 'delay', ms: DELAY_MS };
}

export class FailureLimiter {
  private readonly counts: FailureCounts;
  private readonly perMinute: number;

  constructor(counts: FailureCounts, perMinute: number) {
    this.counts = counts;
    this.perMinute = perMinute;
  }

  async check(attempt: Attempt, now: number): Promise<Verdict> {
    return judge(attempt, await this.counts.read(namesOf(attempt), now), this.perMinute, now);
  }

  /** Counts one failure against the address and the user name. */
  async fail(attempt: Attempt, now: number): Promise<void> {
    await this.counts.add(namesOf(attempt), now);
  }
}
