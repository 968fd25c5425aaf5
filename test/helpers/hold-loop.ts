/** Holds the event loop for `ms` milliseconds, as a synchronous task (a long statement, a big parse) does. */
export function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // a synchronous task holding the event loop
  }
}
