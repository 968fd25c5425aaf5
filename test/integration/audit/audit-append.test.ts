import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { verifyAudit } from '../../../src/services/audit.ts';
import type { AuditInput } from '../../../src/store/audit-store.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';

/**
 * The audit append (docs/architecture.md §18): on PostgreSQL one statement chains the entries from the head and
 * hashes them in SQL, batch after batch; on SQLite the same is done in JavaScript. Either way the entries read back
 * as written, their ids run without a gap across batches and transactions, and `verify` (which hashes in
 * JavaScript) accepts the chain, awkward text, nulls and large ids included.
 */

const AWKWARD = ['quote " backslash \\ newline\n tab\t', 'ünïcödé ✓ 🚀', "'; drop table audit_entries; --", '{}', ''];

function entry(i: number): AuditInput {
  return {
    time: 1_790_000_000_000 + i,
    actor: {
      user: i % 7 === 0 ? 'üser ✓' : 'admin',
      interface: i % 2 === 0 ? 'json' : 'xml',
      address: i % 5 === 0 ? null : '127.0.0.1',
      apiKeyId: i % 3 === 0 ? `key-${i}` : null,
    },
    action: i % 4 === 0 ? 'delete' : 'update',
    object: i % 6 === 0 ? null : { type: 'Queue', key: `GLOBAL.Q${i}`, uniqueId: i % 9 === 0 ? null : 2 ** 40 + i },
    detail: i % 3 === 1 ? null : (AWKWARD[i % AWKWARD.length] ?? null),
    diff: i % 2 === 0 ? { Description: { before: AWKWARD[i % AWKWARD.length], after: i } } : null,
    restore: i % 4 === 0 ? { Held: false, Notes: ['a', null, { z: 1, a: 2 }] } : null,
  };
}

for (const backend of backends()) {
  describe(`the audit append (${backend.name})`, () => {
    const t = suiteStore(backend);

    test('entries spanning several batches, then more in another transaction, form one chain', async () => {
      const first = Array.from({ length: 250 }, (_, i) => entry(i + 1));
      await t.store.transaction(async (tx) => {
        for (const e of first) await tx.audit.add(e);
      });
      await t.store.transaction(async (tx) => {
        await tx.audit.add(entry(251));
      });
      const result = await verifyAudit(t.store);
      assert.equal(result.problem, null);
      assert.equal(result.checked, 251);
      assert.equal((await t.store.audit.head())?.id, 251, 'the ids run 1…251 without a gap');
      for (const id of [1, 100, 101, 200, 201, 250, 251]) {
        const got = await t.store.audit.get(id);
        const want = entry(id);
        assert.deepEqual(
          { time: got?.time, actor: got?.actor, action: got?.action, object: got?.object, detail: got?.detail },
          { time: want.time, actor: want.actor, action: want.action, object: want.object, detail: want.detail },
          `entry ${id} reads back as written`,
        );
        assert.deepEqual(got?.diff, want.diff);
        assert.deepEqual(got?.restore, want.restore);
      }
    });

    test('a failed transaction appends nothing and the next continues the chain', async () => {
      await assert.rejects(
        t.store.transaction(async (tx) => {
          await tx.audit.add(entry(300));
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      await t.store.transaction(async (tx) => {
        await tx.audit.add(entry(301));
      });
      const result = await verifyAudit(t.store);
      assert.equal(result.problem, null);
      assert.equal((await t.store.audit.head())?.id, 252);
      assert.equal((await t.store.audit.get(252))?.time, entry(301).time);
    });
  });
}
