/**
 * Failed sign-ins counted where every server node sees them (migration 0012, docs/architecture.md §10 and §16): a
 * row per counted name (an address or a user name, prefixed by the limiter) with its failures and the start of its
 * one-minute window.
 */

export interface FailureWindow {
  /** Failures since `start`. */
  count: number;
  /** When the window's first failure came (ms). */
  start: number;
}

export interface AuthFailureStore {
  /** The windows of these names, as stored (a window may have ended: the caller judges by its own clock). */
  read(names: readonly string[]): Promise<Map<string, FailureWindow>>;
  /**
   * Counts one failure for each name at `now`: one more in its window, or a new window when the stored one began
   * `windowMs` or longer before. Answers the windows as they are after the count.
   */
  add(names: readonly string[], now: number, windowMs: number): Promise<Map<string, FailureWindow>>;
  /** Removes the windows that began before `before`. */
  prune(before: number): Promise<void>;
}
