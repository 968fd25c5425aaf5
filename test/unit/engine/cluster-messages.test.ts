import assert from 'node:assert/strict';
import { test } from 'node:test';
import { wakeHere } from '../../../src/engine/cluster-messages.ts';

/**
 * What a node does with another node's wake hint (src/engine/cluster-messages.ts): the sender dispatches for its own
 * commit, so only a node holding agents runs a pass for it; the instants and the jobs to run now count everywhere.
 */

const hint = (dispatch: boolean) => ({
  k: 'wake' as const,
  dispatch,
  wakeAt: [1_000],
  overdueAt: [2_000],
  runNow: [7],
});

test('a node holding agents runs a pass for another node’s hint', () => {
  assert.deepEqual(wakeHere(hint(true), true), hint(true));
});

test('a node holding no agent keeps the hint’s instants and jobs to run now, but runs no pass for it', () => {
  assert.deepEqual(wakeHere(hint(true), false), hint(false));
});

test('a hint that asks for no pass asks for none anywhere', () => {
  assert.deepEqual(wakeHere(hint(false), true), hint(false));
  assert.deepEqual(wakeHere(hint(false), false), hint(false));
});
