import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { actionApplies, notApplicableMessage } from '../../../src/domain/job-actions.ts';
import { FINAL } from '../../../src/domain/job-status.ts';
import { buildJobParameters, parameterEnvironment } from '../../../src/domain/parameters.ts';
import { decideRestart } from '../../../src/domain/restart.ts';
import { parseReturnCodeMap } from '../../../src/domain/return-codes.ts';

describe('job rules', () => {
  test('ReturncodeMapToCompleted: codes, ranges, open ranges, negatives', () => {
    const m = parseReturnCodeMap('0,3-5,100-,-7');
    for (const c of [0, 3, 4, 5, 100, 5000, -7]) assert.ok(m(c), String(c));
    for (const c of [1, 2, 6, 99, -1]) assert.ok(!m(c), String(c));
    const neg = parseReturnCodeMap('-5--2');
    assert.ok(neg(-3) && !neg(-1) && !neg(0));
  });

  test('restart behaviour: MaxStarts counts automatic restarts, RequestRestart asks', () => {
    assert.equal(decideRestart('Error', { Error: 'Restart' }, 0, 2), 'restart');
    assert.equal(decideRestart('Error', { Error: 'Restart' }, 2, 2), 'none');
    assert.equal(decideRestart('Error', { Error: 'RestartNoResubmit' }, 5, null), 'restart');
    assert.equal(decideRestart('Completed', { Error: 'Restart' }, 0, null), 'none');
    assert.equal(decideRestart('Killed', { Killed: 'RequestRestart' }, 9, 1), 'request');
  });

  test('actions apply only in their statuses, and the refusal names the status', () => {
    assert.ok(actionApplies('cancel', 'Held') && !actionApplies('cancel', 'Running'));
    assert.ok(actionApplies('kill', 'Running') && !actionApplies('kill', 'Queued'));
    for (const s of FINAL)
      assert.ok(actionApplies('restart', s) && !actionApplies('unknown', s) && !actionApplies('hold', s));
    assert.match(notApplicableMessage('kill', 7, 'Completed'), /Job:7 .*Completed/);
  });

  test('parameters: defaults, conversion, mandatory, and environment text', () => {
    const declared = [
      { Name: 'N', Direction: 'In', DataType: 'Number', DefaultValue: '3', Optional: false },
      { Name: 'S', Direction: 'In', DataType: 'String', DefaultValue: null, Optional: false },
      { Name: 'D', Direction: 'In', DataType: 'Date', DefaultValue: null, Optional: true },
      { Name: 'O', Direction: 'Out', DataType: 'String', DefaultValue: null, Optional: false },
    ] as const;
    const params = buildJobParameters(
      [...declared],
      [
        { Name: 'S', InValueString: 'x y' },
        { Name: 'N', InValueString: '7' },
      ],
      'GLOBAL.D',
      'UTC',
    );
    assert.deepEqual({ ...parameterEnvironment(params) }, { N: '7', S: 'x y' });
    assert.throws(() => buildJobParameters([...declared], [], 'GLOBAL.D', 'UTC'), /S is mandatory/);
    assert.throws(
      () =>
        buildJobParameters(
          [...declared],
          [
            { Name: 'S', InValueString: 'a' },
            { Name: 'N', InValueString: 'abc' },
          ],
          'GLOBAL.D',
          'UTC',
        ),
      /N is a Number/,
    );
    assert.throws(
      () =>
        buildJobParameters(
          [...declared],
          [
            { Name: 'S', InValueString: 'a' },
            { Name: 'O', InValueString: 'x' },
          ],
          'GLOBAL.D',
          'UTC',
        ),
      /Out parameter/,
    );
    assert.throws(
      () =>
        buildJobParameters(
          [...declared],
          [{ JobDefinitionParameter: 'JobDefinitionParameter:GLOBAL.Other.S', InValueString: 'a' }],
          'GLOBAL.D',
          'UTC',
        ),
      /JobDefinitionParameter:GLOBAL\.D\./,
    );
    const dated = buildJobParameters(
      [...declared],
      [
        { Name: 'S', InValueString: 'a' },
        { Name: 'D', InValueDate: '2026/03/29 02:30:00,000 Europe/Amsterdam' },
      ],
      'GLOBAL.D',
      'UTC',
    );
    assert.equal(parameterEnvironment(dated).D, '2026/03/29 03:30:00,000 Europe/Amsterdam');
  });
});
