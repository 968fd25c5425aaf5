import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expressionProblem, normalizeReply, replyMatches } from '../../../src/domain/reply-match.ts';
import { substitute } from '../../../src/domain/substitute.ts';
import { isParticipant } from '../../../src/services/user-messages.ts';

test('replies are trimmed and runs of white space become one space', () => {
  assert.equal(normalizeReply('  a \t\n b  '), 'a b');
  assert.equal(normalizeReply(' \t '), '');
});

test('a reply must match the whole expression; ^a|b|c$ offers a choice', () => {
  assert.equal(replyMatches('Yes|No', 'Yes'), true);
  assert.equal(replyMatches('Yes|No', 'Yes please'), false);
  assert.equal(replyMatches('^a|b|c$', 'b'), true);
  assert.equal(replyMatches('\\d+', '42'), true);
  assert.equal(replyMatches('\\d+', '4x2'), false);
  assert.equal(replyMatches('\\s+', normalizeReply('   ')), false, 'a blank reply never matches');
});

test('a catastrophic expression is cut off after the time limit instead of hanging', () => {
  assert.equal(replyMatches('(a+)+b', `${'a'.repeat(40)}c`), 'timeout');
  assert.equal(replyMatches('(a+)+b', 'aab'), true, 'the same expression still answers ordinary replies');
});

test('invalid expressions are named, valid ones pass', () => {
  assert.match(expressionProblem('(unclosed') ?? '', /not a valid regular expression/);
  assert.equal(expressionProblem('Restart|NoRestart'), undefined);
  assert.equal(replyMatches('(unclosed', 'x'), false);
});

test('substitution variables: names without regard to case, unknown ones kept', () => {
  assert.equal(
    substitute('Job ${JobId} is ${newStatus}; ${nope}', { jobid: '7', NEWSTATUS: 'Error' }),
    'Job 7 is Error; ${nope}',
  );
});

test('participants are users or roles written role:<name>', () => {
  const p = { user: 'bob', roles: ['Operators'], grants: [] };
  assert.ok(isParticipant(p, ['bob']));
  assert.ok(isParticipant(p, ['alice', 'role:Operators']));
  assert.ok(!isParticipant(p, ['alice', 'role:Admins']));
  assert.ok(!isParticipant(p, ['Bob']), 'user names are exact');
});
