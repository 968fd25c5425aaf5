import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { connect } from '../../../src/agent/connection.ts';
import { type AgentMessage, encode, LineDecoder, OUTPUT_CHUNK_BYTES } from '../../../src/agent/protocol.ts';
import { AgentHub } from '../../../src/engine/agent-hub.ts';
import { INFLOW_PAUSE_BYTES } from '../../../src/engine/agent-inflow.ts';
import { waitFor, signal } from '../../helpers/wait.ts';

const MiB = 1024 * 1024;
const PS = 'GLOBAL.Flood';
/** Output messages the agent writes at once: ~36 MiB on the wire, far beyond what the kernel's buffers hold. */
const CHUNKS = 400;

/**
 * The server's end of the agent protocol reads an agent's output no faster than it is stored
 * (docs/architecture.md §7): over a real socket, an agent writes 400 chunks while storage holds the first. The
 * server stops reading (most of what the agent wrote stays unsent on its side), still counts the agent as heard
 * from however long that lasts (the hub's clock is virtual here: an hour passes), and sends it `pong`s although
 * its `ping` waits unread behind the output; once storage goes on, every chunk is stored, in order.
 */
describe('agent hub: backpressure from job-file storage to the agent', () => {
  let server: Server;
  let hub: AgentHub;
  let now = 1_000_000;
  const storage = signal();
  const stored: number[] = [];
  let agent: Socket;
  const fromServer: string[] = [];

  before(async () => {
    hub = new AgentHub(
      '/millrace',
      {
        authenticate: async () => ({ welcome: { type: 'welcome', killGraceMs: 1000, heartbeatMs: 15_000 } }),
        onMessage: async (_ps, m: AgentMessage) => {
          if (m.type !== 'output') return;
          await storage.done;
          stored.push(m.offset);
        },
        onConnect: () => {},
        onClose: () => {},
      },
      pino({ level: 'silent' }),
      () => now,
    );
    server = createServer();
    hub.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const upgraded = await connect({
      server: new URL(`http://127.0.0.1:${port}/millrace`),
      processServer: PS,
      secret: 'flood-secret',
      instance: 'flood',
    });
    agent = upgraded.socket;
    const decoder = new LineDecoder(
      (m) => fromServer.push((m as { type: string }).type),
      () => {},
    );
    agent.on('data', (chunk: Buffer) => decoder.push(chunk));
    if (upgraded.head.length > 0) decoder.push(upgraded.head);
  });
  after(async () => {
    storage.fire();
    agent?.destroy();
    hub?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  test('the agent waits while storage does; it is not taken for silent, and every chunk is stored in order', async () => {
    agent.write(encode({ type: 'hello', agent: 'flood', slots: 1, known: [] }));
    const data = Buffer.alloc(OUTPUT_CHUNK_BYTES, 0x61).toString('base64');
    for (let i = 0; i < CHUNKS; i++)
      agent.write(
        encode({ type: 'output', jobId: 1, attempt: 1, file: 'stdout.log', offset: i * OUTPUT_CHUNK_BYTES, data }),
      );
    agent.write(encode({ type: 'ping' }));
    const written = agent.writableLength;

    // Once the server stops reading, what the agent wrote stops leaving it (checked over 3 s without change).
    let last = -1;
    let steadySince = Date.now();
    const unsent = await waitFor(
      'the agent socket to stop draining',
      async () => {
        const n = agent.writableLength;
        if (n !== last) {
          last = n;
          steadySince = Date.now();
          return undefined;
        }
        return Date.now() - steadySince >= 3000 ? n : undefined;
      },
      60_000,
      200,
    );
    // Beyond the server's bound, only the kernel's socket buffers (a few MiB on loopback) took any of it.
    assert.ok(
      unsent > written / 2,
      `${((written - unsent) / MiB).toFixed(1)} MiB of ${(written / MiB).toFixed(1)} MiB left the agent ` +
        `while storage held (the server holds at most ${INFLOW_PAUSE_BYTES / 1024} KiB)`,
    );
    assert.deepEqual(stored, [], 'storage held');

    // An hour passes on the hub's clock: the agent still counts as heard from, and the server tells it it is there.
    now += 3_600_000;
    assert.equal(hub.lastSeen(PS), now);
    await waitFor(
      'a pong while the ping is unread',
      async () => (fromServer.includes('pong') ? true : undefined),
      30_000,
    );

    storage.fire();
    await waitFor('every chunk stored', async () => (stored.length === CHUNKS ? true : undefined), 120_000);
    assert.deepEqual(
      stored,
      Array.from({ length: CHUNKS }, (_, i) => i * OUTPUT_CHUNK_BYTES),
    );
    assert.equal(agent.writableLength, 0);
    // Read again: what the agent sends now is heard, and a ping answered.
    now += 1000;
    const pongs = fromServer.length;
    agent.write(encode({ type: 'ping' }));
    await waitFor(
      'the next ping read and answered',
      async () => (hub.lastSeen(PS) === now && fromServer.length > pongs ? true : undefined),
      30_000,
    );
  });
});
