/**
 * What a benchmark prints and writes: number formats, medians and percentiles, tables whose columns are declared
 * once (title, width, cell), the ratio of a figure to its anchor measured in the same run, the machine facts, and
 * the `--json` file.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/** Prints each argument as a line. */
export function say(...lines: string[]): void {
  process.stdout.write(`${lines.join('\n')}\n`);
}

export const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
export const fixed = (n: number, d = 1): string => (Number.isFinite(n) ? n.toFixed(d) : '-');
export const pct = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(1)} %` : '-');
/** a ÷ b as a percentage. */
export const ratio = (a: number, b: number): string => pct((100 * a) / b);
export const loadText = (xs = loadavg()): string => xs.map((x) => x.toFixed(2)).join(' ');

/** The machine a run happened on: Node version, CPUs and load average. */
export const machine = (cpus = availableParallelism(), load = loadavg()): string =>
  `node ${process.version}, ${cpus} CPUs, loadavg ${loadText(load)}`;

export function row(cells: string[], widths: number[]): string {
  return cells
    .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
    .join('  ')
    .trimEnd();
}

export type Column<T> = readonly [title: string, width: number, cell: (x: T) => string];

/** A table whose columns are declared once: the header and every line come from the same list. */
export class Table<T> {
  private readonly columns: ReadonlyArray<Column<T>>;
  private readonly widths: number[];
  constructor(columns: ReadonlyArray<Column<T>>) {
    this.columns = columns;
    this.widths = columns.map(([, w]) => w);
  }
  /** The titles; `first` replaces the first one (e.g. "median of 3 rep(s)"). */
  header(first?: string): string {
    return row(
      this.columns.map(([title], i) => (i === 0 && first !== undefined ? first : title)),
      this.widths,
    );
  }
  /** One line; `name` replaces the first cell. */
  line(x: T, name?: string): string {
    return row(
      this.columns.map(([, , cell], i) => (i === 0 && name !== undefined ? name : cell(x))),
      this.widths,
    );
  }
  /** A line with only the column `title` filled, e.g. a ratio under the figure it compares. */
  only(name: string, title: string, cell: string): string {
    return row(
      this.columns.map(([t], i) => (i === 0 ? name : t === title ? cell : '')),
      this.widths,
    );
  }
}

export const median = (xs: number[]): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** The q-quantile (0..1) of `xs` by nearest rank. */
export const quantile = (xs: number[], q: number): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
};

export interface Dist {
  p50: number;
  p99: number;
  max: number;
}

export const dist = (xs: number[]): Dist => ({ p50: quantile(xs, 0.5), p99: quantile(xs, 0.99), max: quantile(xs, 1) });

/** The median of each of `keys` over `xs` (missing values are left out). */
export function medians<T, K extends keyof T>(xs: readonly T[], keys: readonly K[]): { [P in K]: number } {
  const pick = (x: T, k: K) => (typeof x[k] === 'number' ? (x[k] as number) : Number.NaN);
  return Object.fromEntries(keys.map((k) => [k, median(xs.map((x) => pick(x, k)))])) as { [P in K]: number };
}

/** f(ours) ÷ f(anchor) for each repetition of `ours` (its anchor measured beside it), in the order of `ours`. */
export function ratiosByRep<T extends { rep: number }>(
  ours: readonly T[],
  anchor: readonly T[],
  f: (x: T) => number,
): number[] {
  return ours.map((x) => {
    const y = anchor.find((a) => a.rep === x.rep);
    return y ? f(x) / f(y) : Number.NaN;
  });
}

/** How a run was started, for its `--json` result file. */
export interface RunInfo {
  command: string;
  startedAt: Date;
  /** Counted before the harness pinned itself to one core. */
  cpus: number;
  loadStart: number[];
}

/** Writes a `--json` result file (when asked): the run's envelope, then the benchmark's own results. */
export function writeResults(
  path: string | undefined,
  run: RunInfo,
  options: unknown,
  results: Record<string, unknown>,
): void {
  if (!path) return;
  const envelope = {
    startedAt: run.startedAt.toISOString(),
    command: run.command,
    node: process.version,
    cpus: run.cpus,
    options,
    loadavgStart: run.loadStart,
    loadavgEnd: loadavg(),
  };
  writeFileSync(path, `${JSON.stringify({ ...envelope, ...results }, null, 2)}\n`);
}
