import { itemAt } from './item-at.ts';

/** A binary min-heap under `less`: push and pop in log n (the k-way merge of the forecast's sources). Pure. */
export class MinHeap<T> {
  private readonly items: T[] = [];
  private readonly less: (a: T, b: T) => boolean;

  constructor(less: (a: T, b: T) => boolean) {
    this.less = less;
  }

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(itemAt(a, i), itemAt(a, parent))) break;
      [a[i], a[parent]] = [itemAt(a, parent), itemAt(a, i)];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    a[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.less(itemAt(a, l), itemAt(a, m))) m = l;
      if (r < a.length && this.less(itemAt(a, r), itemAt(a, m))) m = r;
      if (m === i) break;
      [a[i], a[m]] = [itemAt(a, m), itemAt(a, i)];
      i = m;
    }
    return top;
  }
}
