import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../../src/store/open.ts';
import { WAL_LIMIT_BYTES } from '../../../src/store/sqlite-checkpointer.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * SQLite's WAL is checkpointed by a worker thread (store/sqlite-checkpointer.ts), not in the commits, which no longer
 * checkpoint by themselves: after a transaction that wrote more than the limit, the WAL is copied back and, from the
 * next commit on, kept under the limit; nothing written is lost, also after the store is closed and opened again.
 */

const [sqlite] = backends();
if (!sqlite) throw new Error('no SQLite backend');
const t = suiteStore(sqlite);
const MiB = 1024 * 1024;
const wal = () => statSync(join(t.db.dataDir, 'millrace.sqlite-wal')).size;

test('a WAL grown past the limit by one transaction is checkpointed, and stays under it afterwards', async () => {
  const chunk = Buffer.alloc(MiB, 7);
  await t.store.transaction(async (tx) => {
    for (let i = 0; i < 6; i++) await tx.blobs.put('library', 'Big', `part${i}`, chunk, Date.now());
  });
  assert.ok(wal() > WAL_LIMIT_BYTES, `the transaction's 6 MiB are in the WAL (${wal()} bytes)`);
  let writes = 0;
  await waitFor(
    'the WAL back under the limit',
    async () => {
      // Each commit looks at the WAL (at most every 100 ms); the one after a complete checkpoint starts it afresh.
      await t.store.upsertRole({ name: `r${writes++}`, description: '', grants: [], builtin: false });
      return wal() <= WAL_LIMIT_BYTES ? true : undefined;
    },
    60_000,
    50,
  );
  for (let i = 0; i < 20; i++)
    await t.store.upsertRole({ name: `after${i}`, description: '', grants: [], builtin: false });
  assert.ok(wal() <= WAL_LIMIT_BYTES, `still under the limit (${wal()} bytes)`);

  await t.store.close();
  t.store = await openStore(t.db);
  const parts = await t.store.blobs.list('library', 'Big');
  assert.deepEqual(
    parts.map((p) => [p.name, p.size]).sort(),
    [0, 1, 2, 3, 4, 5].map((i) => [`part${i}`, MiB]),
  );
  assert.deepEqual(await t.store.blobs.get('library', 'Big', 'part5'), chunk);
  assert.equal((await t.store.getRole('after19'))?.name, 'after19');
});
