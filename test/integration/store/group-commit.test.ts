import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { GroupCommit } from '../../../src/engine/group-commit.ts';
import { Kernel } from '../../../src/engine/kernel.ts';
import { SerialLoop } from '../../../src/engine/serial-loop.ts';
import type { Store } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';
import { holdLoop } from '../../helpers/hold-loop.ts';
import { suiteStore } from '../../helpers/suite-store.ts';

/**
 * Group commit (engine/group-commit.ts), which the engine's submits go through: works added together share one
 * transaction, and each still succeeds or fails on its own, with nothing of a failed one stored. On SQLite, whose
 * statements never leave the microtask queue, the event loop still gets turns inside a long group, and inside the
 * serial loop's batch of reports.
 */

const role = (name: string) => ({ name, description: name, grants: [], builtin: false });

/** A serial loop over the store with no kernel work of its own and no dispatch passes: only its batches. */
const serialLoop = (store: Store) =>
  new SerialLoop({ store, kernel: new Kernel(), apply: () => {}, dispatch: async () => {} });

for (const backend of backends())
  describe(`group commit (${backend.name})`, () => {
    const t = suiteStore(backend);
    let commits = 0;
    before(() =>
      t.store.onTransactionEnd((_ms, committed) => {
        if (committed) commits++;
      }),
    );

    test('works added together share one commit, and each gets its own result', async () => {
      const group = new GroupCommit(t.store, 64);
      const before = commits;
      const results = await Promise.all(
        ['a1', 'a2', 'a3'].map((name) =>
          group.run(async (tx) => {
            await tx.upsertRole(role(name));
            return name.toUpperCase();
          }),
        ),
      );
      assert.deepEqual(results, ['A1', 'A2', 'A3']);
      assert.equal(commits - before, 1);
      for (const name of ['a1', 'a2', 'a3']) assert.equal((await t.store.getRole(name))?.description, name);
    });

    test('a work that fails gets its error and leaves nothing; the others of its group are committed', async () => {
      const group = new GroupCommit(t.store, 64);
      const outcomes = await Promise.allSettled([
        group.run((tx) => tx.upsertRole(role('b1'))),
        group.run(async (tx) => {
          await tx.upsertRole(role('b2')); // written, then the work fails: must not stay
          throw new Error('no such definition');
        }),
        group.run((tx) => tx.upsertRole(role('b3'))),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.equal((outcomes[1] as PromiseRejectedResult).reason.message, 'no such definition');
      assert.ok(await t.store.getRole('b1'));
      assert.equal(await t.store.getRole('b2'), undefined);
      assert.ok(await t.store.getRole('b3'));
    });

    test('a group holds at most its limit; works added while one commits join the next', async () => {
      const group = new GroupCommit(t.store, 2);
      const before = commits;
      const first = ['c1', 'c2', 'c3'].map((name) => group.run((tx) => tx.upsertRole(role(name))));
      await Promise.all(first);
      assert.equal(commits - before, 2, 'three works, at most two a commit');
      for (const name of ['c1', 'c2', 'c3']) assert.ok(await t.store.getRole(name));
    });

    test('the event loop gets its turn between groups: a callback set meanwhile runs before the last group', async () => {
      const group = new GroupCommit(t.store, 2);
      const committed: string[] = [];
      const works = ['d1', 'd2', 'd3', 'd4', 'd5', 'd6'].map((name) =>
        group.run(async (tx) => {
          await tx.upsertRole(role(name));
          return name;
        }),
      );
      for (const w of works) void w.then((name) => committed.push(name));
      // Set after the first group's start was: on SQLite, groups run back to back left it no turn until all six
      // were stored.
      const timerSaw = await new Promise<string[]>((resolve) => setImmediate(() => resolve([...committed])));
      await Promise.all(works);
      assert.ok(timerSaw.length < 6, `the callback ran only after every group: it saw ${timerSaw.join(', ')}`);
    });

    // The same for a group of submits and for the serial loop's batch of reports (engine/serial-loop.ts).
    const batchers: [string, () => (work: (tx: Store) => Promise<void>) => Promise<void>][] = [
      [
        'a group of submits',
        () => {
          const group = new GroupCommit(t.store, 64);
          return (work) => group.run(work);
        },
      ],
      [
        "the serial loop's batch of reports",
        () => {
          const loop = serialLoop(t.store);
          return (work) => loop.report(work);
        },
      ],
    ];
    for (const [what, batcher] of batchers)
      test(`${what} that holds the loop longer than a slice is one commit, and the event loop gets turns inside it`, async () => {
        const add = batcher();
        const before = commits;
        const names = Array.from({ length: 40 }, (_, i) => `${what} ${i}`);
        const ran: string[] = [];
        const works = names.map((name) =>
          add(async (tx) => {
            await tx.upsertRole(role(name));
            holdLoop(1);
            ran.push(name);
          }),
        );
        // Set after the transaction's start was: on SQLite its 40 works (40 ms and more) ran before it when the loop
        // got no turn inside a transaction.
        const timerSaw = await new Promise<number>((resolve) => setImmediate(() => resolve(ran.length)));
        await Promise.all(works);
        assert.ok(timerSaw < names.length, `the callback ran only after all ${names.length} works`);
        assert.equal(commits - before, 1, 'one commit for the 40 works');
        for (const name of names) assert.ok(await t.store.getRole(name));
      });

    test('a stopped serial loop is idle, though a dispatch pass was asked for while its last batch ran', async () => {
      const loop = serialLoop(t.store);
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let started = () => {};
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const report = loop.report(async () => {
        started();
        await held;
      });
      await running; // the batch runs, waiting on `held`
      loop.requestDispatch();
      loop.stop();
      const idle = loop.idle();
      release();
      await report;
      await idle;
      // Asked again (a server closed twice): idle at once, not waiting for the pass that will never run.
      const again = await Promise.race([
        loop.idle().then(() => 'idle'),
        new Promise((resolve) => setImmediate(() => resolve('still waiting'))),
      ]);
      assert.equal(again, 'idle');
    });
  });
