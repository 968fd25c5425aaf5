import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentSuite, startAgent } from '../../helpers/agent-peer.ts';
import { waitFor } from '../../helpers/wait.ts';

describe('agent: heartbeat', () => {
  const suite = agentSuite({ heartbeatMs: 200 });

  it('pings every heartbeatMs of the welcome and keeps a connection that answers', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir());
    // Timed from the first ping, so that the agent's start (seconds on a loaded machine) does not count.
    await waitFor('a first ping', async () => (peer.messages('ping').length >= 1 ? true : undefined));
    const started = Date.now();
    await waitFor('four pings', async () => (peer.messages('ping').length >= 4 ? true : undefined));
    // Three more pings: at the default heartbeat (15 s) 45 s; at the welcome's 200 ms, under a second (the bound
    // leaves a loaded machine many times that).
    assert.ok(Date.now() - started < 30_000, `three more pings took ${Date.now() - started} ms`);
    assert.equal(peer.connections, 1);
  });

  it('drops a connection on which the server stays silent, and connects again', async () => {
    const peer = suite.peer();
    peer.silent = true;
    const before = peer.connections;
    await peer.waitFor((r) => r.connection > before && r.message.type === 'hello', 'a new connection');
  });
});

describe('agent: a heartbeat changed while connected', () => {
  const suite = agentSuite({ heartbeatMs: 60_000 });

  it('pings at once and then at the new pace (the process server AgentTimeout was lowered)', async () => {
    const peer = suite.peer();
    await startAgent(peer, suite.dir());
    await peer.waitFor((r) => r.message.type === 'hello', 'hello');
    assert.equal(peer.messages('ping').length, 0, 'a minute between pings as welcomed');
    peer.send({ type: 'heartbeat', heartbeatMs: 200 });
    // Welcomed with a minute, only the new pace can bring three pings within the wait (bounded to catch a hang).
    await peer.waitFor(
      (r) => r.message.type === 'ping' && peer.messages('ping').length >= 3,
      'three pings at the new pace',
      30_000,
    );
    assert.equal(peer.connections, 1);
  });
});
