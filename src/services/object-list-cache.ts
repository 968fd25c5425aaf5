// Rendered lists of a type's objects (the XML interface's `list`) kept until an object changes, bounded in entries
// and bytes (docs/architecture.md §10): apart from the reader since it caches bytes someone else built.
import type { ObjectType } from '../model/object-type.ts';
import { type Principal, partitionsWith } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';

/** Rendered lists kept (cachedList), the least recently used dropped first beyond either bound. */
const LIST_CACHE_ENTRIES = 16;
const LIST_CACHE_BYTES = 32 * 1024 * 1024;

export class ObjectListCache {
  private readonly store: Store;
  private readonly lists = new Map<string, { version: string; text: Buffer }>();
  private listBytes = 0;

  constructor(store: Store) {
    this.store = store;
  }

  /**
   * A rendered list of a type's objects (the XML interface's `list`), kept until an object changes: consoles and
   * scripts ask for the same list again and again, and writing one of many objects costs much CPU
   * (bench/README.md, B8). Its key is what decides its content: the type, the partitions the caller may view, and
   * `variant` (the caller's query). Validated by the store's data version, as the object read cache; off where the
   * store has none (PostgreSQL).
   */
  async cachedList(
    principal: Principal,
    type: ObjectType,
    variant: string,
    build: () => Promise<Buffer>,
  ): Promise<Buffer> {
    const version = this.store.dataVersion(); // read before the data it validates
    if (version === undefined) return build();
    const partitions = partitionsWith(principal, type.name, ['View']);
    const key = `${type.name}\0${partitions ? [...partitions].sort().join(',') : '*'}\0${variant}`;
    const hit = this.lists.get(key);
    this.dropList(key);
    if (hit?.version === version) {
      this.keepList(key, hit);
      return hit.text;
    }
    const text = await build();
    this.keepList(key, { version, text });
    return text;
  }

  private keepList(key: string, entry: { version: string; text: Buffer }): void {
    this.lists.set(key, entry);
    this.listBytes += entry.text.length;
    for (const old of this.lists.keys()) {
      if (this.lists.size <= LIST_CACHE_ENTRIES && this.listBytes <= LIST_CACHE_BYTES) break;
      this.dropList(old);
    }
  }

  private dropList(key: string): void {
    const entry = this.lists.get(key);
    if (!entry) return;
    this.lists.delete(key);
    this.listBytes -= entry.text.length;
  }
}
