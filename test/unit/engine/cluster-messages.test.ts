import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ClusterMessage,
  MAX_PAYLOAD_BYTES,
  pack,
  unpack,
  wakeHere,
} from '../../../src/engine/cluster-messages.ts';
import type { FeedItem } from '../../../src/feed/feed-events.ts';

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

/** A job's status change as the feed sends it to the other nodes. */
const jobEvent = (jobId: number, cause = 'Dispatched'): FeedItem => [
  jobId,
  'GLOBAL.System_Sleep',
  'GLOBAL',
  null,
  'Queued',
  'Running',
  1_795_789_444_434,
  'UTC',
  'admin',
  cause,
];

const received = (payloads: string[]): ClusterMessage[] =>
  payloads.flatMap((p) => {
    assert.ok(Buffer.byteLength(p) <= MAX_PAYLOAD_BYTES, `a payload of ${Buffer.byteLength(p)} bytes`);
    const envelope = unpack(p);
    assert.equal(envelope?.from, 'node-a');
    return envelope?.messages ?? [];
  });

test('the feed events of a large commit reach the other nodes whole and in order, over several payloads', () => {
  const items = Array.from({ length: 900 }, (_, i) => jobEvent(i + 1));
  const wake: ClusterMessage = { k: 'wake', dispatch: true, wakeAt: [], overdueAt: [], runNow: [] };
  const { payloads, tooLarge } = pack('node-a', [wake, { k: 'feed', items }, { k: 'deadlines' }]);
  assert.deepEqual(tooLarge, []);
  assert.ok(payloads.length >= 8, `${payloads.length} payloads for 900 events`);
  const messages = received(payloads);
  assert.deepEqual(messages[0], wake);
  assert.deepEqual(messages.at(-1), { k: 'deadlines' });
  const feed = messages.slice(1, -1);
  assert.ok(feed.every((m) => m.k === 'feed'));
  assert.deepEqual(
    feed.flatMap((m) => (m.k === 'feed' ? m.items : [])),
    items,
  );
});

test('a message too large on its own is left out and returned; the rest still go', () => {
  const huge: ClusterMessage = { k: 'stop', jobIds: Array.from({ length: 2_000 }, (_, i) => 1_000_000 + i) };
  const hugeEvent = jobEvent(7, 'x'.repeat(MAX_PAYLOAD_BYTES));
  const { payloads, tooLarge } = pack('node-a', [
    huge,
    { k: 'feed', items: [jobEvent(6), hugeEvent, jobEvent(8)] },
    { k: 'servers' },
  ]);
  assert.deepEqual(tooLarge, [huge, { k: 'feed', items: [hugeEvent] }]);
  assert.deepEqual(received(payloads), [{ k: 'feed', items: [jobEvent(6), jobEvent(8)] }, { k: 'servers' }]);
});
