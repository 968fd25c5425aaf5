/**
 * Sets of instants as flat sorted lists of half-open intervals [s0, e0, s1, e1, ...] (epoch ms): the algebra that
 * time windows (time-window.ts) combine their elements, holidays and EnabledDuring / DisabledDuring windows with.
 * "Normalized" means sorted, disjoint and not touching.
 */

/** Sorts a flat list of [start, end) pairs and merges overlapping and touching ones. */
export function normalize(pairs: number[]): number[] {
  const n = pairs.length / 2;
  if (n <= 1) return pairs;
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => (pairs[2 * a] as number) - (pairs[2 * b] as number));
  const out: number[] = [];
  for (const i of order) {
    const s = pairs[2 * i] as number;
    const e = pairs[2 * i + 1] as number;
    const last = out.length - 1;
    if (last > 0 && s <= (out[last] as number)) {
      if (e > (out[last] as number)) out[last] = e;
    } else out.push(s, e);
  }
  return out;
}

/** Intersection of two normalized lists. */
export function intersect(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const s = Math.max(a[i] as number, b[j] as number);
    const e = Math.min(a[i + 1] as number, b[j + 1] as number);
    if (s < e) out.push(s, e);
    // Drop whichever ends first; its rest cannot meet anything further on.
    if ((a[i + 1] as number) < (b[j + 1] as number)) i += 2;
    else j += 2;
  }
  return out;
}

/** a minus b, both normalized. */
export function subtract(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < a.length; i += 2) {
    let s = a[i] as number;
    const e = a[i + 1] as number;
    // Skip b's intervals that end before this one starts (they end before every later one of a too).
    while (j < b.length && (b[j + 1] as number) <= s) j += 2;
    let k = j;
    while (k < b.length && (b[k] as number) < e) {
      if ((b[k] as number) > s) out.push(s, b[k] as number);
      s = Math.max(s, b[k + 1] as number);
      k += 2;
    }
    if (s < e) out.push(s, e);
  }
  return out;
}
