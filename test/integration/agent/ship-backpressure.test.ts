import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Session } from '../../../src/agent/connection.ts';
import { type AgentMessage, LineDecoder } from '../../../src/agent/protocol.ts';
import { shipFile } from '../../../src/agent/shipper.ts';
import { waitFor } from '../../helpers/wait.ts';

const MiB = 1024 * 1024;
const SIZE = 32 * MiB;

/**
 * The agent reads a job's file no faster than it can send it (docs/architecture.md §7, backpressure): over a real
 * socket whose other end reads nothing, shipping a 32 MiB file stops after what the socket's buffers took, and
 * goes on to the last byte, in order, once the other end reads.
 */
describe('agent: shipping waits for the socket', () => {
  let dir: string;
  let server: Server;
  let far: Socket;
  let near: Socket;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-ship-'));
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const accepted = once(server, 'connection');
    near = connect(port, '127.0.0.1');
    await once(near, 'connect');
    [far] = (await accepted) as [Socket];
    far.pause();
  });
  after(async () => {
    near?.destroy();
    far?.destroy();
    await new Promise((resolve) => server?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  test('a 32 MiB file: read only as fast as the socket takes it, then all of it', async () => {
    const content = Buffer.alloc(SIZE);
    for (let i = 0; i < SIZE / 16; i++) content.write(`${String(i).padStart(15, '0')}\n`, i * 16, 'latin1');
    const path = join(dir, 'stdout.log');
    await writeFile(path, content);
    const session = new Session(
      near,
      Buffer.alloc(0),
      () => {},
      () => {},
    );
    let read = 0;
    const shipped = shipFile(
      (m: AgentMessage) => {
        if (m.type === 'output') read += Buffer.byteLength(m.data, 'base64');
        return session.send(m);
      },
      3,
      1,
      { name: 'stdout.log', path },
      0,
    );

    let last = -1;
    let steadySince = Date.now();
    const stalled = await waitFor(
      'shipping to stop while nothing is read',
      async () => {
        if (read !== last) {
          last = read;
          steadySince = Date.now();
          return undefined;
        }
        return Date.now() - steadySince >= 2000 ? read : undefined;
      },
      60_000,
      100,
    );
    assert.ok(stalled < SIZE / 2, `${(stalled / MiB).toFixed(1)} MiB read from the file while nothing was sent`);

    const received = Buffer.alloc(SIZE);
    let offsets = 0;
    const decoder = new LineDecoder(
      (m) => {
        const o = m as { offset: number; data: string };
        assert.equal(o.offset, offsets, 'chunks in order');
        offsets += Buffer.from(o.data, 'base64').copy(received, o.offset);
      },
      (why) => assert.fail(why),
    );
    far.on('data', (chunk: Buffer) => decoder.push(chunk));
    far.resume();
    assert.equal(await shipped, SIZE);
    await waitFor('every byte received', async () => (offsets === SIZE ? true : undefined), 60_000);
    const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    assert.equal(digest(received), digest(content));
  });
});
