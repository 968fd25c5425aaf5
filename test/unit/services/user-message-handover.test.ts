import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { DataOf } from '../../../src/model/data.ts';
import type { Principal } from '../../../src/security/privileges.ts';
import { handedOver, handOverBody, replyingFor } from '../../../src/services/user-message-handover.ts';

/** Forwarding and delegating a user message as pure changes of its data (services/user-message-handover.ts). */

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const who = (user: string, roles: string[] = []): Principal => ({ user, roles, grants: [] });
const waiting = (participants: string[]): DataOf<'UserMessage'> => ({
  Text: 'Go?',
  Status: 'ManualTask',
  Participants: participants,
  CreationTime: { ms: NOW - 1000, zone: 'UTC' },
});
const NAMES = ['ann', 'bob', 'cy', 'role:Ops', 'role:Approvers'];

test('a forward adds each name once, keeps every participant, and adds one History entry', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1 }),
      fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1 }),
      (before, to) => {
        const after = handedOver(waiting(before), 7, who('ann'), 'forward', { to, comment: null }, NOW);
        const participants = after.Participants ?? [];
        assert.deepEqual(participants.slice(0, before.length), before, 'the participants before stay, in order');
        assert.deepEqual(new Set(participants), new Set([...before, ...to]));
        assert.equal(participants.length, new Set(participants).size, 'nobody twice');
        assert.deepEqual(after.History, [
          { Time: { ms: NOW, zone: 'UTC' }, User: 'ann', Action: 'Forward', To: to, Comment: null },
        ]);
        assert.equal(after.Delegates, undefined, 'a forward delegates nothing');
      },
    ),
  );
});

test('a delegation lets the delegate reply for the caller; a participant replies for nobody; others may not', () => {
  const data = handedOver(waiting(['ann', 'role:Ops']), 7, who('ann'), 'delegate', { to: ['bob'], comment: 'x' }, NOW);
  assert.deepEqual(data.Participants, ['ann', 'role:Ops']);
  assert.deepEqual(data.Delegates, [{ Delegate: 'bob', For: 'ann' }]);
  assert.equal(replyingFor(who('bob'), data), 'ann');
  assert.equal(replyingFor(who('ann'), data), null);
  assert.equal(replyingFor(who('dan', ['Ops']), data), null);
  assert.equal(replyingFor(who('cy'), data), undefined);
  const again = handedOver(data, 7, who('ann'), 'delegate', { to: ['bob', 'role:Approvers'], comment: null }, NOW);
  assert.deepEqual(again.Delegates, [
    { Delegate: 'bob', For: 'ann' },
    { Delegate: 'role:Approvers', For: 'ann' },
  ]);
  assert.equal(replyingFor(who('eve', ['Approvers']), again), 'ann');
  assert.equal(again.History?.length, 2);
});

test('an answered message is not passed on (409); bodies are checked by the registry (400)', () => {
  const answered = { ...waiting(['ann']), Status: 'Completed' as const };
  assert.throws(
    () => handedOver(answered, 7, who('ann'), 'forward', { to: ['bob'], comment: null }, NOW),
    (e: { status?: number; message?: string }) => e.status === 409 && /answered already/.test(String(e.message)),
  );
  assert.deepEqual(handOverBody('forward', { To: [' bob ', 'bob'], Comment: '  ' }), { to: ['bob'], comment: null });
  for (const [body, message] of [
    [{ To: [] }, /at least one/],
    [{ To: ['bob'], Extra: 1 }, /Unknown field "Extra"/],
    [{ To: 'bob' }, /"To"/],
    [{}, /"To" is required/],
    [null, /./],
  ] as const)
    assert.throws(
      () => handOverBody('delegate', body),
      (e: { status?: number; message?: string }) => e.status === 400 && message.test(String(e.message)),
    );
});
