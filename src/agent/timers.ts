/** The agent's timers, so that stopping clears every one of them (and ends a pending sleep at once). */
export class Timers {
  private readonly all = new Set<NodeJS.Timeout>();
  private readonly sleepers = new Set<() => void>();

  every(ms: number, fn: () => void): void {
    this.all.add(setInterval(fn, ms));
  }

  after(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.all.delete(t);
      fn();
    }, ms);
    this.all.add(t);
    return t;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.sleepers.delete(wake);
        clearTimeout(t);
        this.all.delete(t);
        resolve();
      };
      const t = this.after(ms, wake);
      this.sleepers.add(wake);
    });
  }

  clear(): void {
    for (const t of this.all) clearTimeout(t);
    this.all.clear();
    for (const wake of [...this.sleepers]) wake();
  }
}
