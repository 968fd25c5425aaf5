import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type CallOutcome,
  decideStep,
  evalCondition,
  type Handler,
  parseCondition,
  stepStatus,
} from '../../../src/domain/chain-logic.ts';

const h = (Status: string, Action: string, GotoStep?: string): Handler => ({
  Status,
  Action,
  GotoStep: GotoStep ?? null,
});

describe('chain step status', () => {
  test('Completed when every call is Completed, Ignored or Skipped, and for no calls', () => {
    assert.equal(stepStatus([]), 'Completed');
    assert.equal(stepStatus(['Completed', 'Ignored', 'Skipped']), 'Completed');
    assert.equal(stepStatus(['Skipped']), 'Completed');
  });

  test('otherwise the worst present: Error > Killed > Unknown > Canceled', () => {
    assert.equal(stepStatus(['Completed', 'Canceled', 'Unknown', 'Killed', 'Error']), 'Error');
    assert.equal(stepStatus(['Canceled', 'Killed', 'Unknown']), 'Killed');
    assert.equal(stepStatus(['Canceled', 'Unknown', 'Completed']), 'Unknown');
    assert.equal(stepStatus(['Completed', 'Canceled']), 'Canceled');
  });
});

describe('chain step decision', () => {
  test('no handler: Completed continues, anything else marks the chain Error', () => {
    assert.deepEqual(decideStep(['Completed', 'Ignored'], [], []), { action: 'Continue' });
    assert.deepEqual(decideStep([], [], []), { action: 'Continue' });
    for (const s of ['Error', 'Killed', 'Canceled', 'Unknown'] as CallOutcome[])
      assert.deepEqual(decideStep(['Completed', s], [], []), { action: 'MarkError' }, s);
  });

  test('a Completed handler fires only when all calls are done (Ignored and Skipped count)', () => {
    const handlers = [h('Completed', 'MarkCompleted')];
    assert.deepEqual(decideStep(['Completed', 'Skipped', 'Ignored'], handlers, []), { action: 'MarkCompleted' });
    assert.deepEqual(decideStep(['Completed', 'Error'], handlers, []), { action: 'MarkError' });
  });

  test('an Error, Killed, Canceled or Unknown handler fires when at least one call has that status', () => {
    for (const s of ['Error', 'Killed', 'Canceled', 'Unknown'] as CallOutcome[]) {
      const handlers = [h(s, 'RestartStep')];
      assert.deepEqual(decideStep(['Completed', s], handlers, []), { action: 'RestartStep' }, s);
      assert.deepEqual(decideStep(['Completed'], handlers, []), { action: 'Continue' }, `${s} absent`);
    }
    // Not only the worst status: a Canceled handler fires next to an Error.
    assert.deepEqual(decideStep(['Error', 'Canceled'], [h('Canceled', 'Continue')], []), { action: 'Continue' });
  });

  test('Otherwise always fires, after the specific handlers of its list', () => {
    assert.deepEqual(decideStep(['Completed'], [h('Otherwise', 'MarkError')], []), { action: 'MarkError' });
    assert.deepEqual(decideStep(['Error'], [h('Otherwise', 'Continue')], []), { action: 'Continue' });
    const list = [h('Otherwise', 'MarkCompleted'), h('Error', 'RestartFromError')];
    assert.deepEqual(decideStep(['Error'], list, []), { action: 'RestartFromError' });
    assert.deepEqual(decideStep(['Killed'], list, []), { action: 'MarkCompleted' });
  });

  test('specific handlers fire in list order', () => {
    const list = [h('Killed', 'RequestRestart'), h('Error', 'RestartStep')];
    assert.deepEqual(decideStep(['Error', 'Killed'], list, []), { action: 'RequestRestart' });
  });

  test("the step's handlers come before the chain's, even the step's Otherwise", () => {
    const chain = [h('Error', 'GotoStep', 'Cleanup')];
    assert.deepEqual(decideStep(['Error'], [h('Error', 'Continue')], chain), { action: 'Continue' });
    assert.deepEqual(decideStep(['Error'], [h('Otherwise', 'RestartStep')], chain), { action: 'RestartStep' });
    assert.deepEqual(decideStep(['Error'], [h('Killed', 'Continue')], chain), { action: 'GotoStep', step: 'Cleanup' });
    assert.deepEqual(decideStep(['Completed'], [], [h('Otherwise', 'MarkCompleted')]), { action: 'MarkCompleted' });
  });

  test('each action maps to its decision', () => {
    for (const a of ['Continue', 'MarkCompleted', 'MarkError', 'RestartStep', 'RestartFromError', 'RequestRestart'])
      assert.deepEqual(decideStep(['Error'], [h('Error', a)], []), { action: a });
    assert.deepEqual(decideStep(['Error'], [h('Error', 'GotoStep', 'Two')], []), { action: 'GotoStep', step: 'Two' });
  });
});

