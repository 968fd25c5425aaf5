import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { clearById, clearDefinition, createDefinition, getEvent, raise, raiseRequest } from '../../helpers/events.ts';
import { assertError } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Comments on raise and clear: the definition's default when none is given, required when the
 * definition says so, at most 1000 characters; a bad body is refused before anything is stored.
 */

for (const backend of backends()) {
  describe(`event comments and bodies (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    test("no comment → the definition's DefaultRaiseComment / DefaultClearComment; a given one wins", async () => {
      await createDefinition(t, 'GLOBAL.Defaults', {
        DefaultRaiseComment: 'raised as usual',
        DefaultClearComment: 'cleared as usual',
      });
      const first = await raise(t, 'GLOBAL.Defaults');
      assert.equal(first.RaiserComment, 'raised as usual');
      assert.equal((await raise(t, 'GLOBAL.Defaults', { RaiserComment: 'special' })).RaiserComment, 'special');
      assert.equal((await raise(t, 'GLOBAL.Defaults', { RaiserComment: null })).RaiserComment, 'raised as usual');
      assert.equal((await raise(t, 'GLOBAL.Defaults', { RaiserComment: '  ' })).RaiserComment, 'raised as usual');
      assert.equal((await clearDefinition(t, 'GLOBAL.Defaults', 'clear')).json.ClearerComment, 'cleared as usual');
      assert.equal((await clearById(t, 'Defaults3', { ClearerComment: 'mine' })).json.ClearerComment, 'mine');
      const pending = await clearDefinition(t, 'GLOBAL.Defaults', 'clearAllPending');
      assert.deepEqual(
        pending.json.Cleared.map((e: { ClearerComment: string }) => e.ClearerComment),
        ['cleared as usual'],
      );
    });

    test('without defaults a missing comment stays null', async () => {
      await createDefinition(t, 'GLOBAL.Plain');
      assert.equal((await raise(t, 'GLOBAL.Plain')).RaiserComment, null);
      assert.equal((await clearDefinition(t, 'GLOBAL.Plain', 'clear')).json.ClearerComment, null);
    });

    test('RequiresCommentOnRaise: a raise without comment → 400 naming RaiserComment, nothing stored', async () => {
      await createDefinition(t, 'GLOBAL.MustSay', { RequiresCommentOnRaise: true, DefaultRaiseComment: 'not enough' });
      for (const body of [undefined, {}, { RaiserComment: null }, { RaiserComment: ' ' }])
        assertError(await raiseRequest(t, 'GLOBAL.MustSay', body), 400, /RaiserComment.*required/);
      assert.equal((await t.req('GET', '/Event/MustSay1')).status, 404, 'no event was stored');
      const ok = await raise(t, 'GLOBAL.MustSay', { RaiserComment: 'because' });
      assert.deepEqual([ok.eventId, ok.RaiserComment], ['MustSay1', 'because']);
      // Clearing needs no comment here.
      assert.equal((await clearDefinition(t, 'GLOBAL.MustSay', 'clear')).status, 200);
    });

    test('RequiresCommentOnClear: every manual clear without comment → 400 naming ClearerComment, nothing changes', async () => {
      await createDefinition(t, 'GLOBAL.MustExplain', { RequiresCommentOnClear: true });
      await raise(t, 'GLOBAL.MustExplain');
      await raise(t, 'GLOBAL.MustExplain');
      assertError(await clearDefinition(t, 'GLOBAL.MustExplain', 'clear'), 400, /ClearerComment.*required/);
      assertError(
        await clearDefinition(t, 'GLOBAL.MustExplain', 'clearAllPending', {}),
        400,
        /ClearerComment.*required/,
      );
      assertError(await clearById(t, 'MustExplain2', { ClearerComment: '' }), 400, /ClearerComment.*required/);
      assert.equal((await getEvent(t, 'MustExplain1')).Status, 'Raised');
      assert.equal((await getEvent(t, 'MustExplain2')).Status, 'Pending');
      const res = await clearById(t, 'MustExplain2', { ClearerComment: 'duplicate' });
      assert.equal(res.status, 200, res.body);
      // With nothing Pending, clearAllPending clears nothing and so asks for no comment.
      assert.deepEqual((await clearDefinition(t, 'GLOBAL.MustExplain', 'clearAllPending')).json, { Cleared: [] });
    });

    test('a comment of 1000 characters is kept; 1001 → 400', async () => {
      await createDefinition(t, 'GLOBAL.Long');
      assertError(
        await raiseRequest(t, 'GLOBAL.Long', { RaiserComment: 'x'.repeat(1001) }),
        400,
        /RaiserComment.*1000/,
      );
      const e = await raise(t, 'GLOBAL.Long', { RaiserComment: 'x'.repeat(1000) });
      assert.equal(e.eventId, 'Long1', 'the refused raise took no sequence number');
      assert.equal(e.RaiserComment.length, 1000);
      assertError(
        await clearDefinition(t, 'GLOBAL.Long', 'clear', { ClearerComment: 'y'.repeat(1001) }),
        400,
        /ClearerComment.*1000/,
      );
      assertError(await clearById(t, 'Long1', { ClearerComment: 'y'.repeat(1001) }), 400, /ClearerComment.*1000/);
      assert.equal((await getEvent(t, 'Long1')).Status, 'Raised');
    });

    test('bad bodies → 400 naming the field, and nothing is stored', async () => {
      await createDefinition(t, 'GLOBAL.Strict');
      const cases: Array<[unknown, RegExp]> = [
        [{ Comment: 'x' }, /Unknown field "Comment"/],
        [{ RaiserComment: 'x', Status: 'Raised' }, /Unknown field "Status"/],
        [{ RaiserComment: 42 }, /Field "RaiserComment" must be a string/],
        [{ RaiserComment: ['x'] }, /Field "RaiserComment" must be a string/],
        [{ RaiserComment: 'two\nlines' }, /Field "RaiserComment" must be a single line/],
        [['x'], /JSON object/],
        ['text', /JSON object/],
      ];
      for (const [body, message] of cases) assertError(await raiseRequest(t, 'GLOBAL.Strict', body), 400, message);
      const notJson = await t.req('POST', '/Event/GLOBAL.Strict', {
        payload: '{bad',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(notJson.status, 400, notJson.body);
      assert.equal((await t.req('GET', '/Event/Strict1')).status, 404, 'no event was stored');

      await raise(t, 'GLOBAL.Strict');
      assertError(
        await clearDefinition(t, 'GLOBAL.Strict', 'clear', { RaiserComment: 'x' }),
        400,
        /Unknown field "RaiserComment"/,
      );
      assertError(
        await clearDefinition(t, 'GLOBAL.Strict', 'clearAllPending', { ClearerComment: 1 }),
        400,
        /ClearerComment/,
      );
      assertError(await clearById(t, 'Strict1', { Why: 'x' }), 400, /Unknown field "Why"/);
      assert.equal((await getEvent(t, 'Strict1')).Status, 'Raised', 'the refused clears changed nothing');
    });
  });
}
