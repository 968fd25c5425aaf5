/**
 * Sets of instants as flat sorted lists of half-open intervals [s0, e0, s1, e1, ...] (epoch ms): the algebra that
 * time windows (time-window.ts) combine their elements, holidays and EnabledDuring / DisabledDuring windows with.
 * "Normalized" means sorted, disjoint and not touching.
 */

import { itemAt } from './item-at.ts';

/** Sorts a flat list of [start, end) pairs and merges overlapping and touching ones. */
export function normalize(pairs: number[]): number[] {
  const n = pairs.length / 2;
  if (n <= 1) return pairs;
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => itemAt(pairs, 2 * a) - itemAt(pairs, 2 * b));
  const out: number[] = [];
  for (const i of order) {
    const s = itemAt(pairs, 2 * i);
    const e = itemAt(pairs, 2 * i + 1);
    const last = out.length - 1;
    if (last > 0 && s <= itemAt(out, last)) {
      if (e > itemAt(out, last)) out[last] = e;
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
    const s = Math.max(itemAt(a, i), itemAt(b, j));
    const e = Math.min(itemAt(a, i + 1), itemAt(b, j + 1));
    if (s < e) out.push(s, e);
    // Drop whichever ends first; its rest cannot meet anything further on.
    if (itemAt(a, i + 1) < itemAt(b, j + 1)) i += 2;
    else j += 2;
  }
  return out;
}

/** a minus b, both normalized. */
export function subtract(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < a.length; i += 2) {
    let s = itemAt(a, i);
    const e = itemAt(a, i + 1);
    // Skip b's intervals that end before this one starts (they end before every later one of a too).
    while (j < b.length && itemAt(b, j + 1) <= s) j += 2;
    let k = j;
    while (k < b.length && itemAt(b, k) < e) {
      if (itemAt(b, k) > s) out.push(s, itemAt(b, k));
      s = Math.max(s, itemAt(b, k + 1));
      k += 2;
    }
    if (s < e) out.push(s, e);
  }
  return out;
}
