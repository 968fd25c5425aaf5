import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { keepArchive, keptArchive } from '../../../src/services/kept-archive.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';

/** A CAR archive waiting for its import job is kept in parts of 1 MiB (services/kept-archive.ts) and read back whole. */

for (const backend of backends())
  describe(`kept archives (${backend.name})`, () => {
    const t = suiteStore(backend);

    test('an archive of 2.5 MiB is kept in 3 parts and read back byte for byte', async () => {
      const bytes = randomBytes(2.5 * 1024 * 1024);
      await t.store.transaction((tx) => keepArchive(tx, 101, bytes, 1));
      assert.deepEqual(
        (await t.store.blobs.list('archive', '101')).map((b) => [b.name, b.size]),
        [
          ['car.0000', 1024 * 1024],
          ['car.0001', 1024 * 1024],
          ['car.0002', 512 * 1024],
        ],
      );
      assert.ok((await keptArchive(t.store, 101))?.equals(bytes));
    });

    test("names() gives list()'s owners and names, in its order, of one owner or of all", async () => {
      await t.store.transaction((tx) => keepArchive(tx, 99, randomBytes(1.5 * 1024 * 1024), 1));
      for (const owner of ['99', '101', undefined]) {
        const listed = (await t.store.blobs.list('archive', owner)).map((b) => ({ owner: b.owner, name: b.name }));
        assert.ok(listed.length >= 2);
        assert.deepEqual(await t.store.blobs.names('archive', owner), listed);
      }
    });

    test('an empty archive is kept too, and none is undefined', async () => {
      await t.store.transaction((tx) => keepArchive(tx, 102, Buffer.alloc(0), 1));
      assert.equal((await keptArchive(t.store, 102))?.length, 0);
      assert.equal(await keptArchive(t.store, 103), undefined);
    });

    test('an archive kept whole by an older version is read', async () => {
      const bytes = randomBytes(1000);
      await t.store.blobs.put('archive', '104', 'car', bytes, 1);
      assert.ok((await keptArchive(t.store, 104))?.equals(bytes));
    });
  });
