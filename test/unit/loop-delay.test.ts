import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { loopDelayMonitor } from '../../src/loop-delay.ts';
import { holdLoop as block } from '../helpers/hold-loop.ts';
import { until } from '../helpers/processes.ts';

test('the loop delay reads about 0 while the loop is free and the length of a task that holds it', async () => {
  const loop = loopDelayMonitor();
  try {
    // Free: some firing comes on time, however busy the machine (waited for, not assumed within a fixed time).
    // Node's own histogram never reads below 9 ms here, its 10 ms interval included, so it would never get there.
    await until(() => loop.minMs() < 5, 'a firing of the timer less than 5 ms late on a free loop', 30_000);

    loop.reset();
    await sleep(30);
    block(80);
    await sleep(30);
    // The timer due during the block fires at its end: up to 80 ms late (less the part of an interval that had
    // already passed when the block began), never more than the block and a scheduling hiccup.
    assert.ok(loop.maxMs() >= 65, `max ${loop.maxMs()} ms after an 80 ms block`);
    assert.ok(loop.percentileMs(50) < loop.maxMs());
  } finally {
    loop.stop();
  }
});
