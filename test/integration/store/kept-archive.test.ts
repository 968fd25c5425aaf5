import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { keepArchive, keptArchive } from '../../../src/services/kept-archive.ts';
import { openStore } from '../../../src/store/open.ts';
import type { Store } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';

/** A CAR archive waiting for its import job is kept in parts of 1 MiB (services/kept-archive.ts) and read back whole. */

for (const backend of backends())
  describe(`kept archives (${backend.name})`, () => {
    let db: Awaited<ReturnType<typeof backend.create>>;
    let store: Store;
    before(async () => {
      db = await backend.create();
      store = await openStore({ dataDir: db.dataDir, ...(db.databaseUrl ? { databaseUrl: db.databaseUrl } : {}) });
    });
    after(async () => {
      await store?.close();
      await db?.cleanup();
    });

    test('an archive of 2.5 MiB is kept in 3 parts and read back byte for byte', async () => {
      const bytes = randomBytes(2.5 * 1024 * 1024);
      await store.transaction((tx) => keepArchive(tx, 101, bytes, 1));
      assert.deepEqual(
        (await store.blobs.list('archive', '101')).map((b) => [b.name, b.size]),
        [
          ['car.0000', 1024 * 1024],
          ['car.0001', 1024 * 1024],
          ['car.0002', 512 * 1024],
        ],
      );
      assert.ok((await keptArchive(store, 101))?.equals(bytes));
    });

    test('an empty archive is kept too, and none is undefined', async () => {
      await store.transaction((tx) => keepArchive(tx, 102, Buffer.alloc(0), 1));
      assert.equal((await keptArchive(store, 102))?.length, 0);
      assert.equal(await keptArchive(store, 103), undefined);
    });

    test('an archive kept whole by an older version is read', async () => {
      const bytes = randomBytes(1000);
      await store.blobs.put('archive', '104', 'car', bytes, 1);
      assert.ok((await keptArchive(store, 104))?.equals(bytes));
    });
  });
