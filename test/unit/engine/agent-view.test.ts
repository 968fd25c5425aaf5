import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentViewOf } from '../../../src/engine/server-status.ts';

// This node holds A (ready) and D (connected, not yet introduced); other nodes wrote B (alive node), C (dead node).
const local = {
  isConnected: (ps: string) => ps === 'GLOBAL.A' || ps === 'GLOBAL.D',
  isReady: (ps: string) => ps === 'GLOBAL.A',
  lastSeen: (ps: string) => (ps === 'GLOBAL.A' ? 100 : ps === 'GLOBAL.D' ? 110 : undefined),
};
const remote = [
  { processServer: 'GLOBAL.B', node: 'n2', seenAt: 200, ready: true, alive: true },
  { processServer: 'GLOBAL.C', node: 'n3', seenAt: 300, ready: true, alive: false },
  { processServer: 'GLOBAL.D', node: 'n2', seenAt: 50, ready: true, alive: true },
];

test("where the agents are: this node's connections first, then other nodes', ready only while their node beats", () => {
  const view = agentViewOf(local, remote);
  assert.deepEqual(
    ['GLOBAL.A', 'GLOBAL.B', 'GLOBAL.C', 'GLOBAL.D', 'GLOBAL.E'].map((ps) => [ps, view.isReady(ps), view.lastSeen(ps)]),
    [
      ['GLOBAL.A', true, 100],
      ['GLOBAL.B', true, 200],
      // Its node stopped beating: not ready, but when it was last heard of still counts towards its AgentTimeout.
      ['GLOBAL.C', false, 300],
      // Connected here (a stale row of another node does not make it ready before its hello).
      ['GLOBAL.D', false, 110],
      ['GLOBAL.E', false, undefined],
    ],
  );
});
