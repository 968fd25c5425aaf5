import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { Kernel } from '../../../src/engine/kernel.ts';
import { SerialLoop } from '../../../src/engine/serial-loop.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';

/**
 * The serial loop's batches of reports (engine/serial-loop.ts): reports that arrive together share one
 * transaction, and on SQLite, whose statements never leave the microtask queue, the event loop still gets turns
 * inside it (loop-yield.ts).
 */

const role = (name: string) => ({ name, description: name, grants: [], builtin: false });

/** Holds the event loop for `ms` milliseconds, as a work's synchronous part does. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

for (const backend of backends())
  describe(`the serial loop's batches (${backend.name})`, () => {
    const t = suiteStore(backend);
    let commits = 0;
    before(() =>
      t.store.onTransactionEnd((_ms, committed) => {
        if (committed) commits++;
      }),
    );

    test('reports that arrive together are one commit, and the event loop gets turns inside it', async () => {
      const loop = new SerialLoop({ store: t.store, kernel: new Kernel(), apply: () => {}, dispatch: async () => {} });
      const before = commits;
      const names = Array.from({ length: 40 }, (_, i) => `r${i}`);
      const ran: string[] = [];
      const reports = names.map((name) =>
        loop.report(async (tx) => {
          await tx.upsertRole(role(name));
          spin(1);
          ran.push(name);
        }),
      );
      // Set after the loop's start was: on SQLite all 40 reports (40 ms and more) ran before it when the loop got no
      // turn inside a transaction.
      const timerSaw = await new Promise<number>((resolve) => setImmediate(() => resolve(ran.length)));
      await Promise.all(reports);
      await loop.idle();
      assert.ok(timerSaw < names.length, `the callback ran only after all ${names.length} reports`);
      assert.equal(commits - before, 1, 'one commit for the 40 reports');
      for (const name of names) assert.ok(await t.store.getRole(name));
    });
  });
