/**
 * ReturncodeMapToCompleted: a comma-separated list of codes and ranges, `0`, `0,3-5,100-`,
 * `-5,40-90`. A range open at the top (`100-`) has no upper bound. Only the codes listed mean Completed.
 */

import { itemAt } from './item-at.ts';

export type ReturnCodeMatcher = (code: number) => boolean;

export function parseReturnCodeMap(text: string): ReturnCodeMatcher {
  const ranges: Array<[number, number]> = [];
  for (const part of text.split(',')) {
    const m = /^(-?\d+)(?:-(-?\d+)?)?$/.exec(part.trim());
    if (!m) throw new Error(`not a return code or range: "${part}"`);
    const low = Number(m[1]);
    const open = part.trim().length > itemAt(m, 1).length && m[2] === undefined;
    const high = m[2] !== undefined ? Number(m[2]) : open ? Number.POSITIVE_INFINITY : low;
    ranges.push([low, high]);
  }
  return (code) => ranges.some(([low, high]) => code >= low && code <= high);
}
