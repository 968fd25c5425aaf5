import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerStatusKeeper } from '../../../src/engine/server-status.ts';
import type { Store, StoredObject } from '../../../src/store/store.ts';
import { FakeClock } from '../../../src/time/clock.ts';

/**
 * The watchdog's side of a changed AgentTimeout (docs/architecture.md §7), on a virtual clock: a connected agent beat
 * at the pace it was welcomed with until it was told the new one, so a lowered timeout counts from when the watchdog
 * first read it, never from the agent's last ping at its old pace.
 */
test('a lowered AgentTimeout counts from when it was read: a healthy agent is not dropped, a silent one is', async () => {
  const clock = new FakeClock(0);
  const server: StoredObject = {
    uniqueId: 1,
    type: 'ProcessServer',
    key: 'GLOBAL.R',
    partition: 'GLOBAL',
    data: { AgentTimeout: 60 },
    protection: null,
    creationTime: 0,
    modificationTime: 0,
  };
  // Only what the watchdog reads: the process servers, and (for agents away) the jobs holding a slot.
  const store = {
    listObjects: async () => [server],
    jobs: { countActive: async () => [] },
  } as unknown as Store;
  let lastPing = 0;
  const hub = { isReady: () => true, lastSeen: () => lastPing };
  const keeper = new ServerStatusKeeper(
    store,
    () => hub,
    clock,
    async () => {},
  );
  keeper.started(0);
  const overdue = () => keeper.overdue(clock.now());

  clock.set(14_000); // pinging every 15 s as welcomed (a quarter of 60 s); last ping at 0
  assert.deepEqual(await overdue(), []);
  server.data = { AgentTimeout: 6 };
  assert.deepEqual(await overdue(), [], 'the last ping (14 s ago) is older than the new timeout, yet not dropped');
  clock.set(15_000);
  lastPing = 15_000; // told the new heartbeat, it pings every 1.5 s
  clock.set(20_900);
  assert.deepEqual(await overdue(), []);
  clock.set(21_100); // silent for longer than the new 6 s since its last ping
  assert.deepEqual(await overdue(), ['GLOBAL.R']);
});

test('a lowered AgentTimeout still ends a silent agent one new timeout after it was read', async () => {
  const clock = new FakeClock(0);
  const server = {
    uniqueId: 1,
    type: 'ProcessServer',
    key: 'GLOBAL.R',
    data: { AgentTimeout: 60 },
  } as unknown as StoredObject;
  const store = { listObjects: async () => [server], jobs: { countActive: async () => [] } } as unknown as Store;
  const keeper = new ServerStatusKeeper(
    store,
    () => ({ isReady: () => true, lastSeen: () => 0 }),
    clock,
    async () => {},
  );
  keeper.started(0);
  clock.set(10_000);
  assert.deepEqual(await keeper.overdue(clock.now()), []);
  server.data = { AgentTimeout: 6 };
  assert.deepEqual(await keeper.overdue(clock.now()), []);
  clock.set(16_100);
  assert.deepEqual(await keeper.overdue(clock.now()), ['GLOBAL.R'], 'the silent agent is lost 6 s after the change');
});
