import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CallProgress, criticalPath, type StepProgress } from '../../../src/domain/critical-path.ts';

/** The critical path of what is left of a chain: steps in turn, the calls of a step in parallel. */

const MIN = 60_000;
const T = 1_000_000_000_000;

const call = (definition: string, figureMs: number | undefined, extra: Partial<CallProgress> = {}): CallProgress => ({
  jobId: null,
  definition,
  status: null,
  runStart: null,
  runEnd: null,
  figureMs,
  ...extra,
});
const step = (name: string, calls: CallProgress[], extra: Partial<StepProgress> = {}): StepProgress => ({
  name,
  jobId: null,
  status: null,
  runStart: null,
  runEnd: null,
  calls,
  ...extra,
});

test('not started: the longest call of each step, one step after another', () => {
  const steps = [
    step('A', [call('D1', MIN), call('D5', 5 * MIN), call('D2', 2 * MIN)]),
    step('B', [call('D3', 3 * MIN)]),
  ];
  const r = criticalPath(steps, T, T);
  assert.equal(r?.end, T + 8 * MIN);
  assert.deepEqual(
    r?.path.map((s) => [s.step, s.definition, s.call, s.end]),
    [
      ['A', 'D5', 1, T + 5 * MIN],
      ['B', 'D3', 0, T + 8 * MIN],
    ],
  );
  // Expected to start later: everything shifts.
  assert.equal(criticalPath(steps, T + 10 * MIN, T)?.end, T + 18 * MIN);
});

test('a finished step counts its real end; running calls their start plus the figure, never before now', () => {
  const steps = [
    step('A', [], { status: 'Completed', runStart: T, runEnd: T + 2 * MIN }),
    step(
      'B',
      [
        call('D5', 5 * MIN, { status: 'Completed', runStart: T + 2 * MIN, runEnd: T + 3 * MIN }),
        call('D4', 4 * MIN, { status: 'Running', runStart: T + 2 * MIN }),
        call('D0', 0, { status: 'Disabled' }),
      ],
      { status: 'Waiting', runStart: T + 2 * MIN },
    ),
    step('C', [call('D3', 3 * MIN)]),
  ];
  assert.equal(criticalPath(steps, T, T + 4 * MIN)?.end, T + 9 * MIN, 'B ends at 6, C 3 later');
  // D4 is past its figure at 7: it may end any moment, so C is 3 minutes from now.
  const late = criticalPath(steps, T, T + 7 * MIN);
  assert.equal(late?.end, T + 10 * MIN);
  assert.deepEqual(
    late?.path.map((s) => [s.step, s.definition]),
    [
      ['B', 'D4'],
      ['C', 'D3'],
    ],
  );
});

test('a call left without a figure: no path', () => {
  assert.equal(criticalPath([step('A', [call('D1', MIN), call('New', undefined)])], T, T), undefined);
  // One that ended needs none.
  const ended = call('New', undefined, { status: 'Completed', runStart: T, runEnd: T + MIN });
  assert.equal(
    criticalPath([step('A', [call('D1', MIN), ended], { runStart: T, status: 'Waiting' })], T, T)?.end,
    T + MIN,
  );
});
