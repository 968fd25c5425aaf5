import type { TypeName } from '../model/fields.ts';
import type { Store, StoredObject } from './store.ts';

const PAGE = 1000;

/**
 * Every object of a type (optionally of one partition), read page by page in key order: the keyset pagination
 * that engine passes, alert matching, credential lookup and key rotation all need, so no caller loads an
 * unbounded page at once.
 */
export async function* allObjects<T extends TypeName>(
  tx: Store,
  type: T,
  partition?: string,
): AsyncGenerator<StoredObject<T>> {
  let afterKey: string | undefined;
  for (;;) {
    const page = await tx.listObjects(type, {
      limit: PAGE,
      ...(partition ? { partition } : {}),
      ...(afterKey ? { afterKey } : {}),
    });
    yield* page;
    if (page.length < PAGE) return;
    afterKey = page[page.length - 1]?.key;
  }
}

export async function listAllObjects<T extends TypeName>(
  tx: Store,
  type: T,
  partition?: string,
): Promise<StoredObject<T>[]> {
  const all: StoredObject<T>[] = [];
  for await (const o of allObjects(tx, type, partition)) all.push(o);
  return all;
}
