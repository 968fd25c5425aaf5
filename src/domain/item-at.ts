/**
 * The item at index `i` of a list that the caller's bounds guarantee holds one (a loop below its length, the
 * pairs of a flat list, a heap's children): checked, so a wrong index throws here rather than running on with
 * undefined.
 */
export function itemAt<T>(list: ArrayLike<T>, i: number): T {
  const item = list[i];
  if (item === undefined) throw new RangeError(`No item at ${i} of a list of ${list.length}`);
  return item;
}
