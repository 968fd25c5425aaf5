import { after, before } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import type { Backend } from './backends.ts';

export type BackendDatabase = Awaited<ReturnType<Backend['create']>>;

/**
 * A fresh database on `backend` with a store open on it, for the suite that calls this: made in the suite's first
 * `before` hook, closed and dropped in its `after`. Read `.store` and `.db` in the tests and later hooks; a test may
 * put a reopened store in `.store`, which `after` then closes.
 */
export function suiteStore(backend: Backend): { store: Store; db: BackendDatabase } {
  const suite = {} as { store: Store; db: BackendDatabase };
  before(async () => {
    suite.db = await backend.create();
    suite.store = await openStore(suite.db);
  });
  after(async () => {
    await suite.store?.close();
    await suite.db?.cleanup();
  });
  return suite;
}
