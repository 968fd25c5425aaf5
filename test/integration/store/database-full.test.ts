import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDiskFull } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';
import { postgresFiller, sqliteFiller } from '../../helpers/full-database.ts';
import { suiteStore } from '../../helpers/suite-store.ts';

/**
 * A write refused for want of space fails whole, with an error that says so (isDiskFull: the interfaces answer
 * 503 naming the disk), also when the code that wrote catches it and writes on: SQLite ends the transaction itself
 * on SQLITE_FULL, and what follows must not be stored outside it. The space probe (readiness) fails while the
 * database cannot grow and succeeds once it can, storing nothing.
 */
for (const backend of backends()) {
  const t = suiteStore(backend);
  test(`${backend.name}: a full database refuses the whole transaction, and takes writes again once space is freed`, async () => {
    const filler = backend.name === 'sqlite' ? sqliteFiller(t.store) : postgresFiller(t.db.databaseUrl as string);
    const big = Buffer.alloc(256 * 1024, 7);
    await filler.fill();
    try {
      let inside: unknown;
      await assert.rejects(
        t.store.transaction(async (tx) => {
          await tx.setMeta('grown', 'x'.repeat(256 * 1024)).catch((err: unknown) => {
            inside = err;
          });
          await tx.upsertRole({ name: 'AfterFull', description: '', grants: [], builtin: false });
        }),
        // SQLite: the error that ended the transaction; PostgreSQL: the transaction is aborted (25P02).
        (err) => (backend.name === 'sqlite' ? isDiskFull(err) : (err as { code?: string }).code === '25P02'),
      );
      assert.ok(isDiskFull(inside), `the write was refused for want of space: ${String(inside)}`);
      assert.equal(await t.store.getRole('AfterFull'), undefined, 'nothing after it was stored on its own');
      assert.equal(await t.store.getMeta('grown'), undefined);
      await assert.rejects(t.store.probeSpace(), (err) => isDiskFull(err));
    } finally {
      await filler.free();
    }
    await t.store.probeSpace();
    assert.equal(await t.store.getMeta('space-probe'), undefined, 'the probe stores nothing');
    await t.store.transaction((tx) => tx.blobs.put('library', 'Big', 'part0', big, Date.now()));
    assert.deepEqual(await t.store.blobs.get('library', 'Big', 'part0'), big);
  });
}
