import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyAudit } from '../../../src/services/audit.ts';
import { openStore } from '../../../src/store/open.ts';
import type { Store } from '../../../src/store/store.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';

/**
 * docs/architecture.md §18: appends from several nodes on one PostgreSQL form one line. Two stores with pools of
 * their own (as two server nodes have) append at once, each transaction holding its entries over a pause; every
 * transaction commits, the ids run without a gap and `verify` passes.
 */

describe('audit appends from two nodes of one PostgreSQL', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  let db: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
  const stores: Store[] = [];
  const dirs: string[] = [];

  before(async () => {
    db = await createPgDatabase();
    for (const id of ['n1', 'n2']) {
      const dataDir = await mkdtemp(join(tmpdir(), `millrace-test-audit-${id}-`));
      dirs.push(dataDir);
      stores.push(await openStore({ dataDir, databaseUrl: db.url }));
    }
  });
  after(async () => {
    for (const s of stores) await s.close();
    await db?.drop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  test('concurrent changes on both nodes all commit, in one unbroken chain', async () => {
    const PER_NODE = 30;
    const append = (store: Store, node: string, i: number) =>
      store.transaction(async (tx) => {
        await tx.audit.add({
          time: Date.now(),
          actor: { user: node, interface: 'json', address: '127.0.0.1', apiKeyId: null },
          action: 'update',
          object: { type: 'Queue', key: `GLOBAL.Q${i}`, uniqueId: i },
          detail: null,
          diff: { Held: { before: false, after: true } },
          restore: { Held: false },
        });
        // The change's own work, overlapping the other node's transactions.
        await sleep(i % 3);
      });
    const [a, b] = stores as [Store, Store];
    const results = await Promise.allSettled(
      Array.from({ length: PER_NODE }, (_, i) => [append(a, 'n1', i), append(b, 'n2', i)]).flat(),
    );
    assert.deepEqual(
      results.filter((r) => r.status === 'rejected'),
      [],
      'every change committed',
    );
    const result = await verifyAudit(a);
    assert.equal(result.problem, null);
    assert.equal(result.checked, 2 * PER_NODE);
    const head = await b.audit.head();
    assert.equal(head?.id, 2 * PER_NODE, 'the ids run 1…N without a gap');
  });
});
