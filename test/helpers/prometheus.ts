import { createRequire } from 'node:module';

/** A metric family as parse-prometheus-text-format returns it. */
export interface Family {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Array<{
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }>;
}

// The package ships no types; it is a real Prometheus text parser (not ours).
const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => Family[];

/** Parses a scrape into its families by name. */
export function parseMetrics(text: string): Map<string, Family> {
  return new Map(parse(text).map((f) => [f.name, f]));
}

/** The value of the sample of `name` whose labels include `labels` (undefined when there is none). */
export function sample(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = families.get(name);
  const m = family?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  if (!m) return undefined;
  return Number(m.value ?? m.count);
}

/**
 * The `_count` of a labelled histogram's series, read from the text: parse-prometheus-text-format folds all the
 * series of a labelled histogram into one (it keeps only unlabelled counts), so the parser checks the format and
 * the family, and this reads the series. Undefined when no series has these labels.
 */
export function histogramCount(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^(\w+)_count\{(.*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries(
      [...(m[2] as string).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** The label sets of a labelled histogram's series, read from its `_count` lines (see histogramCount). */
export function histogramSeries(text: string, name: string): Record<string, string>[] {
  const series: Record<string, string>[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\w+)_count\{(.*)\} (\S+)$/.exec(line);
    if (m && m[1] === name)
      series.push(
        Object.fromEntries(
          [...(m[2] as string).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1] as string, x[2] as string]),
        ),
      );
  }
  return series;
}
