import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KernelWork } from '../../../src/engine/engine.ts';
import { clearEvent, consumeEvent, isRaised, raiseEvent } from '../../../src/engine/events.ts';
import { backends } from '../../helpers/backends.ts';
import { createDefinition, getEvent, raise } from '../../helpers/events.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * The transactional functions the engine uses for jobs (src/engine/events.ts), run as the engine runs them, in
 * `engine.mutate` with the engine's kernel: a job consuming the Raised event, `isRaised`, and raises by jobs, which no comment rule stops.
 */

for (const backend of backends()) {
  describe(`event functions inside the engine (${backend.name})`, () => {
    let t: TestServer;
    const mutate = <T>(fn: KernelWork<T>): Promise<T> => t.server.engine.mutate(fn);
    const now = () => Date.now();
    before(async () => {
      t = await startTestServer(backend);
      await createDefinition(t, 'GLOBAL.Gate', { DefaultClearComment: 'consumed' });
    });
    after(() => t.close());

    test('isRaised follows raises and clears', async () => {
      assert.equal(await mutate((tx) => isRaised(tx, 'GLOBAL.Gate')), false);
      await raise(t, 'GLOBAL.Gate');
      await raise(t, 'GLOBAL.Gate');
      assert.equal(await mutate((tx) => isRaised(tx, 'GLOBAL.Gate')), true);
      assert.equal(await mutate((tx) => isRaised(tx, 'GLOBAL.Nothing')), false);
    });

    test('consumeEvent clears the Raised event as the job (promoting the next); none Raised → nothing happens', async () => {
      const consumed = await mutate((tx, fx, k) => consumeEvent(k, tx, 'GLOBAL.Gate', 42, now(), fx));
      assert.equal(consumed?.eventId, 'Gate1');
      const gate1 = await getEvent(t, 'Gate1');
      assert.deepEqual([gate1.Status, gate1.ClearerObject, gate1.ClearerComment], ['Cleared', 'Job:42', 'consumed']);
      assert.notEqual(gate1.ClearTime, null);
      assert.equal((await getEvent(t, 'Gate2')).Status, 'Raised', 'the Pending one was promoted');
      assert.equal((await mutate((tx, fx, k) => consumeEvent(k, tx, 'GLOBAL.Gate', 43, now(), fx)))?.eventId, 'Gate2');
      assert.equal(await mutate((tx, fx, k) => consumeEvent(k, tx, 'GLOBAL.Gate', 44, now(), fx)), undefined);
      assert.equal(await mutate((tx) => isRaised(tx, 'GLOBAL.Gate')), false);
    });

    test('a job raising or clearing needs no comment where a person must give one; a long one is cut', async () => {
      await createDefinition(t, 'GLOBAL.Strict', { RequiresCommentOnRaise: true, RequiresCommentOnClear: true });
      const raised = await mutate((tx, fx, k) => raiseEvent(k, tx, 'GLOBAL.Strict', { raiser: 'Job:7' }, now(), fx));
      assert.equal(raised.status, 'Raised');
      const pending = await mutate((tx, fx, k) =>
        raiseEvent(k, tx, 'GLOBAL.Strict', { raiser: 'Job:8', comment: 'z'.repeat(1500) }, now(), fx),
      );
      assert.equal(pending.status, 'Pending');
      assert.equal(pending.data.raiserComment?.length, 1000);
      const e = await getEvent(t, raised.eventId);
      assert.deepEqual([e.RaiserObject, e.RaiserComment], ['Job:7', null]);
      const cleared = await mutate(async (tx, fx, k) => {
        const current = await tx.events.get(pending.eventId);
        assert.ok(current);
        return clearEvent(k, tx, current, { clearer: 'Job:9' }, now(), fx);
      });
      assert.equal(cleared.status, 'Cleared');
      await assert.rejects(
        mutate((tx, fx, k) => raiseEvent(k, tx, 'GLOBAL.Strict', { raiser: 'User:admin' }, now(), fx)),
        /RaiserComment.*required/,
      );
    });
  });
}