describe('chain preconditions', () => {
  const parseError = (text: string): string => {
    try {
      parseCondition(text);
    } catch (e) {
      return (e as Error).message;
    }
    assert.fail(`${text} parsed`);
  };

  test('parse errors say what is wrong and where', () => {
    assert.match(parseError('Count'), /^expected an operator .*after "Count" at position 6/);
    assert.match(parseError('Count 5'), /expected an operator .*after "Count" but found "5" at position 7/);
    assert.match(parseError('Count = 5'), /"=" at position 7; equality is written ==/);
    assert.match(parseError(''), /empty/);
    assert.match(parseError('   '), /empty/);
    assert.match(parseError('(A == 1'), /expected "\)" \(for the "\(" at position 1\) after "1" at position 8/);
    assert.match(parseError('A == 1)'), /expected "and", "or" or the end after "1" but found "\)" at position 7/);
    assert.match(
      parseError('A =='),
      /expected a parameter name, number, quoted string, null, true or false after "==" at position 5/,
    );
    assert.match(parseError('A == 1 and'), /expected a comparison, "not" or "\(" after "and" at position 11/);
    assert.match(parseError('and A == 1'), /expected a comparison.* but found "and" at position 1/);
    assert.match(parseError("A == 'abc"), /unterminated string starting at position 6/);
    assert.match(parseError('A # 1'), /unexpected character "#" at position 3/);
    assert.match(parseError('A == B == C'), /found "==" at position 8/);
    assert.match(parseError('()'), /expected a comparison.* found "\)" at position 2/);
  });

  test('caps: 1000 characters, 32 levels of nesting', () => {
    assert.match(parseError(`A == '${'x'.repeat(1000)}'`), /1007 characters long; at most 1000/);
    assert.ok(parseCondition(`${'('.repeat(32)}A == 1${')'.repeat(32)}`));
    assert.match(parseError(`${'('.repeat(33)}A == 1${')'.repeat(33)}`), /nests deeper than 32 levels at position 33/);
    assert.ok(parseCondition(`${'not '.repeat(32)}A == 1`));
    assert.match(parseError(`${'NOT '.repeat(33)}A == 1`), /nests deeper than 32/);
  });

  const values = { Count: 10, Text: '10', Name: 'abc', Empty: '', Nothing: null, Dec: '2.5' };
  const cases: Array<[string, boolean]> = [
    // numbers, and numeric strings against numbers, compare as numbers
    ['Count == 10', true],
    ['Count > 9', true],
    ['Count >= 10.0', true],
    ['Count < -1', false],
    ['Text > 9', true],
    ['Text == 10', true],
    ['9 < Text', true],
    ['Dec <= 2.5', true],
    ['Count == "10"', true],
    // two strings compare as strings, even when both look numeric
    ["Text > '9'", false],
    ["Text == '10.0'", false],
    ["Name == 'abc'", true],
    ['Name == "ABC"', false],
    ['Name < "abd"', true],
    ['Name != "abc"', false],
    ['Name == 5', false],
    ["Name == 'it\\'s'", false],
    // null equals only null; ordered comparisons with null are false; unknown parameters are null
    ['Nothing == null', true],
    ['Nothing != null', false],
    ['Missing == NULL', true],
    ['Empty == null', false],
    ['Count != null', true],
    ['Nothing < 1', false],
    ['Nothing >= null', false],
    ['Nothing == 0', false],
    ['constructor == null', true],
    // true / false compare as the strings "true" / "false"
    ['Flag == true', false],
    ['"true" == TRUE', true],
    ['"false" != false', false],
    // not / and / or / parentheses, keywords in any case
    ['not Count == 10', false],
    ['NOT NOT Count == 10', true],
    ['Count == 10 and Name == "abc"', true],
    ['Count == 10 AND Name == "x"', false],
    ['Count == 1 or Name == "abc"', true],
    ['Count == 1 Or Name == "x"', false],
    ['Count == 1 or Name == "abc" and Empty == "x"', false], // and binds tighter than or
    ['(Count == 1 or Name == "abc") and Empty == ""', true],
    ['not (Count == 1 or Count == 2)', true],
    ['not Count == 1 and Count == 10', true],
  ];
  for (const [text, expected] of cases)
    test(`${text} → ${expected}`, () => assert.equal(evalCondition(parseCondition(text), values), expected));

  test('a parsed condition is data: the same tree evaluates against other values', () => {
    const c = parseCondition('Count > 5 and Name != null');
    assert.equal(evalCondition(c, { Count: 6, Name: 'x' }), true);
    assert.equal(evalCondition(c, { Count: '4', Name: 'x' }), false);
    assert.equal(evalCondition(c, { Count: 6 }), false);
  });
});
